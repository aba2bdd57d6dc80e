"""A fake :func:`time.perf_counter` and a search-free solver, for tests of time limits.

Tests of how a command hands out its time must not time anything: a :class:`FakeClock`
moves only when the test says (a solve "takes" seconds by moving it), and
:func:`listed` gives a legal schedule without a search, on work alone.
"""

from __future__ import annotations

from models.formats import Problem, Schedule, Target
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.solution import to_schedule
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["FakeClock", "listed"]


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
