"""The `schedsearch solve` command: exit codes, atomic output, --verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.formats import problem_to_dict
from schedsearch.cli import main
from tests.engine.problems import gemm_problem


def test_solving_a_bundled_example_writes_a_schedule_and_verifies(tmp_path: Path,
                                                                  capsys) -> None:
    out = tmp_path / "s.json"
    code = main(["solve", "rmsnorm-gemm-chain-v75", "-o", str(out), "--time-limit", "1",
                 "--verify"])
    assert code == 0
    assert json.loads(out.read_text())["format"] == "npu-schedule/1"
    err = capsys.readouterr().err
    assert "makespan" in err and "lower bound" in err and "busy share" in err
    assert "verify: legal" in err


def test_problem_file_without_a_target_is_exit_2_and_writes_nothing(tmp_path: Path,
                                                                    capsys) -> None:
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps(problem_to_dict(gemm_problem())))
    out = tmp_path / "s.json"
    assert main(["solve", str(problem), "-o", str(out)]) == 2
    assert not out.exists()
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_infeasible_problem_is_exit_1_naming_the_buffer(tmp_path: Path, capsys) -> None:
    document = problem_to_dict(gemm_problem(tile=1 << 24))
    document["meta"] = {"target": "hexagon-v75"}
    for op in document["ops"].values():
        for mode in op["modes"]:
            mode["lanes"] = {"DMA": 1} if "budgets" in mode else {"HMX": 1}
            mode["budgets"] = {"DDR_BW": 40} if "budgets" in mode else {}
    for buffer in document["buffers"].values():
        buffer["memory"] = "VTCM"
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps(document))
    out = tmp_path / "s.json"
    assert main(["solve", str(problem), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "FIT" in err and "g." in err and "INFEASIBLE" in err
    assert not out.exists()


def test_output_is_written_whole_or_not_at_all(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "s.json"
    out.write_text("previous")

    def broken_dumps(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(json, "dumps", broken_dumps)
    with pytest.raises(RuntimeError):
        main(["solve", "rmsnorm-gemm-chain-v75", "-o", str(out), "--time-limit", "0.5"])
    assert out.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_bad_option_value_is_exit_2(tmp_path: Path) -> None:
    assert main(["solve", "rmsnorm-gemm-chain-v75", "-o", str(tmp_path / "s.json"),
                 "--time-limit", "0"]) == 2
