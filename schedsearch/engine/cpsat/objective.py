"""Objectives: the makespan first, then (optionally) peak memory at that makespan.

The makespan is written once, here: ``M >= end`` of every node that moves, of every
pinned node, and of the shifted tail (its incumbent latest end minus ``delta``). With a
shift available the objective is ``M * (max_shift + 1) - delta``: lexicographically the
makespan, then the largest shift, so a window that cannot shorten the schedule still
pulls the tail left and makes room for the next window.

Peak memory is the sum over memories of the highest address in use (``offset + size``),
what a kernel has to reserve; minimised with ``M`` capped at the best makespan found.

Per-group objectives (:mod:`schedsearch.engine.deadlines`): a group's completion ``C_g``
is at least the end of each of its ops (a pinned op's constant, a shifted op's incumbent
end minus ``delta``, a free op's end variable). Hard deadlines are ``C_g <= D_g``; soft
ones a lateness ``L_g >= C_g - D_g, L_g >= 0`` whose sum is minimised before the
makespan (one objective, the lateness scaled past any makespan); ``weighted`` minimises
``sum w_g C_g`` (weights in :data:`WEIGHT_SCALE` units).
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

__all__ = ["makespan_var", "minimise_makespan", "minimise_peak_memory", "group_completions",
           "hold_deadlines", "minimise_lateness", "minimise_weighted_completion",
           "WEIGHT_SCALE"]

#: A weight ``w`` counts as ``round(w * WEIGHT_SCALE)`` (at least 1) in the model.
WEIGHT_SCALE = 100


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


def group_completions(model: cp_model.CpModel, nodes: list[NodeVars], inc: Incumbent,
                      hood: Neighbourhood, delta: cp_model.IntVar | int,
                      op_group: list[int], n_groups: int) -> list[cp_model.IntVar]:
    """``C_g`` per group (``op_group[op]``: its group, -1 for none), bounded below by the
    end of every op of the group as this neighbourhood has it (module docstring)."""
    horizon = max(inc.makespan, hood.t_end)
    fixed = [0] * n_groups
    shifted: list[int | None] = [None] * n_groups
    free: list[list[cp_model.LinearExprT]] = [[] for _ in range(n_groups)]
    for v, g in enumerate(op_group):
        if g < 0:
            continue
        status = nodes[v].status
        if status == Status.FREE:
            free[g].append(nodes[v].end)
        elif status == Status.FIXED:
            fixed[g] = max(fixed[g], inc.ends[v])
        else:
            shifted[g] = max(shifted[g] or 0, inc.ends[v])
    completions = []
    for g in range(n_groups):
        c = model.new_int_var(fixed[g], horizon, f"completion_{g}")
        if shifted[g] is not None:
            model.add(c >= shifted[g] - delta)
        for end in free[g]:
            model.add(c >= end)
        completions.append(c)
    return completions


def hold_deadlines(model: cp_model.CpModel, completions: list[cp_model.IntVar],
                   deadlines: list[int | None]) -> None:
    """``C_g <= D_g`` for every group with a deadline."""
    for c, deadline in zip(completions, deadlines, strict=True):
        if deadline is not None:
            model.add(c <= deadline)


def minimise_lateness(model: cp_model.CpModel, completions: list[cp_model.IntVar],
                      deadlines: list[int | None], makespan: cp_model.IntVar,
                      horizon: int) -> None:
    """Total lateness first, then the makespan: ``sum L_g * (horizon + 1) + M``, where
    ``horizon`` bounds every completion and the makespan."""
    late = []
    for g, (c, deadline) in enumerate(zip(completions, deadlines, strict=True)):
        if deadline is None:
            continue
        lateness = model.new_int_var(0, max(0, horizon - deadline), f"late_{g}")
        model.add(lateness >= c - deadline)
        late.append(lateness)
    model.minimize(sum(late) * (horizon + 1) + makespan)


def minimise_weighted_completion(model: cp_model.CpModel, completions: list[cp_model.IntVar],
                                 weights: list[float]) -> None:
    """``sum w_g C_g``, each weight in :data:`WEIGHT_SCALE` units."""
    model.minimize(sum(max(1, round(w * WEIGHT_SCALE)) * c
                       for c, w in zip(completions, weights, strict=True)))
