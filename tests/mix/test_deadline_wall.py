"""The per-request search stops at its caller's wall-clock limit when it uses the time,
and by its work budget when reproducible; the mix passes it each grant's wall limit. The
clock is fake (:class:`tests.clock.FakeClock`): each list-scheduler pass "takes" two
seconds, nothing else moves it."""

from __future__ import annotations

import time
from typing import Any

import pytest

from checker import verify
from models.formats import schedule_to_dict
from schedsearch import allotment as allotment_module
from schedsearch.engine import deadlines
from schedsearch.engine.deadlines import PASS_WINDOWS, Group, Objectives, search_objectives
from schedsearch.mix.serve import _engine_objective_search
from schedsearch.paths import SolveOptions
from tests.clock import FakeClock
from tests.engine.problems import target, two_task_problem

TOY = two_task_problem()
TOY_TARGET = target()
OBJECTIVES = Objectives(tuple(Group(t, frozenset({t}), None, 1.0) for t in ("g", "h")),
                        "weighted")
PASS_SECONDS = 2.0


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The fake time at which each list-scheduler pass began; each takes PASS_SECONDS."""
    clock = FakeClock()
    monkeypatch.setattr(time, "perf_counter", clock)
    began: list[float] = []
    real_run = deadlines.SerialPass.run

    def run(self: Any) -> Any:
        began.append(clock.now)
        clock.now += PASS_SECONDS
        return real_run(self)

    monkeypatch.setattr(deadlines.SerialPass, "run", run)
    return began


def test_using_the_time_the_search_stops_at_the_wall_limit(passes: list[float]) -> None:
    """A ten-second limit of which 1.5 s of wall time: the first pass overruns it, so no
    other pass and no window runs, and the answer says it may not repeat."""
    answer = search_objectives(TOY, TOY_TARGET, OBJECTIVES, time_limit=10.0, wall_limit=1.5,
                               reproducible=False)
    assert len(passes) == 1 < len(PASS_WINDOWS)
    assert answer.schedule.meta["lns_windows"] == 0
    assert answer.schedule.meta["reproducible"] is False
    assert verify(schedule_to_dict(answer.schedule)).legal


def test_reproducible_the_work_budget_ends_it(passes: list[float]) -> None:
    """The same clock, reproducible: the far net (30 times 0.2 s, plus 1 s) is not reached
    by the passes' 4 s, so every pass runs and the windows run until the work is spent."""
    answer = search_objectives(TOY, TOY_TARGET, OBJECTIVES, time_limit=0.2)
    assert len(passes) == len(PASS_WINDOWS)
    assert answer.schedule.meta["lns_windows"] >= 1
    assert answer.schedule.meta["reproducible"] is True


def test_the_mix_passes_each_grant_s_wall_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(deadlines, "search_objectives",
                        lambda *args, **kwargs: seen.append(kwargs))
    search = _engine_objective_search(SolveOptions(reproducible=False))
    search(TOY, TOY_TARGET, OBJECTIVES, {}, allotment_module.Grant(3.0, 2.5))
    assert seen[0]["time_limit"] == 3.0 and seen[0]["wall_limit"] == 2.5
    assert seen[0]["reproducible"] is False
