"""Small graphs: broadcasting, chains, the SiLU and decomposed-RMSNorm patterns, symbolic
dimensions."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from models.errors import InputError
from tests.onnx.builders import F16, initializer, node, save, tasks, tiled


@pytest.mark.parametrize(("shape", "form"), [([64], "row"), ([1, 1, 64], "row"),
                                             ([2, 8, 1], "col"), ([1], "scalar"),
                                             ([], "scalar"), ([2, 8, 64], "none")])
def test_broadcast_forms(tmp_path: Path, shape: list[int], form: str) -> None:
    path = save(tmp_path, [node("Mul", ["x", "s"], ["y"])], {"x": [2, 8, 64]},
                {"y": [2, 8, 64]}, [initializer("s", shape)])
    [(kind, p)] = tasks(path)
    assert (kind, p["broadcast"], p["swap"], p["x"], p["y"]) == ("binary", form, 0, "x", "s")
    declared = {"row": (64,), "col": (16, 1), "scalar": (1,), "none": (16, 64)}[form]
    assert tiled(path).tensors["s"].shape == declared


def test_the_broadcast_operand_may_come_first(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Sub", ["one", "x"], ["y"])], {"x": [16, 32]},
                {"y": [16, 32]}, [initializer("one", [], value=1.0)])
    [(kind, p)] = tasks(path)
    assert (p["x"], p["y"], p["broadcast"], p["swap"]) == ("x", "one", "scalar", 1)


def test_a_broadcast_neither_operand_matches_is_refused(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Add", ["a", "b"], ["c"])], {"a": [16, 1], "b": [1, 32]},
                {"c": [16, 32]})
    with pytest.raises(InputError) as caught:
        tasks(path)
    assert caught.value.rule == "ONNX" and "Add" in caught.value.message


def test_a_chain_orders_consumers_after_producers(tmp_path: Path) -> None:
    path = save(tmp_path, [node("MatMul", ["x", "w"], ["h"], name="fc"),
                           node("Add", ["h", "b"], ["hb"], name="bias"),
                           node("Relu", ["hb"], ["y"], name="act")],
                {"x": [64, 64]}, {"y": [64, 128]},
                [initializer("w", [64, 128]), initializer("b", [128])])
    problem = tiled(path)
    assert {n: t.role for n, t in problem.tensors.items()} == {
        "x": "input", "w": "input", "h": "temp", "b": "input", "hb": "temp", "y": "output"}
    assert ("fc.st.m0.n0", "bias.ldX.b0") in problem.after
    assert ("bias.st.b0", "act.ldX.b0") in problem.after


def test_silu_pattern_is_one_activation(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Sigmoid", ["x"], ["s"]), node("Mul", ["s", "x"], ["y"])],
                {"x": [32, 64]}, {"y": [32, 64]})
    assert [(k, p["fn"], p["x"], p["out"]) for k, p in tasks(path)] == [
        ("elementwise", "silu", "x", "y")]


def test_a_sigmoid_used_elsewhere_is_not_fused(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Sigmoid", ["x"], ["s"]), node("Mul", ["x", "s"], ["y"])],
                {"x": [32, 64]}, {"y": [32, 64], "s": [32, 64]})
    assert [(k, p.get("fn")) for k, p in tasks(path)] == [("elementwise", "sigmoid"),
                                                         ("binary", "mul")]


def _rmsnorm_nodes(step: str) -> list:
    head = [node("Pow", ["x", "two"], ["sq"]),
            node("ReduceMean", ["sq"], ["ms"], axes=[-1], keepdims=1),
            node("Add", ["ms", "eps"], ["v"]), node("Sqrt", ["v"], ["r"])]
    if step == "div":
        middle = [node("Div", ["x", "r"], ["n"])]
    elif step == "reciprocal":
        middle = [node("Reciprocal", ["r"], ["i"]), node("Mul", ["x", "i"], ["n"])]
    else:
        middle = [node("Div", ["one", "r"], ["i"]), node("Mul", ["i", "x"], ["n"])]
    return [*head, *middle, node("Mul", ["n", "w"], ["y"], name="norm")]


@pytest.mark.parametrize("step", ["div", "reciprocal", "one-over"])
def test_decomposed_rmsnorm_is_one_rmsnorm(tmp_path: Path, step: str) -> None:
    path = save(tmp_path, _rmsnorm_nodes(step), {"x": [1, 16, 64]}, {"y": [1, 16, 64]},
                [initializer("two", [], value=2.0), initializer("eps", [], value=1e-5),
                 initializer("one", [], value=1.0), initializer("w", [64])])
    [(kind, p)] = tasks(path)
    assert (kind, p["x"], p["weight"], p["out"], p["rows"], p["cols"]) == (
        "rmsnorm", "x", "w", "y", 16, 64)
    assert p["eps"] == pytest.approx(1e-5, rel=1e-2)  # an f16 constant, rounded


def test_a_mean_over_another_axis_is_no_rmsnorm(tmp_path: Path) -> None:
    nodes = _rmsnorm_nodes("div")
    nodes[1] = node("ReduceMean", ["sq"], ["ms"], axes=[0], keepdims=1)
    path = save(tmp_path, nodes, {"x": [16, 64]}, {"y": [16, 64]},
                [initializer("two", [], value=2.0), initializer("eps", [], value=1e-5),
                 initializer("w", [64])])
    with pytest.raises(InputError) as caught:
        tasks(path)
    assert "Pow" in caught.value.message and "not supported" in caught.value.message


def test_symbolic_dimensions_take_their_values(tmp_path: Path) -> None:
    path = save(tmp_path, [node("MatMul", ["x", "w"], ["h"]), node("Relu", ["h"], ["y"])],
                {"x": ["batch", "seq", 64]}, {"y": ["batch", "seq", 32]},
                [initializer("w", [64, 32])])
    assert tasks(path, batch=1, seq=128)[0][1]["M"] == 128
    assert tasks(path, batch=2, seq=16)[1][1]["rows"] == 32


@pytest.mark.parametrize(("dims", "says"), [
    ({"batch": 1}, "symbolic dimension 'seq' (of input 'x') has no value: give it with "
                   "--dim seq=VALUE"),
    ({"batch": 1, "seq": 4, "heads": 2}, "--dim heads: the model has no symbolic dimension"),
])
def test_missing_and_unknown_dimensions_are_refused(tmp_path: Path, dims: dict[str, int],
                                                    says: str) -> None:
    path = save(tmp_path, [node("Relu", ["x"], ["y"])], {"x": ["batch", "seq", 64]},
                {"y": ["batch", "seq", 64]})
    with pytest.raises(InputError) as caught:
        tasks(path, **dims)
    assert caught.value.rule == "DIM" and says in caught.value.message


def test_a_shape_that_stays_dynamic_is_refused(tmp_path: Path) -> None:
    # the Reshape's target shape is a graph input: nothing to infer the shape from
    graph = helper.make_graph(
        [node("Reshape", ["x", "shape"], ["r"]), node("Relu", ["r"], ["y"])], "dyn",
        [helper.make_tensor_value_info("x", F16, [4, 64]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", F16, None)])
    path = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(graph), path)
    with pytest.raises(InputError) as caught:
        tasks(str(path))
    assert caught.value.rule == "SHAPE" and "'r'" in caught.value.message
