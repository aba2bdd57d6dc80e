"""A fake :func:`time.perf_counter` and a search-free solver, for tests of time limits.

Tests of how a command hands out its time must not time anything: a :class:`FakeClock`
moves only when the test says (a solve "takes" seconds by moving it), and
:func:`listed` gives a legal schedule without a search, on work alone. A test whose
searches must repeat at any load uses :func:`wall_never_binds` (the fixture of the same
name in ``tests/conftest.py``; a session fixture through ``MonkeyPatch.context()``).
"""

from __future__ import annotations

import pytest

from models.formats import Problem, Schedule, Target
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.solution import to_schedule
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["FakeClock", "listed", "wall_never_binds", "UNHURRIED_NET"]

#: How many times its work a reproducible search's wall-clock net is under
#: :func:`wall_never_binds`: far beyond any load a shared machine reaches (at load 8 on
#: 2 cores a search ran 4 times its work), so the work budget, which repeats, always
#: stops the search first.
UNHURRIED_NET = 1000.0


class FakeClock:
    """:func:`time.perf_counter` that moves only when told to (``now += seconds``)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def listed(problem: Problem, target: Target, granularity: str = "tile") -> Schedule:
    """A legal schedule of ``problem`` from the list scheduler alone."""
    inst = build_instance(problem, target)
    solution = construct(inst, build_dag(inst, granularity), budget=TimeBudget.start(1.0))
    return to_schedule(inst, solution, {"solver": "constructive", "status": "FEASIBLE"})


def wall_never_binds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reproducible search in the test stops by its deterministic work budget alone.

    Why: a test that compares two searches, or counts the stages one ran, must not
    depend on how much work fits into a wall-clock second. Each reproducible time budget
    (every solve's, each task's solved alone inside one, tuning's screening and
    finalists) gets a wall-clock net of :data:`UNHURRIED_NET` times its work instead of
    its nominal limit; the work granted is unchanged, so the test takes the time it took
    on an idle machine.
    """
    real = TimeBudget.start

    def unhurried(seconds: float, *, wall: float | None = None, begin: float | None = None,
                  reproducible: bool = True) -> TimeBudget:
        if reproducible:
            wall = UNHURRIED_NET * seconds
        return real(seconds, wall=wall, begin=begin, reproducible=reproducible)

    monkeypatch.setattr(TimeBudget, "start", staticmethod(unhurried))
    monkeypatch.setattr("schedsearch.tuning.joint.WALL_SLACK", UNHURRIED_NET)
