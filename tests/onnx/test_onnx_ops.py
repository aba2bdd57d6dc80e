"""Each supported ONNX op alone: the task it becomes, its shapes and its tensor roles."""

from __future__ import annotations

from pathlib import Path

import pytest
from onnx import TensorProto

from tests.onnx.builders import F16, F32, initializer, node, save, tasks, tiled


def test_matmul_with_a_weight_flattens_leading_dimensions(tmp_path: Path) -> None:
    path = save(tmp_path, [node("MatMul", ["x", "w"], ["y"])], {"x": [2, 64, 96]},
                {"y": [2, 64, 160]}, [initializer("w", [96, 160])])
    [(kind, p)] = tasks(path)
    assert kind == "gemm"
    assert (p["M"], p["N"], p["K"], p["batch"], p["a"], p["b"], p["out"]) == (
        128, 160, 96, 1, "x", "w", "y")
    problem = tiled(path)
    roles = {name: t.role for name, t in problem.tensors.items()}
    assert roles == {"x": "input", "w": "input", "y": "output"}
    assert problem.tensors["x"].shape == (128, 96)


def test_batched_matmul(tmp_path: Path) -> None:
    path = save(tmp_path, [node("MatMul", ["a", "b"], ["c"])], {"a": [1, 4, 32, 64],
                "b": [1, 4, 64, 48]}, {"c": [1, 4, 32, 48]})
    [(kind, p)] = tasks(path)
    assert (kind, p["batch"], p["M"], p["N"], p["K"]) == ("gemm", 4, 32, 48, 64)
    problem = tiled(path)
    assert problem.tensors["b"].shape == (4 * 64, 48)
    assert problem.tasks["MatMul_0"].space == ((0, 128), (0, 48), (0, 64))


@pytest.mark.parametrize(("trans_a", "trans_b"), [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_gemm_transposes(tmp_path: Path, trans_a: int, trans_b: int) -> None:
    a = [96, 64] if trans_a else [64, 96]
    b = [160, 96] if trans_b else [96, 160]
    path = save(tmp_path, [node("Gemm", ["a", "b"], ["c"], transA=trans_a, transB=trans_b)],
                {"a": a}, {"c": [64, 160]}, [initializer("b", b)])
    [(kind, p)] = tasks(path)
    assert (p["M"], p["N"], p["K"], p["trans_a"], p["trans_b"]) == (64, 160, 96, trans_a,
                                                                     trans_b)
    assert tiled(path).tensors["b"].shape == tuple(b)


def test_gemm_bias_is_a_row_broadcast_add(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Gemm", ["a", "b", "bias"], ["c"], name="fc")], {"a": [64, 96]},
                {"c": [64, 160]}, [initializer("b", [96, 160]), initializer("bias", [160])])
    assert [(k, p.get("broadcast")) for k, p in tasks(path)] == [("gemm", None),
                                                                ("binary", "row")]
    problem = tiled(path)
    assert problem.tensors["fc.product"].role == "temp"
    assert problem.tensors["bias"].shape == (160,)


@pytest.mark.parametrize(("op", "fn"), [("Sigmoid", "sigmoid"), ("Relu", "relu"),
                                        ("Tanh", "tanh"), ("Gelu", "gelu")])
def test_activations(tmp_path: Path, op: str, fn: str) -> None:
    path = save(tmp_path, [node(op, ["x"], ["y"])], {"x": [3, 40, 72]}, {"y": [3, 40, 72]},
                opset=20)
    [(kind, p)] = tasks(path)
    assert (kind, p["fn"], p["rows"], p["cols"]) == ("elementwise", fn, 120, 72)


@pytest.mark.parametrize(("op", "fn"), [("Add", "add"), ("Sub", "sub"), ("Mul", "mul"),
                                        ("Div", "div")])
def test_binary_ops(tmp_path: Path, op: str, fn: str) -> None:
    path = save(tmp_path, [node(op, ["a", "b"], ["c"])], {"a": [16, 48], "b": [16, 48]},
                {"c": [16, 48]})
    [(kind, p)] = tasks(path)
    assert (kind, p["fn"], p["x"], p["y"], p["broadcast"], p["swap"]) == (
        "binary", fn, "a", "b", "none", 0)


def test_softmax_on_the_last_axis_only(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Softmax", ["x"], ["y"], axis=-1)], {"x": [2, 8, 64]},
                {"y": [2, 8, 64]})
    assert tasks(path) == [("softmax", tasks(path)[0][1])]
    assert tasks(path)[0][1]["rows"] == 16


def test_layernorm_with_and_without_bias(tmp_path: Path) -> None:
    path = save(tmp_path, [node("LayerNormalization", ["x", "g", "b"], ["y"], epsilon=1e-3)],
                {"x": [32, 64]}, {"y": [32, 64]}, [initializer("g", [64]),
                                                   initializer("b", [64])])
    [(kind, p)] = tasks(path)
    assert (kind, p["weight"], p["bias"], p["has_bias"], p["eps"]) == (
        "layernorm", "g", "b", 1, pytest.approx(1e-3))
    path = save(tmp_path, [node("LayerNormalization", ["x", "g"], ["y"])], {"x": [32, 64]},
                {"y": [32, 64]}, [initializer("g", [64])], name="nobias")
    assert tasks(path)[0][1]["has_bias"] == 0


@pytest.mark.parametrize(("op", "domain", "opset"), [
    ("RMSNormalization", "", 23), ("SimplifiedLayerNormalization", "com.microsoft", 17)])
def test_rmsnorm_ops(tmp_path: Path, op: str, domain: str, opset: int) -> None:
    path = save(tmp_path, [node(op, ["x", "w"], ["y"], domain=domain, epsilon=1e-5)],
                {"x": [1, 32, 64]}, {"y": [1, 32, 64]}, [initializer("w", [64])], opset=opset)
    [(kind, p)] = tasks(path)
    assert (kind, p["rows"], p["cols"], p["weight"], p["eps"]) == (
        "rmsnorm", 32, 64, "w", pytest.approx(1e-5))


def test_transpose_heads_to_front(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Transpose", ["x"], ["y"], perm=[0, 2, 1, 3])],
                {"x": [1, 16, 4, 32]}, {"y": [1, 4, 16, 32]})
    [(kind, p)] = tasks(path)
    assert (kind, p["shape"], p["perm"], p["x_cols"], p["out_cols"]) == (
        "transpose", "16,4,32", "1,0,2", 32, 32)
    assert len(tiled(path).ops) > 0


def test_cast(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)],
                {"x": [8, 64]}, {"y": [8, 64]}, dtype=F32, out_dtype=F16)
    [(kind, p)] = tasks(path)
    assert (kind, p["dtype"], p["to"]) == ("cast", "f32", "f16")
    problem = tiled(path)
    assert (problem.tensors["x"].dtype, problem.tensors["y"].dtype) == ("f32", "f16")


def test_views_are_no_ops(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Reshape", ["x", "s"], ["r"]),
                           node("Relu", ["r"], ["h"]),
                           node("Unsqueeze", ["h", "axes"], ["u"]),
                           node("Squeeze", ["u", "axes"], ["q"]),
                           node("Flatten", ["q"], ["y"], axis=1)],
                {"x": [4, 8, 64]}, {"y": [32, 64]},
                [initializer("s", [2], TensorProto.INT64, [32, 64]),
                 initializer("axes", [1], TensorProto.INT64, [0])])
    [(kind, p)] = tasks(path)
    assert (kind, p["x"], p["out"]) == ("elementwise", "x", "h")
    assert tiled(path).tensors["h"].role == "output"


def test_f16_types_are_read_from_the_model(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Relu", ["x"], ["y"])], {"x": [8, 8]}, {"y": [8, 8]}, dtype=F16)
    assert tasks(path)[0][1]["dtype"] == "f16"


@pytest.mark.parametrize(("cols", "dtype", "rows"), [(8192, F16, 64), (14336, F16, 32),
                                                     (8192, F32, 32), (4096, F32, 64),
                                                     (65536, F32, 4)])
def test_row_blocks_hold_at_most_the_bundled_layers_largest(tmp_path: Path, cols: int,
                                                            dtype: int, rows: int) -> None:
    """64 rows, as the bundled layers, halved while a block exceeds their largest one
    (64 rows of 8,192 f16 columns, 1 MiB)."""
    path = save(tmp_path, [node("Sigmoid", ["x"], ["y"])], {"x": [128, cols]},
                {"y": [128, cols]}, dtype=dtype)
    [(kind, p)] = tasks(path)
    assert (kind, p["block_rows"]) == ("elementwise", rows)
