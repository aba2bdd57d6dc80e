"""The reproducible mode ends by its work budget, whatever the wall clock does: a
synthetic clock that runs fast (a machine much slower or busier than calibrated) gives
the same schedule as one that stands still."""

from __future__ import annotations

import itertools
import time

import pytest

from schedsearch.engine.search import solve_report
from schedsearch.engine.timebudget import WALL_GRACE, WALL_SLACK, TimeBudget
from tests.engine.problems import target, two_task_problem


def _clock(monkeypatch: pytest.MonkeyPatch, step: float) -> itertools.count:
    """``time.perf_counter`` advances ``step`` seconds per call, whatever real time does
    (every module of the search reads the clock through it); the calls are counted."""
    ticks = itertools.count()
    base = time.perf_counter()
    monkeypatch.setattr(time, "perf_counter", lambda: base + step * next(ticks))
    return ticks


def test_a_reproducible_budget_keeps_a_far_wall_clock_net() -> None:
    budget = TimeBudget.start(2.0, begin=0.0)
    assert budget.deadline == WALL_SLACK * 2.0 + WALL_GRACE
    assert TimeBudget.start(2.0, begin=0.0, reproducible=False).deadline == 2.0
    assert TimeBudget.start(2.0, begin=0.0, wall=3.0).deadline == 3.0


def test_a_slow_clock_gives_the_same_reproducible_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    problem, tgt = two_task_problem(), target(capacity=1 << 14)
    limit = 0.3
    answers = []
    step = 0.0  # first a still clock; then one that overruns the limit twice over
    for _ in range(2):
        with monkeypatch.context() as patch:
            ticks = _clock(patch, step)
            began = time.perf_counter()
            report = solve_report(problem, tgt, time_limit=limit, workers=1)
            seen = time.perf_counter() - began
            calls = next(ticks)
        assert report.stats.reproducible
        assert seen > limit if step else seen == 0.0
        answers.append((report.schedule.makespan, report.schedule.ops))
        step = 2 * limit / calls  # the same path reads the clock as often again
    assert answers[0] == answers[1]
