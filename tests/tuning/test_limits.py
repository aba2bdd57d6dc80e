"""``tune``'s limit is the whole run's, counted from when the caller started: what came
before (the command's imports and reading), the screening and every finalist's search
share it, and the finalists are granted what is left as each begins.

Nothing is timed: a fake clock stands in for :func:`time.perf_counter`, and each
finalist's search "takes" the seconds the test says by moving it.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from models.formats import Problem, Schedule, Target
from models.targets import load_target
from schedsearch.allotment import MIN_SECONDS, TAIL_SHARE
from schedsearch.tuning import joint
from tests.clock import FakeClock, listed
from tests.tuning.workloads import tiny


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(time, "perf_counter", fake)
    return fake


def _recording(clock: FakeClock, cost: float, deadline: float,
               calls: list[dict[str, Any]]) -> Any:
    def search(problem: Problem, target: Target, **options: Any) -> Schedule:
        calls.append({**options, "left": deadline - clock.now})
        clock.now += cost
        return listed(problem, target)

    return search


@pytest.mark.parametrize("before", [0.0, 0.4])
def test_each_finalist_gets_at_most_what_is_left_less_the_tail(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch, before: float) -> None:
    """``before`` seconds passed before ``tune`` was called (a command's imports); each
    finalist's search then "takes" 0.3 s of a 1 s limit: none is granted more than
    what was left at its start less the tail, and a finalist after the time ran out is
    not searched (its list schedule stands in)."""
    limit, started = 1.0, clock.now
    clock.now += before
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(joint, "solve", _recording(clock, 0.3, started + limit, calls))
    result = joint.tune(tiny(), load_target("hexagon-v75"), time_limit=limit,
                        reproducible=False, started=started)
    assert calls and result.searched == len(calls)
    assert result.searched + result.skipped == joint.FINALISTS + 1
    for call in calls:
        assert MIN_SECONDS <= call["wall_limit"] == call["time_limit"]
        assert call["wall_limit"] <= max(MIN_SECONDS, call["left"] - TAIL_SHARE * limit)
    if before:  # the time it took before the tuning is missing from the finalists'
        assert result.skipped > 0


def test_reproducible_finalists_get_their_work_whatever_the_clock(
        clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``reproducible``, each finalist gets an equal share of the work left after
    screening, even when the clock says the time is gone before the first."""
    limit, started = 1.0, clock.now
    clock.now += 2 * limit
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(joint, "solve", _recording(clock, 0.3, started + limit, calls))
    result = joint.tune(tiny(), load_target("hexagon-v75"), time_limit=limit,
                        reproducible=True, started=started)
    assert result.skipped == 0 and len(calls) == joint.FINALISTS + 1
    given = [call["time_limit"] for call in calls]
    assert max(given) == pytest.approx(min(given))
    assert min(given) > MIN_SECONDS and sum(given) <= limit
