"""QDQ graphs (ONNX Runtime's static quantisation): int8 products and dequantised weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from models.onnx.lower import UNUSED, import_onnx
from tests.onnx.builders import F32, node, save, tasks, tiled

I8, U8 = TensorProto.INT8, TensorProto.UINT8


def _int(name: str, shape: list[int], dtype: int = I8) -> onnx.TensorProto:
    array = np.zeros(shape, dtype=np.int8 if dtype == I8 else np.uint8)
    return helper.make_tensor(name, dtype, shape, array.tobytes(), raw=True)


def _scale(name: str) -> onnx.TensorProto:
    return helper.make_tensor(name, F32, [], [0.05])


def _qdq_product(tmp: Path, *, act: int = I8, requantise: bool = True,
                 other_reader: bool = False) -> str:
    """``y = DQ(Q(DQ(Q(x)) @ DQ(W)))``, ONNX Runtime's QDQ form of a quantised MatMul:
    the activation ``x`` [64, 96] quantised to ``act``, W [96, 160] int8."""
    nodes = [node("QuantizeLinear", ["x", "s", "zx"], ["xq"], name="qx"),
             node("DequantizeLinear", ["xq", "s", "zx"], ["xd"], name="dqx"),
             node("DequantizeLinear", ["w", "s", "zw"], ["wd"], name="dqw"),
             node("MatMul", ["xd", "wd"], ["p"], name="mm")]
    if requantise:
        nodes += [node("QuantizeLinear", ["p", "s", "zw"], ["pq"], name="qp"),
                  node("DequantizeLinear", ["pq", "s", "zw"], ["y"], name="dqp")]
    else:
        nodes += [node("Relu", ["p"], ["y"], name="relu")]
    outputs = {"y": [64, 160]}
    if other_reader:
        nodes.append(node("Relu", ["xd"], ["r"], name="relu_x"))
        outputs["r"] = [64, 96]
    return save(tmp, nodes, {"x": [64, 96]}, outputs,
                [_scale("s"), _int("zx", [], act), _int("zw", []), _int("w", [96, 160])],
                dtype=F32)


def test_a_qdq_product_runs_in_int8_on_the_matrix_engine(tmp_path: Path) -> None:
    """Quantised activation and weight, quantised result: one int8 GEMM reading the
    quantised activation and the stored weight, writing the quantised result; only the
    quantisation of the input and the dequantisation of the result are passes of their own."""
    path = _qdq_product(tmp_path)
    found = tasks(path)
    assert [(kind, p["dtype"], p.get("to")) for kind, p in found] == [
        ("cast", "f32", "i8"), ("gemm", "i8", None), ("cast", "i8", "f32")]
    gemm = found[1][1]
    assert (gemm["a"], gemm["b"], gemm["out"], gemm["b_bits"]) == ("xq", "w", "pq", 0)
    assert (gemm["M"], gemm["N"], gemm["K"]) == (64, 160, 96)
    problem = tiled(path)
    assert problem.tensors["w"].dtype == problem.tensors["pq"].dtype == "i8"
    assert not any(".dqB." in name for name in problem.ops)  # no weight dequantisation
    _, summary = import_onnx(path)
    assert summary.count(UNUSED) == 1  # the DequantizeLinear of the activation


def test_an_activation_dequantisation_stays_for_its_other_readers(tmp_path: Path) -> None:
    kinds = [(kind, p.get("to")) for kind, p in tasks(_qdq_product(tmp_path,
                                                                    other_reader=True))]
    assert kinds.count(("gemm", None)) == 1
    assert ("cast", "f32") in kinds  # DequantizeLinear(xq) for the Relu that reads it


def test_a_product_not_quantised_back_dequantises_its_weight(tmp_path: Path) -> None:
    """Without the QuantizeLinear after it the product's result is f32: no int8 GEMM; the
    weight streams at 8 bits and is dequantised, and the product runs in f16."""
    found = tasks(_qdq_product(tmp_path, requantise=False))
    gemms = [p for kind, p in found if kind == "gemm"]
    assert [(p["dtype"], p["b_bits"], p["b"]) for p in gemms] == [("f16", 8, "w")]


def test_a_uint8_activation_is_not_an_int8_product(tmp_path: Path) -> None:
    """uint8 activations (ONNX Runtime's QUInt8) with int8 weights: the gemm kind has one
    element type for A and B, so the product dequantises as without requantisation."""
    found = tasks(_qdq_product(tmp_path, act=U8))
    assert [(p["dtype"], p["b_bits"]) for kind, p in found if kind == "gemm"] == [("f16", 8)]
