"""The plain list schedule: what a new user would write first, and the floor the search
never goes below (:func:`~schedsearch.engine.portfolio.list_schedule` runs it before
its portfolio, whatever the limit, and keeps its answer).

At each event (time 0, and each time an op ends), the ops whose predecessors
(:mod:`schedsearch.engine.hazards`) have all ended are tried in the problem's op order
(task by task, as the operator library emits them); each starts in its first mode whose
lanes and budget draws fit now, if every buffer it touches that is not yet allocated
fits at a first-fit aligned address among the buffers alive now. A buffer is freed when
its last accessor ends. Nothing looks ahead, so memory can fill with operands whose
partners never fit: the schedule then deadlocks, and :func:`plain_list_schedule`
returns None.

Within one instant resources only shrink as ops start, so an op whose modes' draws, or
whose allocations (memory, size and alignment of each, in order), already failed at
that instant fails again: it is passed over without a try (the schedule is the same;
at 2,000 ops on a tight memory, where most loads are ready from the start and do not
fit, trying each again took 20-25 s).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from typing import Any

from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.placement.greedy import lowest_fit
from schedsearch.engine.solution import Solution

__all__ = ["PlainResult", "plain_list_schedule"]


class PlainResult:
    """The plain list schedule (None where it deadlocks) and how many start attempts it
    made (its deterministic measure of work)."""

    __slots__ = ("solution", "tries")

    def __init__(self, solution: Solution | None, tries: int) -> None:
        self.solution, self.tries = solution, tries


def plain_list_schedule(inst: Instance, dag: Dag) -> PlainResult:
    """The plain list schedule of ``inst`` (see the module docstring). ``dag`` must have
    no barrier nodes.

    The ready ops are kept in classes: ops none of whose buffers is allocated yet, by
    their modes' draws and their buffers' memories, sizes and alignments (what decides
    whether they start now), every other op alone. Each instant walks the classes
    merged in op order and drops a class at its first member that does not start, so an
    instant costs its starts and classes, not every ready op (at 3,000 ops with a
    thousand weight loads ready from the start, 34 s became about one)."""
    n = inst.n_ops
    missing = [len(p) for p in dag.preds]
    est = [0] * n
    lane_free = dict(inst.target.lanes)
    budget_used = dict.fromkeys(inst.target.budgets, 0)
    blocks: dict[str, list[tuple[int, int]]] = {m: [] for m in inst.target.memories}
    capacity = {m: spec.capacity_bytes for m, spec in inst.target.memories.items()}
    offset = [0] * inst.n_buffers
    allocated = [False] * inst.n_buffers
    unended = [len(ops) for ops in inst.buffer_ops]
    draws = [tuple((mode.lanes, mode.budgets) for mode in modes) for modes in inst.modes]
    fresh = [True] * n  # none of the op's buffers is allocated: it is in a shared class
    classes: dict[Any, list[int]] = {}

    def key(op: int) -> Any:
        return (draws[op], tuple((inst.buffer_memory[b], inst.buffer_size[b],
                                  inst.buffer_align[b]) for b in inst.op_buffers[op])
                ) if fresh[op] else op

    waits: list[int] = []  # earliest starts still ahead of ready ops (lags)

    def make_ready(op: int) -> None:
        bisect.insort(classes.setdefault(key(op), []), op)
        if est[op] > now:
            heapq.heappush(waits, est[op])

    def leave(op: int) -> None:
        members = classes[key(op)]
        del members[bisect.bisect_left(members, op)]
        if not members:
            del classes[key(op)]

    now = done = tries = 0
    for v in range(n):
        if not missing[v]:
            make_ready(v)
    modes, starts = [0] * n, [0] * n
    running: list[tuple[int, int]] = []
    while done < n:
        while running and running[0][0] <= now:
            end, op = heapq.heappop(running)
            mode = inst.modes[op][modes[op]]
            for lane, k in mode.lanes:
                lane_free[lane] += k
            for budget, k in mode.budgets:
                budget_used[budget] -= k
            for b in inst.op_buffers[op]:
                unended[b] -= 1
                if not unended[b]:
                    size = inst.buffer_size[b]
                    blocks[inst.buffer_memory[b]].remove((offset[b], offset[b] + size))
            for s, lag in dag.succs[op]:
                est[s] = max(est[s], end + lag)
                missing[s] -= 1
                if not missing[s]:
                    make_ready(s)
        no_mode: set[Any] = set()
        no_room: set[Any] = set()
        # (op, entry number, class): the number keeps two entries of one op (an op
        # moved from a shared class to its own) from comparing their classes' keys.
        entry = itertools.count()
        heap = [(members[0], next(entry), k) for k, members in classes.items()]
        heapq.heapify(heap)
        while heap:
            op, _, k = heapq.heappop(heap)
            members = classes.get(k, [])
            at = bisect.bisect_left(members, op)
            if at == len(members) or members[at] != op:  # moved to a class of its own
                if at < len(members):
                    heapq.heappush(heap, (members[at], next(entry), k))
                continue
            if est[op] <= now:
                if draws[op] in no_mode:
                    continue  # the class is done for this instant
                tries += 1
                if not _start(inst, op, now, lane_free, budget_used, blocks, capacity,
                              offset, allocated, modes, starts, no_mode, no_room):
                    continue
                heapq.heappush(running, (now + inst.modes[op][modes[op]].duration, op))
                done += 1
                leave(op)
                missing[op] = -1  # started
                for b in inst.op_buffers[op]:  # ops sharing a buffer just allocated
                    for c in inst.buffer_ops[b]:
                        if fresh[c] and c != op:
                            if missing[c]:
                                fresh[c] = False
                                continue
                            leave(c)
                            fresh[c] = False
                            make_ready(c)
                            if c > op:
                                heapq.heappush(heap, (c, next(entry), c))
            members = classes.get(k, [])
            after = bisect.bisect_right(members, op)
            if after < len(members):
                heapq.heappush(heap, (members[after], next(entry), k))
        while waits and waits[0] <= now:
            heapq.heappop(waits)
        upcoming = [running[0][0]] if running else []
        upcoming += waits[:1]
        if not upcoming:
            break
        now = min(upcoming)
    solution = Solution(tuple(modes), tuple(starts), tuple(offset)) if done == n else None
    return PlainResult(solution, tries)


def _start(inst: Instance, op: int, now: int, lane_free: dict[str, int],
           budget_used: dict[str, int], blocks: dict[str, list[tuple[int, int]]],
           capacity: dict[str, int], offset: list[int], allocated: list[bool],
           modes: list[int], starts: list[int], no_mode: set[Any], no_room: set[Any]
           ) -> bool:
    """Start ``op`` now in its first mode that fits, with first-fit addresses for its
    unallocated buffers; False (nothing changed, the failure remembered in ``no_mode``
    or ``no_room``) when it cannot."""
    k = next((k for k, mode in enumerate(inst.modes[op])
              if all(lane_free[lane] >= u for lane, u in mode.lanes)
              and all(budget_used[b] + u <= inst.target.budgets[b] for b, u in mode.budgets)),
             None)
    if k is None:
        no_mode.add(tuple((mode.lanes, mode.budgets) for mode in inst.modes[op]))
        return False
    waiting = [b for b in inst.op_buffers[op] if not allocated[b]]
    signature = tuple((inst.buffer_memory[b], inst.buffer_size[b], inst.buffer_align[b])
                      for b in waiting)
    if signature in no_room:
        return False
    if not _allocate(inst, waiting, blocks, capacity, offset, allocated):
        no_room.add(signature)
        return False
    mode = inst.modes[op][k]
    for lane, u in mode.lanes:
        lane_free[lane] -= u
    for budget, u in mode.budgets:
        budget_used[budget] += u
    modes[op], starts[op] = k, now
    return True


def _allocate(inst: Instance, waiting: list[int], blocks: dict[str, list[tuple[int, int]]],
              capacity: dict[str, int], offset: list[int], allocated: list[bool]) -> bool:
    """First-fit addresses for ``waiting``, in order (taken), or False (nothing taken)."""
    placed: list[int] = []
    for b in waiting:
        memory, size = inst.buffer_memory[b], inst.buffer_size[b]
        at = lowest_fit(blocks[memory], size, inst.buffer_align[b], capacity[memory])
        if at is None:
            for p in placed:
                blocks[inst.buffer_memory[p]].remove((offset[p], offset[p] + inst.buffer_size[p]))
                allocated[p] = False
            return False
        bisect.insort(blocks[memory], (at, at + size))
        offset[b], allocated[b] = at, True
        placed.append(b)
    return True
