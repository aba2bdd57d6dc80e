"""Issue #17 item 9: messages that say what is wrong, in one line, with the right rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.cli import main as schedcheck
from schedsearch.cli import main


@pytest.fixture(scope="module")
def schedules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two schedules of different workloads, and the schedule files' directory."""
    folder = tmp_path_factory.mktemp("schedules")
    found = {"dir": folder}
    for name in ("rmsnorm-gemm-chain-v75", "gemm-rmsnorm-v75"):
        found[name] = folder / f"{name}.json"
        assert main(["solve", name, "-o", str(found[name]), "--time-limit", "0.3"]) == 0
    return found


def _line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_solve_on_a_schedule_says_what_the_file_is_and_what_solve_wants(
        schedules: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    source = schedules["gemm-rmsnorm-v75"]
    assert main(["solve", str(source), "-o", str(tmp_path / "s.json")]) == 2
    line = _line(capsys)
    assert "'npu-schedule/1'" in line and "not a workload" in line and "npu-problem/1" in line


def test_solve_on_a_directory_calls_it_a_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", str(tmp_path), "-o", str(tmp_path / "s.json")]) == 2
    assert "is a directory" in _line(capsys)


def test_place_on_a_missing_file_is_rule_file(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["place", str(tmp_path / "nosuch.csv")]) == 2
    assert ": FILE: cannot read: No such file or directory" in _line(capsys)


@pytest.mark.parametrize("option", [["--capacity", "99999999999999999999999999"],
                                    ["--capacity", "-1"], ["--time-limit", "nan"],
                                    ["--time-limit", "0"], ["--seed", "-3"]])
def test_place_refuses_impossible_numbers_before_reading(
        option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "b.csv"
    csv.write_text("id,lower,upper,size\na,0,10,100\n")
    assert main(["place", str(csv), *option]) == 2
    assert f"argument {option[0]}" in _line(capsys)


def test_schedcheck_says_what_a_bad_count_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert schedcheck(["verify", "x.json", "--max-violations", "abc"]) == 2
    err = capsys.readouterr().err
    assert "not a whole number: 'abc'" in err and "_count" not in err


def test_trace_refuses_the_report_of_another_schedule(
        schedules: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chain = json.loads(schedules["rmsnorm-gemm-chain-v75"].read_text())
    other = schedules["gemm-rmsnorm-v75"]
    first_op = min(set(chain["ops"]) - set(json.loads(other.read_text())["ops"]))
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"legal": False, "violations": [
        {"code": "LANE_OVERLAP", "message": "made up", "ops": [first_op]}]}))
    capsys.readouterr()
    out = tmp_path / "t.json"
    assert main(["trace", str(schedules["rmsnorm-gemm-chain-v75"]), "-o", str(out),
                 "--violations", str(report)]) == 0
    capsys.readouterr()
    assert main(["trace", str(other), "-o", str(out), "--violations", str(report)]) == 2
    line = _line(capsys)
    assert "REPORT" in line and "another schedule" in line and first_op in line


def test_examples_show_prints_a_workload_that_reads_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from models.workload import example_names, load_workload

    name = example_names()[0]
    assert main(["examples", "--show", name]) == 0
    copy = tmp_path / f"{name}.toml"
    copy.write_text(capsys.readouterr().out)
    assert load_workload(str(copy)).tasks == load_workload(name).tasks
    assert main(["examples", "--show", "no-such-example"]) == 2
    assert name in _line(capsys)


def test_bound_marks_the_parts_that_bind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bound", "rmsnorm-gemm-chain-v75", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert main(["bound", "rmsnorm-gemm-chain-v75"]) == 0
    marked = [line.split()[0] for line in capsys.readouterr().out.splitlines()
              if line.endswith("(binds)")]
    assert marked == [part for part, value in figures["parts"].items()
                      if value == figures["value"]]
