"""Addresses for a solution whose times are decided: the placement engine inside the search.

A CP-SAT model that decides offsets carries a NoOverlap2D per memory, which is what
makes it slow; with memory as a cumulative only (bytes in use fit the capacity at every
instant) it solves much faster, but its answer has no addresses yet. Once the times are
fixed, every buffer's lifetime is fixed (:func:`schedsearch.engine.solution.buffer_windows`),
and choosing its addresses is exactly the placement engine's problem
(:func:`schedsearch.engine.placement.place`). A placement that fits every buffer under the
capacity makes the whole solution legal; one that does not means the candidate is
dropped and the incumbent kept.

Buffers whose lifetime did not change keep their incumbent address first (pinned:
they were legal among themselves), so the engine places only the few that moved; only
if that fails are all the memory's buffers placed afresh.
"""

from __future__ import annotations

from models.errors import InputError
from schedsearch.engine.instance import Instance
from schedsearch.engine.placement import PlacementBuffer, place
from schedsearch.engine.result import SolveStatus
from schedsearch.engine.solution import Solution, buffer_windows
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["place_offsets", "CHARGE_PER_BUFFER"]

#: Work charged per buffer handed to the engine (calibrated seconds).
CHARGE_PER_BUFFER = 2e-4
#: Work charged per node of the exact search and buffer placed (a node scans the
#: buffers: on the tight wide pair, 111 buffers, a node took 0.27 ms).
CHARGE_PER_NODE_BUFFER = 3e-6
#: Nodes of the exact search one placement may use: a base plus some per buffer. A
#: placement that succeeds needs about one node per buffer; one that fails with the
#: unmoved buffers pinned had run until the deadline (7.3 s, 26,717 nodes, on the tight
#: wide pair at 161 ops, with 7 s of the solve left), where the fresh placement after it
#: would have taken 116 nodes. A base of 2,000 still spent 0.3-0.6 s on each candidate
#: that failed there, most of LNS's time once its windows were small.
PLACE_BASE_NODES = 300
PLACE_NODES_PER_BUFFER = 2


def place_offsets(inst: Instance, solution: Solution, incumbent: Solution, budget: TimeBudget,
                  seed: int) -> Solution | None:
    """``solution`` with offsets from the placement engine, or None if some memory's
    buffers cannot be placed within the node budget (or the deadline came first: then
    ``budget.cut``).
    ``incumbent`` is the legal solution ``solution`` was derived from."""
    windows = buffer_windows(inst, solution.starts, solution.ends(inst))
    before = buffer_windows(inst, incumbent.starts, incumbent.ends(inst))
    offsets = list(incumbent.offsets)
    for memory, spec in sorted(inst.target.memories.items()):
        members = [b for b in range(inst.n_buffers) if inst.buffer_memory[b] == memory]
        moved = {b for b in members if windows[b] != before[b]}
        if not moved:
            continue
        for pin in (True, False):
            items = [PlacementBuffer(inst.buffer_names[b], *windows[b], inst.buffer_size[b],
                                     inst.buffer_align[b],
                                     offsets[b] if pin and b not in moved else None)
                     for b in members]
            budget.charge(CHARGE_PER_BUFFER * len(items))
            try:
                result = place(items, spec.capacity_bytes, time_limit=budget.wall_left(),
                               seed=seed,
                               max_nodes=PLACE_BASE_NODES + PLACE_NODES_PER_BUFFER * len(items))
            except InputError:
                return None
            budget.charge(CHARGE_PER_NODE_BUFFER * result.stats.get("nodes", 0) * len(items))
            if result.placed:
                for b in members:
                    offsets[b] = result.offsets[inst.buffer_names[b]]
                break
            timed_out = result.status is SolveStatus.NO_SOLUTION_IN_TIME
            if timed_out or budget.exhausted():
                budget.cut = budget.cut or timed_out
                return None
        else:
            return None
    return Solution(solution.modes, solution.starts, tuple(offsets))
