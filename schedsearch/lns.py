"""Large-neighbourhood search: improve a schedule too big for one CP-SAT model.

Each step frees the ops of one time window of the incumbent and re-solves them with the
rest pinned (:mod:`schedsearch.cpsat.variables`): ops starting before the window keep
their times; ops after it keep their relative timing and move left together by one
shift variable, so a window that packs tighter shortens the whole schedule. Pinned and
shifted buffers keep their offsets, so only the window's own buffers are re-placed.

Which window: ops are ranked by incumbent start; windows of ``size`` consecutive ranks
sweep from the start of the schedule to its end, each step advancing by half a window
plus a seeded random jitter; a sweep that improves nothing doubles the window size (up to
:data:`MAX_WINDOW`). A step is accepted only if it shortens the makespan, or keeps it and
lowers the sum of start times (room for the next window); the incumbent stays legal
throughout, since every model contains the incumbent itself (shift zero) as its hint.

The budget is deterministic: each window is charged the work it was granted (a conflict
cap, see :mod:`schedsearch.cpsat.model`) plus a fixed amount per model node for
building it, never a measured time, so runs repeat for a seed.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

from schedsearch.cpsat.model import build, solve_built
from schedsearch.cpsat.variables import Incumbent, Neighbourhood, Status
from schedsearch.hazards import Dag
from schedsearch.instance import Instance
from schedsearch.solution import Solution

__all__ = ["LnsResult", "improve", "window", "FIRST_WINDOW", "MAX_WINDOW"]

FIRST_WINDOW = 30
MAX_WINDOW = 120
#: Work (calibrated seconds) one window's CP-SAT run may use.
WINDOW_LIMIT = 1.0
#: Work charged per node of a window model, for building and reading it.
CHARGE_PER_NODE = 4e-4


@dataclass(frozen=True, slots=True)
class LnsResult:
    solution: Solution
    windows: int
    accepted: int


def window(inst: Instance, dag: Dag, inc: Incumbent, first: int,
           size: int) -> tuple[Neighbourhood, int]:
    """The neighbourhood freeing ranks ``[first, first + size)`` of the start order, and
    the time after which nothing interacts with what moves (the ``region_end``)."""
    nodes = sorted(range(dag.n_nodes), key=lambda v: (inc.starts[v], v))
    starts = [inc.starts[v] for v in nodes]
    t0 = starts[first]
    last = first + size
    t1 = starts[last] if last < len(nodes) else None
    max_lag = max((lag for _, _, lag in dag.edges), default=0)
    pinned_end = max((inc.ends[v] for v in nodes[:bisect_left(starts, t0)]), default=0)
    free = nodes[bisect_left(starts, t0):bisect_left(starts, t1) if t1 is not None else None]
    t_end = max((inc.ends[v] for v in free), default=t0)
    shift = max(0, t1 - pinned_end - max_lag) if t1 is not None else 0
    region_end = t_end + shift + max_lag + 1
    status = []
    for v in range(dag.n_nodes):
        s = inc.starts[v]
        if s < t0:
            status.append(Status.FIXED)
        elif t1 is None or s < t1:
            status.append(Status.FREE)
        elif s < region_end:
            status.append(Status.SHIFTED)
        else:
            status.append(Status.ABSENT)
    return Neighbourhood(tuple(status), t0, t_end, shift), region_end


def _score(inst: Instance, solution: Solution) -> tuple[int, int]:
    return solution.makespan(inst), sum(solution.starts)


def improve(inst: Instance, dag: Dag, solution: Solution, *, budget: float, seed: int,
            workers: int, lower: int,
            on_improve: Callable[[int], None] | None = None) -> LnsResult:
    """Improve ``solution`` by window re-solves until ``budget`` (calibrated seconds of
    work) is spent or the makespan reaches ``lower``."""
    rng = random.Random(seed)
    inc = Incumbent.of(inst, dag, solution)
    best = _score(inst, solution)
    size = min(FIRST_WINDOW, dag.n_nodes)
    spent, windows, accepted = 0.0, 0, 0
    first, improved_this_sweep = 0, False
    while spent < budget and best[0] > lower:
        hood, region_end = window(inst, dag, inc, first, size)
        built = build(inst, dag, inc, hood, 0, region_end)
        moving = sum(1 for s in hood.status if s in (Status.FREE, Status.SHIFTED))
        limit = min(WINDOW_LIMIT, budget - spent)
        outcome = solve_built(built, work=limit, seed=seed + windows,
                              workers=workers)
        spent += limit + CHARGE_PER_NODE * moving
        windows += 1
        if outcome.solution is not None and _score(inst, outcome.solution) < best:
            solution = outcome.solution
            best = _score(inst, solution)
            inc = Incumbent.of(inst, dag, solution)
            accepted += 1
            improved_this_sweep = True
            if on_improve is not None:
                on_improve(best[0])
        first += max(1, size // 2 + rng.randrange(max(1, size // 4)))
        if first + size // 2 >= dag.n_nodes:
            if not improved_this_sweep:
                size = min(2 * size, MAX_WINDOW, dag.n_nodes)
            first, improved_this_sweep = 0, False
    return LnsResult(solution, windows, accepted)
