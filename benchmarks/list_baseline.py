"""The plain list schedule: the simplest legal scheduler, as a baseline for the search.

What a new user would write first, and what the search must never lose to. At each event
(time 0, and each time an op ends), the ops whose predecessors (:mod:`schedsearch.engine.hazards`,
tile granularity) have all ended are tried in the problem's op order (task by task, as
the operator library emits them); each starts in its first mode whose lanes and budget
draws fit now, if every buffer it touches that is not yet allocated fits at a first-fit
aligned address among the buffers alive now. A buffer is freed when its last accessor
ends. Nothing looks ahead, so memory can fill with operands whose partners never fit:
the schedule then deadlocks, and :func:`list_schedule` returns None.

Not part of the search (the search has its own portfolio); benchmarks only.
"""

from __future__ import annotations

import bisect
import heapq

from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.solution import Solution

__all__ = ["list_schedule"]


def _first_fit(blocks: list[tuple[int, int]], size: int, align: int,
               capacity: int) -> int | None:
    candidate = 0
    for offset, end in blocks:
        if candidate + size <= offset:
            break
        if end > candidate:
            candidate = -(-end // align) * align
    return candidate if candidate + size <= capacity else None


def list_schedule(inst: Instance, dag: Dag) -> Solution | None:
    """The plain list schedule of ``inst`` (see the module docstring), or None when it
    deadlocks (nothing runs and no ready op fits). ``dag`` must have no barrier nodes."""
    n = inst.n_ops
    missing = [len(p) for p in dag.preds]
    est = [0] * n
    ready = [v for v in range(n) if not missing[v]]
    lane_free = dict(inst.target.lanes)
    budget_used = dict.fromkeys(inst.target.budgets, 0)
    blocks: dict[str, list[tuple[int, int]]] = {m: [] for m in inst.target.memories}
    offset = [0] * inst.n_buffers
    allocated = [False] * inst.n_buffers
    unended = [len(ops) for ops in inst.buffer_ops]
    modes, starts = [0] * n, [0] * n
    running: list[tuple[int, int]] = []
    now = done = 0
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
                    bisect.insort(ready, s)
        for op in list(ready):
            if est[op] > now or not _start(inst, op, now, lane_free, budget_used, blocks,
                                            offset, allocated, modes, starts):
                continue
            ready.remove(op)
            heapq.heappush(running, (now + inst.modes[op][modes[op]].duration, op))
            done += 1
        upcoming = [running[0][0]] if running else []
        upcoming += [est[op] for op in ready if est[op] > now]
        if not upcoming:
            return None if done < n else Solution(tuple(modes), tuple(starts), tuple(offset))
        now = min(upcoming)
    return Solution(tuple(modes), tuple(starts), tuple(offset))


def _start(inst: Instance, op: int, now: int, lane_free: dict[str, int],
           budget_used: dict[str, int], blocks: dict[str, list[tuple[int, int]]],
           offset: list[int], allocated: list[bool], modes: list[int],
           starts: list[int]) -> bool:
    """Start ``op`` now in its first mode that fits, with first-fit addresses for its
    unallocated buffers; False (nothing changed) when it cannot."""
    k = next((k for k, mode in enumerate(inst.modes[op])
              if all(lane_free[lane] >= n for lane, n in mode.lanes)
              and all(budget_used[b] + n <= inst.target.budgets[b] for b, n in mode.budgets)),
             None)
    if k is None:
        return False
    mode = inst.modes[op][k]
    placed: list[int] = []
    for b in inst.op_buffers[op]:
        if allocated[b]:
            continue
        memory = inst.buffer_memory[b]
        size = inst.buffer_size[b]
        at = _first_fit(blocks[memory], size, inst.buffer_align[b],
                        inst.target.memories[memory].capacity_bytes)
        if at is None:
            for p in placed:
                blocks[inst.buffer_memory[p]].remove((offset[p], offset[p] + inst.buffer_size[p]))
                allocated[p] = False
            return False
        bisect.insort(blocks[memory], (at, at + size))
        offset[b], allocated[b] = at, True
        placed.append(b)
    for lane, n in mode.lanes:
        lane_free[lane] -= n
    for budget, n in mode.budgets:
        budget_used[budget] += n
    modes[op], starts[op] = k, now
    return True
