"""An indexed, read-only view of a problem and its target, shared by every search module.

The formats are keyed by name; the search loops touch each op and buffer thousands of
times, so this view numbers ops and buffers in problem order once and precomputes what
the loops need: each mode's duration, lane demands and budget draws, the buffers each op
accesses, the ops that access each buffer, and each buffer's effective alignment
(``lcm(buffer.align, memory.alignment_bytes)``, the only offsets MEM_RANGE accepts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from models.formats import Problem, Target

__all__ = ["ModeView", "Instance", "Resource", "build_instance"]

#: A lane kind ``("lane", K)`` or a budget ``("budget", B)``.
Resource = tuple[str, str]


@dataclass(frozen=True, slots=True)
class ModeView:
    duration: int
    lanes: tuple[tuple[str, int], ...]
    budgets: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Instance:
    problem: Problem
    target: Target
    op_names: tuple[str, ...]
    op_index: dict[str, int]
    modes: tuple[tuple[ModeView, ...], ...]
    op_buffers: tuple[tuple[int, ...], ...]
    buffer_names: tuple[str, ...]
    buffer_index: dict[str, int]
    buffer_size: tuple[int, ...]
    buffer_memory: tuple[str, ...]
    buffer_align: tuple[int, ...]
    buffer_ops: tuple[tuple[int, ...], ...]
    op_task: tuple[str, ...]

    @property
    def n_ops(self) -> int:
        return len(self.op_names)

    @property
    def n_buffers(self) -> int:
        return len(self.buffer_names)

    def min_duration(self, op: int) -> int:
        return min(mode.duration for mode in self.modes[op])

    def least_work(self, op: int) -> dict[Resource, int]:
        """Per lane kind ``("lane", K)`` and budget ``("budget", B)`` that a mode of
        ``op`` uses, the least duration x amount over its modes (0 where a mode does
        without it): what ``op`` puts on it in any schedule."""
        keys = {(kind, name) for mode in self.modes[op]
                for kind, pairs in (("lane", mode.lanes), ("budget", mode.budgets))
                for name, _ in pairs}
        return {key: min(mode.duration * dict(mode.lanes if key[0] == "lane"
                                              else mode.budgets).get(key[1], 0)
                         for mode in self.modes[op]) for key in keys}

    def reads_ddr(self, op: int) -> bool:
        """Whether ``op`` reads a DDR tensor (a load, or a copy from DDR)."""
        return any(access.tensor is not None
                   for access in self.problem.ops[self.op_names[op]].reads)

    def writes_ddr(self, op: int) -> bool:
        """Whether ``op`` writes a DDR tensor (a store)."""
        return any(access.tensor is not None
                   for access in self.problem.ops[self.op_names[op]].writes)

    def draws(self, op: int, mode: int) -> tuple[tuple[Resource, int], ...]:
        """What ``op`` in ``mode`` holds of each lane kind and budget while it runs,
        keyed as in :meth:`capacities`."""
        chosen = self.modes[op][mode]
        return (*((("lane", name), units) for name, units in chosen.lanes),
                *((("budget", name), amount) for name, amount in chosen.budgets))

    def capacities(self) -> dict[Resource, int]:
        """The units of each lane kind and the capacity of each budget, keyed as in
        :meth:`least_work`."""
        return {**{("lane", n): c for n, c in self.target.lanes.items()},
                **{("budget", n): c for n, c in self.target.budgets.items()}}


def build_instance(problem: Problem, target: Target) -> Instance:
    """Number ops and buffers in problem order and precompute the per-op tables."""
    op_names = tuple(problem.ops)
    op_index = {name: i for i, name in enumerate(op_names)}
    buffer_names = tuple(problem.buffers)
    buffer_index = {name: i for i, name in enumerate(buffer_names)}
    modes = tuple(
        tuple(ModeView(m.duration, tuple(sorted((k, v) for k, v in m.lanes.items() if v)),
                       tuple(sorted((k, v) for k, v in m.budgets.items() if v)))
              for m in problem.ops[name].modes)
        for name in op_names)
    op_buffers = []
    buffer_ops: list[list[int]] = [[] for _ in buffer_names]
    for i, name in enumerate(op_names):
        op = problem.ops[name]
        used = sorted({buffer_index[a.buffer] for a in (*op.reads, *op.writes)
                       if a.buffer is not None})
        op_buffers.append(tuple(used))
        for b in used:
            buffer_ops[b].append(i)
    aligns = []
    for name in buffer_names:
        buffer = problem.buffers[name]
        memory = target.memories.get(buffer.memory)
        aligns.append(math.lcm(buffer.align, memory.alignment_bytes if memory else 1))
    return Instance(
        problem=problem, target=target, op_names=op_names, op_index=op_index, modes=modes,
        op_buffers=tuple(op_buffers), buffer_names=buffer_names, buffer_index=buffer_index,
        buffer_size=tuple(problem.buffers[n].size for n in buffer_names),
        buffer_memory=tuple(problem.buffers[n].memory for n in buffer_names),
        buffer_align=tuple(aligns), buffer_ops=tuple(tuple(ops) for ops in buffer_ops),
        op_task=tuple(problem.ops[n].task for n in op_names))
