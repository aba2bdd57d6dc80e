"""No ONNX input gives a traceback: random small graphs of supported and unsupported op
types, symbolic and fixed dimensions and element types go through ``schedsearch import``
and ``schedsearch tile``, and each ends with exit 0 (imported, or tiled) or exit 2 (one
line saying why), never an exception."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from schedsearch.cli import main
from tests.fuzz._budget import examples

DTYPES = {"f16": TensorProto.FLOAT16, "f32": TensorProto.FLOAT, "i64": TensorProto.INT64,
          "bool": TensorProto.BOOL}
#: op type -> how many inputs it takes (supported ones, bookkeeping, unsupported ones)
OPS = {"Relu": 1, "Sigmoid": 1, "Softmax": 1, "Cast": 1, "Neg": 1, "Sqrt": 1, "Cos": 1,
       "Erf": 1, "Shape": 1, "IsNaN": 1, "Transpose": 1, "Identity": 1, "Add": 2, "Mul": 2,
       "MatMul": 2, "Div": 2, "Pow": 2, "Equal": 2, "Concat": 2, "Expand": 2, "Reshape": 2,
       "Unsqueeze": 2, "Gather": 2, "ReduceMean": 2, "Range": 3, "Where": 3, "Slice": 3}
DIMS = st.sampled_from([1, 2, 8, 64, "seq"])


@st.composite
def graphs(draw: st.DrawFn) -> tuple[onnx.ModelProto, list[str]]:
    """A graph of 1 to 6 nodes whose inputs are drawn among the values made so far, with
    an input of drawn shape and type, a few constants, and the ``--dim`` options."""
    rank = draw(st.integers(1, 3))
    shape = [draw(DIMS) for _ in range(rank)]
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    values = ["x"]
    inits = [numpy_helper.from_array(np.array(v), n) for n, v in
             (("c_int", draw(st.sampled_from([0, 1, -1, 2]))), ("c_two", np.float16(2.0)),
              ("c_axes", np.array([draw(st.sampled_from([-1, 0, 1]))])))]
    if draw(st.booleans()):
        inits.append(numpy_helper.from_array(np.zeros((64, 64), np.float16), "w"))
    values += [init.name for init in inits]
    nodes = []
    for i in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(sorted(OPS)))
        inputs = [draw(st.sampled_from(values)) for _ in range(OPS[op])]
        attrs: dict[str, object] = {}
        if op == "Cast":
            attrs["to"] = DTYPES[draw(st.sampled_from(sorted(DTYPES)))]
        elif op in ("Concat", "Softmax", "Gather"):
            attrs["axis"] = draw(st.sampled_from([-1, 0, 1]))
        elif op == "Transpose" and draw(st.booleans()):
            attrs["perm"] = draw(st.permutations(range(rank)))
        nodes.append(helper.make_node(op, inputs, [f"v{i}"], name=f"n{i}", **attrs))
        values.append(f"v{i}")
    out_type = helper.make_tensor_value_info(values[-1], DTYPES[dtype], None)
    graph = helper.make_graph(nodes, "random",
                              [helper.make_tensor_value_info("x", DTYPES[dtype], shape)],
                              [out_type], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    dims = ["--dim", f"seq={draw(st.sampled_from([1, 16, 128]))}"] if "seq" in shape else []
    return model, dims


def _exit_code(capsys, argv: list[str]) -> int:  # noqa: ANN001 (pytest's fixture)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2), (code, argv, out, err)
    if code == 2:
        assert err.count("\n") == 1, err
    return code


# capsys is read after every command, so what one example prints never reaches the next
@settings(max_examples=examples(2.0),
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(graph=(helper.make_model(helper.make_graph(
    [helper.make_node("Gather", ["x", "x"], ["v0"], name="n0")], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [8])],
    [helper.make_tensor_value_info("v0", TensorProto.FLOAT16, None)])), []))
@given(graph=graphs())
def test_no_onnx_graph_gives_a_traceback(tmp_path_factory, capsys,  # noqa: ANN001
                                         graph: tuple[onnx.ModelProto, list[str]]) -> None:
    model, dims = graph
    folder: Path = tmp_path_factory.mktemp("g")
    path = str(folder / "g.onnx")
    onnx.save(model, path)
    _exit_code(capsys, ["import", path, *dims, "-o", str(folder / "w.toml")])
    _exit_code(capsys, ["import", path, *dims, "--unknown", "vector",
                        "-o", str(folder / "v.toml")])
    _exit_code(capsys, ["tile", path, *dims, "-o", str(folder / "p.json")])
