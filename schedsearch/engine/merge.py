"""Several LNS windows' answers from one incumbent, merged into one schedule.

Why. Each LNS round solves one window per worker from the same incumbent and used to
accept only the best answer; the others were found again later, if at all. On the tight
wide pair at 7,966 ops both windows of a round improved in 37 rounds of 37, and a round
cost about 0.3 s there (most of it building, reading and placing, not CP-SAT), so
accepting one answer per round halved what the search kept.

How. A window's answer (:mod:`schedsearch.engine.lns`) changes the ops of its ranks and
moves every op after them left by one amount, its *shift*. Windows of disjoint ranks,
taken in start order, compose: an op keeps the answer of the last window starting at or
before it (its own, or the one whose shifted tail it is in), moved left by the shifts of
the windows before that one. Each window's answer is legal with the incumbent around it,
but the merged schedule need not be (a long pinned op of one window may meet another
window's shifted ops), so it is checked here, independently of how it was built, for
every precedence of the DAG and every lane kind's and budget's capacity; memory is the
placement engine's, which gives the merged answer its addresses afterwards.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance, Resource
from schedsearch.engine.solution import Solution

__all__ = ["WindowAnswer", "merge_windows", "keeps_times"]


@dataclass(frozen=True, slots=True)
class WindowAnswer:
    """One window's answer: its first rank in the incumbent's start order, how many
    ranks it freed, and the schedule CP-SAT returned."""

    first: int
    size: int
    solution: Solution


def merge_windows(inst: Instance, dag: Dag, inc: Incumbent,
                  answers: Sequence[WindowAnswer]) -> Solution | None:
    """The incumbent with every answer of ``answers`` applied (see the module docstring),
    or None when the free ops of one window reach past where the next opens, or the
    merged schedule breaks a precedence or a capacity. Offsets are the incumbent's: the
    caller places the buffers. Windows are taken by time (an op belongs to the last
    window that opens at or before its incumbent start), as :func:`.lns.window` frees
    them."""
    ordered = sorted(answers, key=lambda answer: answer.first)
    opens = [inc.starts[inc.ranked[a.first]] for a in ordered]  # each window's t0
    closes = [inc.starts[inc.ranked[a.first + a.size]] if a.first + a.size < len(inc.ranked)
              else None for a in ordered]  # where its free ops end (t1)
    if any(close is None or close > following
           for close, following in zip(closes[:-1], opens[1:], strict=True)):
        return None
    # how far each window moved the ops after it: the last op's move (every window but
    # the last is followed by ops, since the next one opens after it)
    last = next(v for v in reversed(inc.ranked) if v < inst.n_ops)
    before = list(itertools.accumulate(
        (inc.starts[last] - a.solution.starts[last] for a in ordered[:-1]), initial=0))
    modes, starts = list(inc.solution.modes), list(inc.solution.starts)
    for v in range(inst.n_ops):
        k = bisect_right(opens, inc.starts[v]) - 1  # the last window opening at or before v
        if k >= 0:
            modes[v] = ordered[k].solution.modes[v]
            starts[v] = ordered[k].solution.starts[v] - before[k]
    merged = Solution(tuple(modes), tuple(starts), inc.solution.offsets)
    return merged if keeps_times(inst, dag, merged) else None


def keeps_times(inst: Instance, dag: Dag, solution: Solution) -> bool:
    """Whether ``solution`` keeps every edge of ``dag`` (a barrier passing when its
    predecessors allow) and no lane kind or budget is ever over its capacity. Addresses
    are not looked at."""
    ends = solution.ends(inst)
    times = [*solution.starts, *([0] * (dag.n_nodes - dag.n_ops))]
    finish = [*ends, *([0] * (dag.n_nodes - dag.n_ops))]
    for v in dag.topo:
        if v >= dag.n_ops:
            times[v] = finish[v] = max((finish[p] + lag for p, lag in dag.preds[v]), default=0)
    if any(times[s] < finish[p] + lag for p, s, lag in dag.edges):
        return False
    draws: dict[Resource, list[tuple[int, int, int]]] = {}
    for v in range(inst.n_ops):
        if ends[v] > solution.starts[v]:
            for resource, amount in inst.draws(v, solution.modes[v]):
                if amount:
                    draws.setdefault(resource, []).append((solution.starts[v], ends[v], amount))
    capacity = inst.capacities()
    for resource, items in draws.items():
        held = np.array(items, dtype=np.int64)
        at = np.concatenate([held[:, 0], held[:, 1]])
        change = np.concatenate([held[:, 2], -held[:, 2]])
        order = np.lexsort((change, at))  # at one instant, what ends leaves first
        if int(np.cumsum(change[order]).max(initial=0)) > capacity[resource]:
            return False
    return True
