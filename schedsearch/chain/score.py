"""Scoring one solved schedule the way :mod:`schedsearch.paths` scores its paths.

The figures, the overhead formula and the checker's verdict come from
``schedsearch.paths``' own scoring (``makespan = device + launches * launch_ns +
events * event_ns + barriers * barrier_ns``); this module only adds the event count of
a fused entry whose tasks may share on-chip buffers (forwarding, path C), which
``paths.cross_task_events`` refuses because separate kernels cannot share them.
"""

from __future__ import annotations

from models.cost import Overheads
from models.formats import Schedule
from schedsearch.paths import PathResult
from schedsearch.paths import _result as path_result

__all__ = ["sync_events", "score_fused"]


def sync_events(schedule: Schedule) -> int:
    """Cross-task ``after`` edges whose two ops hold no lane unit in common.

    The operator builder adds an ``after`` edge for every DDR read-after-write and every
    buffer value read, so for a problem it built this is ``paths.cross_task_events``,
    extended to edges through shared on-chip buffers.
    """
    problem, ops = schedule.problem, schedule.ops

    def held(name: str) -> set[tuple[str, int]]:
        return {(kind, u) for kind, units in ops[name].units.items() for u in units}

    return sum(1 for a, b in problem.after
               if problem.ops[a].task != problem.ops[b].task and not held(a) & held(b))


def score_fused(name: str, schedule: Schedule, costs: Overheads, note: str = "") -> PathResult:
    """One entry, tiles interleaved: one launch, :func:`sync_events` events, verified."""
    return path_result(name, schedule, launches=1, events=sync_events(schedule), barriers=0,
                       costs=costs, note=note)
