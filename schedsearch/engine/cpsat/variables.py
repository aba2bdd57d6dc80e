"""CP-SAT variables for one neighbourhood of an incumbent solution.

One builder serves the whole-problem model and the large-neighbourhood windows, because
both are the same model with some nodes pinned. Each node (op or task barrier) has a
:class:`Status` relative to the incumbent:

* ``FREE``: mode, start and buffer offsets are decided (start within ``[t0, t_end]``);
* ``FIXED``: keeps its incumbent mode and times (a constant);
* ``SHIFTED``: keeps its mode and moves earlier with every later op by one shared
  ``delta`` in ``[0, max_shift]`` (start = incumbent start - delta), which is how a
  window's gain reaches the makespan without putting the rest of the schedule in the
  model;
* ``ABSENT``: shifted like ``SHIFTED`` but too far right to interact with anything that
  moves differently, so it gets no interval and no constraint.

A buffer's offset is a variable only when every op that accesses it is FREE (a buffer
also used by a pinned op keeps the address that op used). Its window ``[alloc, free)`` is
a constant, a shifted constant, or a pair of variables bounding all its accessors.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ortools.sat.python import cp_model

from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.solution import Solution, buffer_windows

__all__ = ["Status", "Neighbourhood", "Incumbent", "NodeVars", "BufferVars",
           "new_delta", "new_nodes", "new_buffers"]

Expr = cp_model.LinearExprT


class Status(IntEnum):
    FIXED = 0
    FREE = 1
    SHIFTED = 2
    ABSENT = 3


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """Which nodes move and how: per-node status, the free region, the largest shift."""

    status: tuple[Status, ...]
    t0: int
    t_end: int
    max_shift: int


@dataclass(frozen=True, slots=True)
class Incumbent:
    """A solution with the figures the builders need: node times, buffer windows, and
    the nodes in order of start (ties by index: the ranks LNS windows are cut from)."""

    solution: Solution
    starts: tuple[int, ...]  # per node; a barrier's time is its predecessors' latest end
    ends: tuple[int, ...]
    windows: tuple[tuple[int, int], ...]
    ranked: tuple[int, ...]

    @staticmethod
    def of(inst: Instance, dag: Dag, solution: Solution) -> Incumbent:
        barriers = [0] * (dag.n_nodes - dag.n_ops)
        starts = [*solution.starts, *barriers]
        ends = [*solution.ends(inst), *barriers]
        for v in dag.topo:
            if v >= dag.n_ops:
                starts[v] = ends[v] = max((ends[p] + lag for p, lag in dag.preds[v]),
                                          default=0)
        windows = buffer_windows(inst, solution.starts, tuple(ends[:dag.n_ops]))
        ranked = sorted(range(dag.n_nodes), key=lambda v: (starts[v], v))
        return Incumbent(solution, tuple(starts), tuple(ends), tuple(windows), tuple(ranked))

    @property
    def makespan(self) -> int:
        return max(self.ends, default=0)


@dataclass(slots=True)
class NodeVars:
    """A node's start and end as the model has them (None for an ABSENT node, which is
    in no constraint), and its intervals."""

    status: Status
    start: Expr | None
    end: Expr | None
    #: (mode index, presence literal or None when certain, interval); empty for barriers
    #: and for pinned nodes that cannot meet what moves
    choices: list[tuple[int, cp_model.IntVar | None, cp_model.IntervalVar]]


#: Every ABSENT node's entry: no times, no interval (building an expression of
#: ``delta`` for each of the thousands after a window cost more than its model).
_ABSENT = NodeVars(Status.ABSENT, None, None, [])


@dataclass(slots=True)
class BufferVars:
    offset: Expr
    alloc: Expr
    free: Expr
    length: cp_model.IntVar
    time: cp_model.IntervalVar
    address: cp_model.IntervalVar
    k: cp_model.IntVar | None  # offset = align * k when the offset is decided


def new_delta(model: cp_model.CpModel, hood: Neighbourhood) -> cp_model.IntVar | int:
    return model.new_int_var(0, hood.max_shift, "delta") if hood.max_shift > 0 else 0


def new_nodes(model: cp_model.CpModel, inst: Instance, dag: Dag, inc: Incumbent,
              hood: Neighbourhood, delta: cp_model.IntVar | int) -> list[NodeVars]:
    """Every node's entry. A pinned node that can share no resource with what moves
    gets no interval: ABSENT ones, and FIXED ones ended by the window's start (every
    FREE op starts at ``t0`` or later, every SHIFTED one later still). Why: on the tight
    wide pair at 7,966 ops a window near the end had 9,143 constraints, nearly all
    intervals of the ops before it, and each conflict was charged 130 times a small
    model's."""
    nodes = []
    for v, status in enumerate(hood.status):
        if status == Status.ABSENT:
            nodes.append(_ABSENT)
        elif status == Status.FREE:
            nodes.append(_free_node(model, inst, dag, v, hood))
        elif status == Status.FIXED and inc.ends[v] <= hood.t0:
            nodes.append(NodeVars(status, inc.starts[v], inc.ends[v], []))
        else:
            shift = delta if status == Status.SHIFTED else 0
            start = inc.starts[v] - shift
            choices = []
            if v < dag.n_ops:
                mode = inc.solution.modes[v]
                choices.append((mode, None, model.new_fixed_size_interval_var(
                    start, inst.modes[v][mode].duration, f"i{v}")))
            nodes.append(NodeVars(status, start, inc.ends[v] - shift, choices))
    return nodes


def _free_node(model: cp_model.CpModel, inst: Instance, dag: Dag, v: int,
               hood: Neighbourhood) -> NodeVars:
    if v >= dag.n_ops:
        time = model.new_int_var(hood.t0, hood.t_end, f"b{v}")
        return NodeVars(Status.FREE, time, time, [])
    modes = inst.modes[v]
    shortest = min(m.duration for m in modes)
    start = model.new_int_var(hood.t0, hood.t_end - shortest, f"s{v}")
    if len(modes) == 1:
        interval = model.new_fixed_size_interval_var(start, modes[0].duration, f"i{v}")
        return NodeVars(Status.FREE, start, start + modes[0].duration,
                        [(0, None, interval)])
    end = model.new_int_var(hood.t0 + shortest, hood.t_end, f"e{v}")
    choices = []
    for k, mode in enumerate(modes):
        present = model.new_bool_var(f"p{v}_{k}")
        model.add(end == start + mode.duration).only_enforce_if(present)
        choices.append((k, present, model.new_optional_fixed_size_interval_var(
            start, mode.duration, present, f"i{v}_{k}")))
    model.add_exactly_one(p for _, p, _ in choices)
    return NodeVars(Status.FREE, start, end, choices)


def new_buffers(model: cp_model.CpModel, inst: Instance, inc: Incumbent, hood: Neighbourhood,
                nodes: list[NodeVars], delta: cp_model.IntVar | int,
                region_end: int, offsets: bool = True) -> dict[int, BufferVars]:
    """Buffers whose rectangles can meet a moving one: those with a FREE or SHIFTED
    accessor, and pinned ones whose incumbent window meets ``[t0, region_end)``.
    Without ``offsets`` no offset is decided (every buffer keeps its incumbent one, to
    be replaced afterwards by the placement engine)."""
    buffers = {}
    for b, accessors in enumerate(inst.buffer_ops):
        if not accessors:
            continue
        kinds = {nodes[i].status for i in accessors}
        alloc0, free0 = inc.windows[b]
        moving = bool(kinds & {Status.FREE, Status.SHIFTED})
        if not moving and not (alloc0 < region_end and free0 > hood.t0 and free0 > alloc0):
            continue
        size = inst.buffer_size[b]
        k = None
        if offsets and kinds == {Status.FREE}:
            capacity = inst.target.memories[inst.buffer_memory[b]].capacity_bytes
            align = inst.buffer_align[b]
            k = model.new_int_var(0, (capacity - size) // align, f"k{b}")
            offset: Expr = align * k
        else:
            offset = inc.solution.offsets[b]
        if kinds <= {Status.FIXED}:
            alloc: Expr = alloc0
            free: Expr = free0
        elif kinds <= {Status.SHIFTED, Status.ABSENT}:
            alloc, free = alloc0 - delta, free0 - delta
        else:
            alloc = model.new_int_var(0, max(free0, hood.t_end), f"a{b}")
            free = model.new_int_var(0, max(free0, hood.t_end), f"f{b}")
            _bound_window(model, alloc, free, nodes, accessors, inc, delta)
        length = model.new_int_var(0, max(free0, hood.t_end), f"l{b}")
        time = model.new_interval_var(alloc, length, free, f"t{b}")
        address = model.new_fixed_size_interval_var(offset, size, f"m{b}")
        buffers[b] = BufferVars(offset, alloc, free, length, time, address, k)
    return buffers


def _bound_window(model: cp_model.CpModel, alloc: Expr, free: Expr, nodes: list[NodeVars],
                  accessors: tuple[int, ...], inc: Incumbent,
                  delta: cp_model.IntVar | int) -> None:
    """``alloc`` at most every accessor's start, ``free`` at least every end: one pair of
    constraints per FREE accessor, one pair for the FIXED ones together (constants) and
    one for the shifted ones (their incumbent times less ``delta``). Why: the RMSNorm's
    weight is read by every row's compute; on the tight wide pair at 7,966 ops a window
    holding one of them had 1,101 linear constraints, nearly all of them these bounds."""
    pinned: dict[bool, tuple[int, int]] = {}  # shifted? -> (earliest start, latest end)
    for v in accessors:
        node = nodes[v]
        if node.status == Status.FREE:
            model.add(alloc <= node.start)
            model.add(free >= node.end)
            continue
        shifted = node.status != Status.FIXED
        first, last = pinned.get(shifted, (inc.starts[v], inc.ends[v]))
        pinned[shifted] = (min(first, inc.starts[v]), max(last, inc.ends[v]))
    for shifted, (first, last) in pinned.items():
        shift = delta if shifted else 0
        model.add(alloc <= first - shift)
        model.add(free >= last - shift)
