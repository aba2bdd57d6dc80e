"""Issue #17 items 2-6: absurd sizes, NaN, unwritable outputs, seeds, a problem solved for
another target. Each is one clean line and the documented exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker import verify
from models.ops import KINDS
from models.targets import load_target
from models.workload import MAX_OPS, example_names, load_workload, op_count, tile
from schedsearch.cli import main

GEMM = """name = "big"
target = "hexagon-v75"
[[tasks]]
name = "g"
kind = "gemm"
M = {M}
N = 512
K = 256
"""
RMSNORM = """name = "n"
target = "hexagon-v75"
[[tasks]]
name = "r"
kind = "rmsnorm"
rows = 64
cols = 64
eps = {eps}
"""


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("command", ["tile", "bound", "solve", "compare"])
def test_a_huge_workload_is_refused_before_tiling(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def no_tiling(*args: object) -> None:
        raise AssertionError("tiling started")

    monkeypatch.setattr("models.workload.ProblemBuilder", no_tiling)
    workload = tmp_path / "w.toml"
    workload.write_text(GEMM.format(M=10**12))
    out = ["-o", str(tmp_path / "s.json")] if command == "solve" else []
    assert main([command, str(workload), *out]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "SIZE" in line and "larger blocks" in line and "--max-ops" in line


def test_max_ops_raises_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = tmp_path / "w.toml"
    workload.write_text(GEMM.format(M=512))
    ops = op_count(load_workload(str(workload)), load_target("hexagon-v75"))
    assert main(["tile", str(workload), "--max-ops", str(ops - 1)]) == 2
    capsys.readouterr()
    assert main(["tile", str(workload), "--max-ops", str(ops)]) == 0
    assert len(json.loads(capsys.readouterr().out)["ops"]) == ops


@pytest.mark.parametrize("name", example_names())
def test_the_op_count_estimate_is_the_tiled_count(name: str) -> None:
    workload = load_workload(name)
    target = load_target(workload.target)
    assert op_count(workload, target) == len(tile(workload, target).ops)
    assert op_count(workload, target) <= MAX_OPS


def test_every_kind_estimates_its_op_count() -> None:
    assert all(callable(getattr(module, "op_count", None)) for module in KINDS.values())


@pytest.mark.parametrize("eps", ["nan", "inf", "-inf"])
def test_nan_and_infinity_in_a_workload_are_format(
        eps: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = tmp_path / "w.toml"
    workload.write_text(RMSNORM.format(eps=eps))
    out = tmp_path / "s.json"
    assert main(["solve", str(workload), "-o", str(out), "--verify"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "$.tasks[0].eps: FORMAT" in line
    assert not out.exists()


def test_a_number_too_large_for_a_float_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = tmp_path / "w.json"
    workload.write_text('{"name": "n", "target": "hexagon-v75", "tasks": [{"name": "r", '
                        '"kind": "rmsnorm", "rows": 64, "cols": 64, "eps": 1e999}]}')
    assert main(["tile", str(workload)]) == 2
    assert "1e999" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("argv", [
    ["tile", "gemm-rmsnorm-v75", "-o", "{nodir}/p.json"],
    ["solve", "gemm-rmsnorm-v75", "-o", "{nodir}/s.json"],
    ["place", "{csv}", "-o", "{nodir}/x.csv"],
    ["compare", "gemm-rmsnorm-v75", "--plot", "{nodir}/c.png"],
    ["compare", "gemm-rmsnorm-v75", "--plot", "{tmp}/c.nosuchformat"],
    ["tune", "gemm-rmsnorm-v75", "-o", "{nodir}/t.json"],
    ["select", "{tmp}/request.json", "--plans", "{tmp}", "-o", "{nodir}/r.json"],
    ["solve", "gemm-rmsnorm-v75", "-o", "/proc/s.json"],
    ["solve", "gemm-rmsnorm-v75", "-o", "{tmp}"],
])
def test_an_unwritable_output_is_refused_before_any_work(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("work started")

    for name in ("load_problem_input", "load_workload", "read_csv", "read_plans"):
        for module in ("solve", "compare", "tile", "tune", "place", "select"):
            monkeypatch.setattr(f"schedsearch.commands.{module}.{name}", no_work,
                                raising=False)
    places = {"nodir": str(tmp_path / "nodir"), "tmp": str(tmp_path),
              "csv": str(tmp_path / "b.csv")}
    assert main([part.format(**places) for part in argv]) == 2
    assert "argument" in _one_line(capsys.readouterr().err)


def test_a_seed_of_2_to_the_40_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.json"
    assert main(["solve", "rmsnorm-gemm-chain-v75", "-o", str(out), "--time-limit", "1",
                 "--seed", str(2**40)]) == 0
    document = json.loads(out.read_text())
    assert verify(document).legal and document["meta"]["seed"] == 2**40


@pytest.mark.parametrize("seed", ["-1", str(2**63), "abc"])
def test_a_seed_outside_int64_is_one_line(seed: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "rmsnorm-gemm-chain-v75", "-o", "s.json", "--seed", seed]) == 2
    assert "--seed" in _one_line(capsys.readouterr().err)


def test_a_problem_costed_for_another_target_is_refused_with_the_way_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem = tmp_path / "p.json"
    assert main(["tile", "gemm-rmsnorm-v75", "-o", str(problem)]) == 0
    capsys.readouterr()
    out = tmp_path / "s.json"
    assert main(["solve", str(problem), "--target", "hexagon-v68", "-o", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "TARGET" in line and "'hexagon-v75'" in line and "--target hexagon-v68" in line
    assert not out.exists()
    assert main(["bound", str(problem), "--target", "hexagon-v75"]) == 0


@pytest.mark.parametrize("command", [["solve", "rmsnorm-gemm-chain-v75"], ["place", "b.csv"],
                                     ["tune", "rmsnorm-gemm-chain-v75"]])
def test_a_command_without_a_stdout_form_refuses_dash(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([*command, "-o", "-"]) == 2
    assert "standard output" in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "-").exists()
