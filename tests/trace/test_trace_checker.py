"""The trace against the real checker: the fixture is legal, and a report it writes loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import checker
from models.formats import schedule_from_dict
from schedsearch.cli import main
from schedsearch.trace import schedule_to_trace, violations_from_dict
from tests.trace.trace_fixture import SCHEDULE


def test_the_hand_made_fixture_is_legal() -> None:
    """Every other test here calls it a legal schedule; the checker must agree."""
    report = checker.verify(SCHEDULE)
    assert report.legal, report.to_dict()


def broken() -> dict[str, Any]:
    """v1 moved onto HVX 0 while v0 still holds it (and before its input is loaded)."""
    doc = json.loads(json.dumps(SCHEDULE))
    doc["ops"]["v1"].update(start=200, end=280)
    return doc


def test_every_checker_violation_becomes_instants_on_its_tracks() -> None:
    doc = broken()
    report = checker.verify(doc).to_dict()
    violations = violations_from_dict(report, "report.json")
    assert {v.code for v in violations} >= {"LANE_OVERLAP", "AFTER"}
    trace = schedule_to_trace(schedule_from_dict(doc), violations)
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 1}
    instants = [e for e in trace["traceEvents"] if e["ph"] == "i"]
    assert {e["name"] for e in instants} == {v.code for v in violations}
    overlap = sorted(names[e["tid"]] for e in instants
                     if e["name"] == "LANE_OVERLAP" and e["s"] == "t")
    assert overlap == ["HVX 0", "HVX 1"]  # v0 holds HVX 0; v1 holds HVX 0 and 1


def test_schedcheck_json_output_feeds_trace_violations(tmp_path: Path) -> None:
    schedule = tmp_path / "broken.json"
    schedule.write_text(json.dumps(broken()))
    report = tmp_path / "report.json"
    report.write_text(json.dumps(checker.verify_file(schedule).to_dict()))
    out = tmp_path / "trace.json"
    assert main(["trace", str(schedule), "-o", str(out), "--violations", str(report)]) == 0
    codes = {e["name"] for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "i"}
    assert "LANE_OVERLAP" in codes
