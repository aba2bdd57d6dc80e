"""Objectives: the makespan first, then (optionally) peak memory at that makespan.

The makespan is written once, here: ``M >= end`` of every node that moves, of every
pinned node, and of the shifted tail (its incumbent latest end minus ``delta``). With a
shift available the objective is ``M * (max_shift + 1) - delta``: lexicographically the
makespan, then the largest shift, so a window that cannot shorten the schedule still
pulls the tail left and makes room for the next window.

Peak memory is the sum over memories of the highest address in use (``offset + size``),
what a kernel has to reserve; minimised with ``M`` capped at the best makespan found.
"""

from __future__ import annotations

from collections import defaultdict

from ortools.sat.python import cp_model

from schedsearch.engine.cpsat.variables import (
    BufferVars,
    Incumbent,
    Neighbourhood,
    NodeVars,
    Status,
)
from schedsearch.engine.instance import Instance

__all__ = ["makespan_var", "minimise_makespan", "minimise_peak_memory"]


def makespan_var(model: cp_model.CpModel, nodes: list[NodeVars], inc: Incumbent,
                 hood: Neighbourhood, delta: cp_model.IntVar | int,
                 lower: int) -> cp_model.IntVar:
    horizon = max(inc.makespan, hood.t_end)
    makespan = model.new_int_var(min(lower, horizon), horizon, "makespan")
    pinned = max((inc.ends[v] for v, n in enumerate(nodes) if n.status == Status.FIXED),
                 default=0)
    tail = max((inc.ends[v] for v, n in enumerate(nodes)
                if n.status in (Status.SHIFTED, Status.ABSENT)), default=None)
    model.add(makespan >= pinned)
    if tail is not None:
        model.add(makespan >= tail - delta)
    for node in nodes:
        if node.status == Status.FREE:
            model.add(makespan >= node.end)
    return makespan


def minimise_makespan(model: cp_model.CpModel, makespan: cp_model.IntVar,
                      delta: cp_model.IntVar | int, hood: Neighbourhood) -> None:
    model.minimize(makespan * (hood.max_shift + 1) - delta)


def minimise_peak_memory(model: cp_model.CpModel, inst: Instance,
                         buffers: dict[int, BufferVars]) -> list[cp_model.IntVar]:
    by_memory: dict[str, list[int]] = defaultdict(list)
    for b in buffers:
        by_memory[inst.buffer_memory[b]].append(b)
    peaks = []
    for memory, members in sorted(by_memory.items()):
        capacity = inst.target.memories[memory].capacity_bytes
        peak = model.new_int_var(0, capacity, f"peak_{memory}")
        for b in members:
            model.add(peak >= buffers[b].offset + inst.buffer_size[b])
        peaks.append(peak)
    model.minimize(sum(peaks))
    return peaks
