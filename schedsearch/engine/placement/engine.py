"""``place``: the placement engine's one entry point (capacity mode and minimise mode).

The pipeline, cheapest first:

1. bounds: the max-load lower bound refutes a capacity at once when it is exceeded;
   pinned buffers that clash or overflow refute it too;
2. greedy portfolio (NumPy best-fit/first-fit over several orders): on real compiler
   traces it lands within a few percent of the bound in seconds, and in capacity mode it
   ends the job whenever the capacity has some slack;
3. exact search (:mod:`schedsearch.engine.placement.exact`): canonical DFS with inference,
   dominance, symmetry breaking, decomposition and a transposition table. It finds a
   placement or proves that none exists; minimise mode uses it to probe capacities
   between the bound and the greedy peak, the bound first (tight instances are common).

Every placement returned has passed
:func:`~schedsearch.engine.placement.validate.validate_placement`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from models.errors import InputError
from schedsearch.engine.placement.exact import search
from schedsearch.engine.placement.greedy import greedy_portfolio
from schedsearch.engine.placement.problem import (
    PlacementBuffer,
    PlacementResult,
    check_buffers,
    lower_bound,
)
from schedsearch.engine.placement.validate import validate_placement
from schedsearch.engine.result import SolveStatus

__all__ = ["place", "EXACT_MAX_BUFFERS"]

#: Minimise mode probes capacities with the exact search only up to this many buffers:
#: a node costs O(buffers) NumPy work, so beyond it the time is better spent elsewhere.
EXACT_MAX_BUFFERS = 5000


def place(buffers: Iterable[PlacementBuffer], capacity: int | None, *,
          time_limit: float = 10.0, seed: int = 0,
          max_nodes: int | None = None) -> PlacementResult:
    """Choose an offset for every buffer so that no two buffers live at the same time
    share a byte, each offset a multiple of the buffer's ``align``, pinned buffers at their
    ``offset``.

    With ``capacity``, every buffer must end at or below it: the status is ``OPTIMAL``
    when placed, ``INFEASIBLE`` when proved impossible, ``NO_SOLUTION_IN_TIME`` otherwise,
    or ``NO_SOLUTION_FOUND`` when the exact search used ``max_nodes`` nodes (a budget that, unlike
    the time limit, stops at the same point on every machine). Without it
    (minimise mode) the peak is made as small as the time allows: ``OPTIMAL`` when it
    is proved smallest, ``FEASIBLE`` otherwise. ``lower_bound`` is the max-load bound.
    Deterministic for a given ``seed`` unless ``time_limit`` cuts a phase short.
    """
    began = time.perf_counter()
    deadline = began + max(time_limit, 0.0)
    items = check_buffers(buffers)
    if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int)
                                 or capacity < 0):
        raise InputError(f"capacity must be an integer >= 0, got {capacity!r}",
                         path="$.capacity")
    bound = lower_bound(items)

    def result(status: SolveStatus, offsets: dict[str, int], method: str,
               **stats: int) -> PlacementResult:
        peak = max((offsets[b.id] + b.size for b in items), default=0) if offsets else 0
        if offsets:
            broken = validate_placement(items, offsets, capacity)
            if broken:  # a bug in the engine, never an input problem
                raise RuntimeError(f"placement failed its self-check: {broken[0].message}")
        return PlacementResult(status, offsets, peak, bound,
                               time.perf_counter() - began, method, stats)

    refusal = _pinned_refusal(items, capacity)
    if refusal:
        return result(SolveStatus.INFEASIBLE, {}, refusal)
    if capacity is not None:
        if bound > capacity:
            return result(SolveStatus.INFEASIBLE, {}, "max-load bound")
        offsets, peak, label = greedy_portfolio(items, seed=seed, capacity=capacity,
                                                deadline=deadline)
        if peak <= capacity:
            return result(SolveStatus.OPTIMAL, offsets, label)
        status, offsets, nodes = _exact(items, capacity, deadline, seed, max_nodes)
        if status is SolveStatus.FEASIBLE:
            return result(SolveStatus.OPTIMAL, offsets, "exact", nodes=nodes)
        return result(status, {}, "exact", nodes=nodes)
    # Minimise mode: greedy for an upper bound, then exact probes below it.
    offsets, peak, label = greedy_portfolio(items, seed=seed,
                                            deadline=began + 0.5 * max(time_limit, 0.0))
    proved = bound
    method = label
    nodes_total = 0
    if peak > proved and len(items) <= EXACT_MAX_BUFFERS:
        low, high = proved, peak - 1  # the probe window: capacities still worth a try
        probe = low
        while low <= high and time.perf_counter() < deadline:
            # Half the time left per probe: a probe that times out leaves room for others.
            now = time.perf_counter()
            status, found, nodes = _exact(items, probe, now + (deadline - now) / 2, seed,
                                          max_nodes)
            nodes_total += nodes
            if status is SolveStatus.FEASIBLE:
                offsets, method = found, "exact"
                peak = max(found[b.id] + b.size for b in items)
                high = peak - 1
            elif status is SolveStatus.INFEASIBLE:
                proved = low = probe + 1
            else:  # timed out: no information, look higher where it is easier
                low = probe + 1
            probe = (low + high) // 2
    status = SolveStatus.OPTIMAL if peak <= proved else SolveStatus.FEASIBLE
    return result(status, offsets, method, nodes=nodes_total, proved_bound=proved)


def _pinned_refusal(items: list[PlacementBuffer], capacity: int | None) -> str:
    """Why pinned buffers alone make the instance infeasible, or ``""``."""
    pinned = [b for b in items if b.offset is not None]
    offsets = {b.id: b.offset for b in pinned if b.offset is not None}
    broken = validate_placement(pinned, offsets, capacity)
    return f"pinned buffers: {broken[0].message}" if broken else ""


def _exact(items: list[PlacementBuffer], capacity: int, deadline: float,
           seed: int, max_nodes: int | None) -> tuple[SolveStatus, dict[str, int], int]:
    """Run the exact search; buffers it leaves out (never live) go to 0 or their pin."""
    outcome = search([b.lower for b in items], [b.upper for b in items],
                     [b.size for b in items], [b.align for b in items],
                     [-1 if b.offset is None else b.offset for b in items],
                     capacity, deadline=deadline, seed=seed, max_nodes=max_nodes)
    if outcome.status is not SolveStatus.FEASIBLE:
        return outcome.status, {}, outcome.nodes
    offsets = {b.id: outcome.offsets.get(i, b.offset or 0) for i, b in enumerate(items)}
    return SolveStatus.FEASIBLE, offsets, outcome.nodes
