"""`schedsearch trace` and `schedsearch plot`: exit codes, outputs, clean errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedsearch.cli import main
from tests.trace.trace_fixture import SCHEDULE


@pytest.fixture
def schedule_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(SCHEDULE))
    return path


def write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document))
    return path


def test_trace_writes_a_trace_with_every_op(schedule_file: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "trace.json"
    assert main(["trace", str(schedule_file), "-o", str(out)]) == 0
    trace = json.loads(out.read_text())
    slices = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == 1}
    assert slices == set(SCHEDULE["ops"])
    assert str(out) in capsys.readouterr().out


def test_trace_marks_the_violations_of_a_report(schedule_file: Path, tmp_path: Path) -> None:
    report = write(tmp_path / "report.json", {
        "legal": False, "stats": {},
        "violations": [{"code": "LANE_OVERLAP", "message": "two ops on HVX 0",
                        "ops": ["v0", "v1"], "buffers": [], "tensors": [], "time": 350}]})
    out = tmp_path / "trace.json"
    assert main(["trace", str(schedule_file), "-o", str(out), "--violations",
                 str(report)]) == 0
    instants = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "i"]
    assert {e["name"] for e in instants} == {"LANE_OVERLAP"}
    assert len(instants) == 2  # HVX 0 (v0 and v1) and HVX 1 (v1)


def test_plot_writes_a_png(schedule_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "gantt.png"
    assert main(["plot", str(schedule_file), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("command", ["trace", "plot"])
@pytest.mark.parametrize(("content", "complaint"), [
    ("{not json", "not valid JSON"),
    ('{"format": "npu-problem/1"}', "$.format"),
    ('{"format": "npu-schedule/1"}', "missing required key"),
])
def test_a_bad_schedule_is_one_line_and_exit_2_with_no_output(
        command: str, content: str, complaint: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "out.png"
    assert main([command, str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and complaint in err
    assert "Traceback" not in err
    assert not out.exists()


def test_a_malformed_report_is_exit_2_naming_the_report(
        schedule_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "report.json", {"violations": [{"code": "X"}]})
    out = tmp_path / "trace.json"
    assert main(["trace", str(schedule_file), "-o", str(out), "--violations",
                 str(report)]) == 2
    err = capsys.readouterr().err
    assert f"{report}: $.violations[0].message" in err
    assert not out.exists()


def test_an_existing_output_survives_a_failed_run(schedule_file: Path, tmp_path: Path) -> None:
    out = write(tmp_path / "trace.json", {"kept": True})
    missing = tmp_path / "no-such-report.json"
    assert main(["trace", str(schedule_file), "-o", str(out), "--violations",
                 str(missing)]) == 2
    assert json.loads(out.read_text()) == {"kept": True}


@pytest.mark.parametrize("command", ["trace", "plot"])
def test_an_unwritable_output_is_exit_2(command: str, schedule_file: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "missing" / ("out.json" if command == "trace" else "out.png")
    assert main([command, str(schedule_file), "-o", str(out)]) == 2
    assert "no such directory" in capsys.readouterr().err
