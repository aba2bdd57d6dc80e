"""``replay``: a measured run beside its schedule, the measured critical path, the plot."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from models.formats import Schedule, Target
from schedsearch.calibrate.measurements import MeasuredRun
from schedsearch.calibrate.replay import measured_schedule, replay
from schedsearch.calibrate.synthetic import TRUTH_BANDWIDTH, synthetic_run
from schedsearch.chains.critical import predecessors
from schedsearch.cli import main
from schedsearch.trace import schedule_to_trace


def _planned(schedule: Schedule) -> MeasuredRun:
    return MeasuredRun(schedule, {n: (p.start, p.end) for n, p in schedule.ops.items()},
                       "<plan>")


def _is_a_chain(run: MeasuredRun, path: list[str]) -> None:
    """Each op of the path waits for the one before it, which ended before it started."""
    before = predecessors(run.schedule, run.windows)
    for pred, succ in zip(path, path[1:], strict=False):
        assert pred in before[succ]
        assert run.windows[pred][1] <= run.windows[succ][0] + 1e-9
    assert run.windows[path[-1]][1] == max(end for _, end in run.windows.values())


def test_a_run_that_keeps_the_plan_has_no_difference(schedule: Schedule) -> None:
    run = _planned(schedule)
    result = replay(run)
    assert result.measured_makespan == result.schedule_makespan == schedule.makespan
    assert result.difference == 0
    _is_a_chain(run, result.critical_path)
    assert result.path_measured + result.path_gaps == pytest.approx(result.measured_makespan)


def test_an_op_slowed_on_the_critical_path_carries_the_difference(
        schedule: Schedule) -> None:
    last = max(schedule.ops, key=lambda n: (schedule.ops[n].end, n))
    windows = {n: (p.start, p.end) for n, p in schedule.ops.items()}
    windows[last] = (windows[last][0], windows[last][1] + 5000)
    result = replay(MeasuredRun(schedule, windows, "<slowed>"))
    assert result.difference == 5000
    assert result.critical_path[-1] == last
    (slowed,) = [op for op in result.ops if op.name == last]
    assert slowed.on_critical_path and slowed.measured - slowed.modelled >= 5000
    assert result.path_excess >= 5000


def test_a_simulated_run_on_a_slower_device_is_longer_and_its_path_is_a_chain(
        schedule: Schedule, truth: Target) -> None:
    run = synthetic_run(schedule, truth, bandwidth=TRUTH_BANDWIDTH, seed=0)
    result = replay(run)
    assert result.measured_makespan > result.schedule_makespan  # the truth is slower
    _is_a_chain(run, result.critical_path)
    on_path = {op.name for op in result.ops if op.on_critical_path}
    assert on_path == set(result.critical_path)
    assert result.path_measured + result.path_gaps == pytest.approx(result.measured_makespan)


def test_cli_prints_json_and_draws_both_timelines(tmp_path: Path, schedule: Schedule,
                                                  schedule_file: Path, truth: Target,
                                                  capsys) -> None:
    run = synthetic_run(schedule, truth, bandwidth=TRUTH_BANDWIDTH, seed=1)
    trace = tmp_path / "run.json"
    trace.write_text(json.dumps(schedule_to_trace(measured_schedule(run))))
    picture = tmp_path / "replay.png"
    assert main(["replay", str(schedule_file), str(trace), "--json",
                 "--plot", str(picture)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schedule_makespan"] == schedule.makespan
    assert document["measured_makespan"] == measured_schedule(run).makespan
    assert {op["name"] for op in document["ops"]} == set(schedule.ops)
    assert document["critical_path"] and document["path_share"] is not None
    assert picture.read_bytes().startswith(b"\x89PNG")
    assert main(["replay", str(schedule_file), str(trace)]) == 0
    assert "measured critical path" in capsys.readouterr().out


def test_cli_refuses_a_trace_of_another_schedule_in_one_line(
        tmp_path: Path, schedule: Schedule, schedule_file: Path, capsys) -> None:
    other = replace(schedule, ops={f"x.{n}": p for n, p in schedule.ops.items()})
    trace = tmp_path / "other.json"
    trace.write_text(json.dumps(schedule_to_trace(other)))
    assert main(["replay", str(schedule_file), str(trace)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "TRACE" in error and "not in the schedule" in error
