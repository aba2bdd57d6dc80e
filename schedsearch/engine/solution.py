"""The search's own compact answer, and its translation into an ``npu-schedule/1``.

Every search stage (constructive, CP-SAT, LNS) produces the same three decisions per op
(mode, start; the end is start + the mode's duration) and one per buffer (offset). What
follows from them is derived here once, so no stage can get it wrong: a buffer's window
runs from the earliest start to the latest end of the ops that access it (the tightest
window LIFETIME accepts, hence the fewest ALIAS conflicts), unit indices come from
:func:`schedsearch.engine.units.assign_units`, and the makespan is the largest end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.formats import BufferPlacement, OpPlacement, Schedule
from schedsearch.engine.instance import Instance
from schedsearch.engine.units import assign_units

__all__ = ["Solution", "buffer_windows", "to_schedule", "extent_bytes"]


@dataclass(frozen=True, slots=True)
class Solution:
    modes: tuple[int, ...]
    starts: tuple[int, ...]
    offsets: tuple[int, ...]

    def ends(self, inst: Instance) -> tuple[int, ...]:
        return tuple(s + inst.modes[i][m].duration
                     for i, (m, s) in enumerate(zip(self.modes, self.starts, strict=True)))

    def makespan(self, inst: Instance) -> int:
        return max(self.ends(inst), default=0)


def buffer_windows(inst: Instance, starts: tuple[int, ...],
                   ends: tuple[int, ...]) -> list[tuple[int, int]]:
    """``(alloc, free)`` per buffer; a buffer no op accesses gets the empty window [0, 0)."""
    windows = []
    for ops in inst.buffer_ops:
        if ops:
            windows.append((min(starts[i] for i in ops), max(ends[i] for i in ops)))
        else:
            windows.append((0, 0))
    return windows


def extent_bytes(inst: Instance, solution: Solution) -> dict[str, int]:
    """Per memory, the highest address any buffer occupies (``max(offset + size)``): what
    a kernel must reserve, and what ``secondary="peak-memory"`` minimises. (Not the
    largest sum of live bytes: that is ``Evaluation.peak_bytes``.)"""
    peak = {name: 0 for name in inst.target.memories}
    for b, offset in enumerate(solution.offsets):
        memory = inst.buffer_memory[b]
        peak[memory] = max(peak[memory], offset + inst.buffer_size[b])
    return peak


def to_schedule(inst: Instance, solution: Solution, meta: dict[str, Any]) -> Schedule:
    """The ``npu-schedule/1`` a solution stands for, embedding the problem and target."""
    ends = solution.ends(inst)
    units = assign_units(inst, solution.modes, solution.starts, ends)
    ops = {name: OpPlacement(solution.modes[i], solution.starts[i], ends[i], units[i])
           for i, name in enumerate(inst.op_names)}
    windows = buffer_windows(inst, solution.starts, ends)
    buffers = {name: BufferPlacement(solution.offsets[b], *windows[b])
               for b, name in enumerate(inst.buffer_names)}
    return Schedule(target=inst.target, problem=inst.problem, ops=ops, buffers=buffers,
                    makespan=max(ends, default=0), meta=meta)
