"""ONNX models through the commands: refusals are one line and exit 2; a decoder block
laid out the way exporters write it goes through ``solve`` unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.onnx import SUPPORTED
from schedsearch.cli import main
from tests.onnx.builders import F32, initializer, node, save

HIDDEN, HEADS, HEAD_DIM, FFN = 128, 2, 64, 256


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def decoder_block(tmp: Path) -> str:
    """One decoder block as exporters lay it out: the RMSNorm decomposed (Pow, ReduceMean,
    Add, Sqrt, Div, Mul), projections as MatMul, heads split by Reshape + Transpose, K
    transposed for the scores, a scale by Div, Softmax, heads merged back by Transpose +
    Reshape, residual adds, the contrib SimplifiedLayerNormalization, SiLU as
    Mul(x, Sigmoid(x)); the sequence length symbolic."""
    split = [1, -1, HEADS, HEAD_DIM]
    nodes = [
        node("Pow", ["x", "two"], ["sq"]), node("ReduceMean", ["sq"], ["ms"], axes=[-1]),
        node("Add", ["ms", "eps"], ["ve"]), node("Sqrt", ["ve"], ["rt"]),
        node("Div", ["x", "rt"], ["xn"]), node("Mul", ["xn", "norm1.weight"], ["h"]),
        *[node("MatMul", ["h", f"w{p}"], [p]) for p in "qkv"],
        *[node("Reshape", [p, "split"], [f"{p}4"]) for p in "qkv"],
        node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
        node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
        node("MatMul", ["qt", "kt"], ["scores"]), node("Div", ["scores", "scale"], ["scaled"]),
        node("Softmax", ["scaled"], ["probs"], axis=-1),
        node("MatMul", ["probs", "vt"], ["ctx"]),
        node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        node("Reshape", ["ctx_t", "merge"], ["ctx2"]), node("MatMul", ["ctx2", "wo"], ["o"]),
        node("Add", ["x", "o"], ["h2"]),
        node("SimplifiedLayerNormalization", ["h2", "norm2.weight"], ["h3"],
             domain="com.microsoft", epsilon=1e-6, axis=-1),
        node("MatMul", ["h3", "wg"], ["g"]), node("Sigmoid", ["g"], ["sg"]),
        node("Mul", ["g", "sg"], ["act"]), node("MatMul", ["h3", "wu"], ["u"]),
        node("Mul", ["act", "u"], ["m"]), node("MatMul", ["m", "wd"], ["d"]),
        node("Add", ["h2", "d"], ["y"])]
    inits = [initializer("two", [], value=2.0), initializer("eps", [], value=1e-6),
             initializer("scale", [], value=8.0),
             initializer("split", [4], 7, split), initializer("merge", [3], 7, [1, -1, HIDDEN]),
             initializer("norm1.weight", [HIDDEN]), initializer("norm2.weight", [HIDDEN]),
             *[initializer(f"w{p}", [HIDDEN, HIDDEN]) for p in "qkvo"],
             initializer("wg", [HIDDEN, FFN]), initializer("wu", [HIDDEN, FFN]),
             initializer("wd", [FFN, HIDDEN])]
    return save(tmp, nodes, {"x": [1, "seq", HIDDEN]}, {"y": [1, "seq", HIDDEN]}, inits,
                name="block")


def test_decoder_block_solves_and_verifies(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    model = decoder_block(tmp_path)
    out = tmp_path / "s.json"
    # a short limit: the test reads the import and a legal schedule, not its quality
    code, _, err = run(capsys, "solve", model, "--dim", "seq=32", "-o", str(out),
                       "--time-limit", "0.5", "--verify")
    assert code == 0, err
    assert "verify: legal" in err
    schedule = json.loads(out.read_text())
    kinds = sorted({task["kind"] for task in schedule["problem"]["tasks"].values()})
    assert kinds == ["binary", "elementwise", "gemm", "rmsnorm", "softmax", "transpose"]
    silu = [t for t in schedule["problem"]["tasks"].values() if t["kind"] == "elementwise"]
    assert [t["params"]["fn"] for t in silu] == ["silu"]


def test_tile_and_bound_take_onnx(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    model = decoder_block(tmp_path)
    code, out, err = run(capsys, "tile", model, "--dim", "seq=16", "-o",
                         str(tmp_path / "p.json"), "--target", "hexagon-v79")
    assert code == 0, err
    assert "on hexagon-v79" in out
    code, out, err = run(capsys, "bound", model, "--dim", "seq=16")
    assert code == 0 and out.startswith("lower bound:"), err


def test_an_unsupported_node_is_one_line_naming_it(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    model = save(tmp_path, [node("Relu", ["x"], ["h"]), node("Erf", ["h"], ["y"], name="e1")],
                 {"x": [8, 8]}, {"y": [8, 8]})
    code, out, err = run(capsys, "tile", model, "-o", str(tmp_path / "p.json"))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "node 'e1': op type 'Erf' is not supported; supported: " in err
    assert ", ".join(SUPPORTED) in err
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(("argv", "says"), [
    ((), "symbolic dimension 'seq' (of input 'x') has no value: give it with --dim seq=VALUE"),
    (("--dim", "seq=8", "--dim", "len=4"), "--dim len: the model has no symbolic dimension"),
])
def test_dimension_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            argv: tuple[str, ...], says: str) -> None:
    model = decoder_block(tmp_path)
    code, _, err = run(capsys, "solve", model, "-o", str(tmp_path / "s.json"), *argv)
    assert code == 2 and err.count("\n") == 1 and says in err


def test_dim_is_refused_for_a_workload_file(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    code, _, err = run(capsys, "bound", "gemm-rmsnorm-v75", "--dim", "seq=8")
    assert code == 2 and "--dim applies to ONNX models only" in err


def test_an_f32_product_runs_in_f16_on_a_matrix_engine_without_f32(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = save(tmp_path, [node("MatMul", ["x", "w"], ["y"], name="mm")], {"x": [32, 32]},
                 {"y": [32, 32]}, [initializer("w", [32, 32], F32)], dtype=F32)
    code, out, _ = run(capsys, "tile", model)
    problem = json.loads(out)
    assert code == 0
    assert [(t["kind"], t["params"].get("dtype"), t["params"].get("to")) for t in
            problem["tasks"].values()] == [("cast", "f32", "f16"), ("gemm", "f16", None),
                                           ("cast", "f16", "f32")]
    assert problem["tensors"]["w"]["dtype"] == "f16" and problem["tensors"]["y"]["dtype"] == "f32"


def test_an_f32_product_of_two_activations_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = save(tmp_path, [node("Relu", ["z"], ["r"]), node("MatMul", ["x", "r"], ["y"])],
                 {"x": [32, 32], "z": [32, 32]}, {"y": [32, 32]}, dtype=F32)
    code, _, err = run(capsys, "tile", model)
    assert code == 2 and err.count("\n") == 1 and "f32 product of two activations" in err


def test_import_writes_the_workload_and_prints_the_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w.toml"
    code, printed, _ = run(capsys, "import", decoder_block(tmp_path), "--dim", "seq=64",
                           "-o", str(out))
    assert code == 0 and "ONNX op type" in printed and "Softmax" in printed
    again, _, err = run(capsys, "tile", str(out))
    assert again == 0, err


def test_import_refuses_an_unknown_op_unless_told_to_price_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = save(tmp_path, [node("Erf", ["x"], ["y"], name="e1")], {"x": [8, 8]}, {"y": [8, 8]})
    out = tmp_path / "w.toml"
    code, _, err = run(capsys, "import", model, "-o", str(out))
    assert code == 2 and err.count("\n") == 1 and "'e1'" in err and not out.exists()
    code, printed, _ = run(capsys, "import", model, "--unknown", "vector", "-o", str(out))
    assert code == 0 and "Erf" in printed and "vector pass (--unknown vector) 1" in printed
    assert 'kind = "vector"' in out.read_text()
