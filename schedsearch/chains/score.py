"""Scoring one solved schedule the way :mod:`schedsearch.paths` scores its paths.

The figures, the overhead formula and the checker's verdict come from
``schedsearch.paths``' own scoring (``makespan = device + launches * launch_ns +
events * event_ns + barriers * barrier_ns``); this module only adds the event count of
a fused entry whose tasks may share on-chip buffers (forwarding, path C), which
``paths.cross_task_events`` refuses because separate kernels cannot share them
(:func:`sync_events` says how the two counts differ).
"""

from __future__ import annotations

from models.cost import Overheads
from models.formats import Schedule
from schedsearch.paths import PathResult, score_path

__all__ = ["sync_events", "score_fused"]


def sync_events(schedule: Schedule) -> int:
    """Events a fused entry needs: one per (op, lane unit) where an op of one task must
    finish before an op of another task starts on that unit, and the two ops share no
    unit (a shared queue orders them for free).

    The operator builder adds an ``after`` edge for every DDR read-after-write and every
    buffer value read, so this counts the cross-task dependencies of
    ``paths.cross_task_events``, extended to edges through shared on-chip buffers, with
    one refinement: a unit that already waits for an op does not wait for it again (a
    GEMM's matrix ops on one queue wait once for each producer block, not once each).
    """
    problem, ops = schedule.problem, schedule.ops

    def held(name: str) -> set[tuple[str, int]]:
        return {(kind, u) for kind, units in ops[name].units.items() for u in units}

    waits: set[tuple[str, tuple[str, int]]] = set()
    for a, b in problem.after:
        if problem.ops[a].task != problem.ops[b].task and not held(a) & held(b):
            units = held(b) or {("", 0)}
            waits.update((a, unit) for unit in units)
    return len(waits)


def score_fused(name: str, schedule: Schedule, costs: Overheads, note: str = "") -> PathResult:
    """One entry, tiles interleaved: one launch, :func:`sync_events` events, verified."""
    return score_path(name, schedule, launches=1, events=sync_events(schedule), barriers=0,
                       costs=costs, note=note)
