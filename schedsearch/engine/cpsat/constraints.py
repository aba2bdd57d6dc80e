"""The legality rules of FORMATS.md as CP-SAT constraints over :mod:`.variables`.

* precedence (AFTER, DDR_RAW, STALE_READ, WRITE_RACE via :mod:`schedsearch.engine.hazards`):
  ``succ.start >= pred.end + lag``;
* LANE_OVERLAP / UNITS: one cumulative per lane kind, capacity = its unit count (unit
  indices are named afterwards by :func:`schedsearch.engine.units.assign_units`);
* BUDGET: one cumulative per budget;
* ALIAS / MEM_RANGE / LIFETIME: per memory, NoOverlap2D over (buffer window x address
  range), offsets aligned by construction, windows bounding their accessors; plus a
  redundant cumulative of buffer sizes, which prunes far earlier than NoOverlap2D alone.
  The *relaxed* model keeps only the cumulative (bytes in use fit the capacity at every
  instant): much faster, but its answer needs addresses from the placement engine
  (:mod:`schedsearch.engine.offsets`) before it is legal.

Pairs that cannot be violated whatever the solver decides (two pinned nodes, two nodes
shifted together, anything involving an ABSENT node) are left out.
"""

from __future__ import annotations

from collections import defaultdict

from ortools.sat.python import cp_model

from schedsearch.engine.cpsat.variables import BufferVars, NodeVars, Status
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance

__all__ = ["add_precedences", "add_resources", "add_memory"]


def add_precedences(model: cp_model.CpModel, dag: Dag, nodes: list[NodeVars]) -> None:
    for pred, succ, lag in dag.edges:
        start, end = nodes[succ].start, nodes[pred].end
        if Status.FREE in (nodes[pred].status, nodes[succ].status) and \
                start is not None and end is not None:  # None: ABSENT
            model.add(start >= end + lag)


def add_resources(model: cp_model.CpModel, inst: Instance, nodes: list[NodeVars]) -> None:
    """One cumulative per lane kind and budget that a moving node uses, over the nodes
    with an interval (a pinned node that cannot meet a moving one has none)."""
    demands: dict[tuple[str, str], list[tuple[cp_model.IntervalVar, int]]] = defaultdict(list)
    moving: set[tuple[str, str]] = set()
    for v, node in enumerate(nodes):
        for k, _, interval in node.choices:
            mode = inst.modes[v][k]
            for table, items in (("lane", mode.lanes), ("budget", mode.budgets)):
                for name, amount in items:
                    demands[(table, name)].append((interval, amount))
                    if node.status != Status.FIXED:
                        moving.add((table, name))
    capacities = {**{("lane", k): n for k, n in inst.target.lanes.items()},
                  **{("budget", k): n for k, n in inst.target.budgets.items()}}
    for key, items in sorted(demands.items()):
        if key in moving and sum(amount for _, amount in items) > capacities[key]:
            model.add_cumulative([i for i, _ in items], [a for _, a in items],
                                 capacities[key])


def add_memory(model: cp_model.CpModel, inst: Instance,
               buffers: dict[int, BufferVars], offsets: bool = True) -> None:
    """NoOverlap2D and the redundant cumulative; without ``offsets``, the cumulative
    alone (a relaxation: the placement engine must then find the addresses)."""
    by_memory: dict[str, list[int]] = defaultdict(list)
    for b in buffers:
        by_memory[inst.buffer_memory[b]].append(b)
    for memory, members in sorted(by_memory.items()):
        if len(members) < 2:
            continue
        if offsets:
            model.add_no_overlap_2d([buffers[b].time for b in members],
                                    [buffers[b].address for b in members])
        capacity = inst.target.memories[memory].capacity_bytes
        sizes = [inst.buffer_size[b] for b in members]
        if sum(sizes) > capacity:
            model.add_cumulative([buffers[b].time for b in members], sizes, capacity)
