"""One pass of the memory-aware list scheduler: the serial schedule generation scheme.

It is the warm start of the exact search and the fallback when that search is out of
time, so it must be quick (one pass of an event-driven schedule generation scheme) and
must never return an illegal schedule.

How it works. Time only moves forward. At each decision time, ops whose predecessors
have all started (so their earliest start is known) and that lie within a window of the
op sequence are tried in priority order (longest path to a sink first, then sequence
position; or sequence position alone; optionally ops that allocate nothing first, so
that what already holds memory finishes before more is loaded). An op starts if some
mode's lanes and budget draws fit now (the shortest such mode is taken) and every buffer
it touches that is not yet allocated fits at a first-fit aligned address among the
buffers alive now. An allocated buffer keeps its address until
its last accessor ends; since no op starts earlier than the current time, checking the
current occupancy is enough for the op's whole window.

A *safe* pass (``safe=True``) never deadlocks for want of bytes when its sequence, run
one op at a time, fits every memory (:func:`~.orders.serial_peaks`): the banker's rule.
It keeps, per memory and per sequence position ``k`` not yet started, the bytes the rest
of the sequence would hold at ``k`` if from now on the ops ran one at a time in sequence
order (every buffer already allocated until its last unstarted accessor, every other
one from its first to its last unstarted accessor), and starts an op ahead of the
head only if that stays within capacity everywhere. Starting the head, or an op that
allocates nothing, never raises it. So when nothing runs and nothing else starts, the
bytes held are exactly those the serial run holds at the head, and the head fits
beside them (only its address can still fail, where free bytes are not in one piece).

The passes a search runs, and their order, are :mod:`.portfolio`'s.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance, ModeView
from schedsearch.engine.orders import (
    bottleneck_lane,
    bottleneck_leads,
    large_buffers,
    on_lane,
    serial_peaks,
    task_ranks,
)
from schedsearch.engine.passes import PassSpec
from schedsearch.engine.placement.greedy import lowest_fit
from schedsearch.engine.solution import Solution

__all__ = ["Stall", "SerialPass", "UNBLOCK_BEYOND", "PERMUTED_BUFFERS", "CHARGE_PER_TRY",
           "CHARGE_PER_SCAN"]

#: A pass's work (calibrated seconds, :mod:`.timebudget`) per start attempt and per
#: eligible op its scans pass over. Fitted to 130 passes of tight-memory problems, the
#: bundled triple and two decoder layers at 637-7,972 ops on an idle 2-core machine
#: (session 19): 5-11e-6 s per attempt, 3-7e-7 s per op scanned; a scan-bound pass (a
#: wide window of loads that cannot start) took 4 s for 26,000 attempts and 4.7 million
#: scanned ops, which attempts alone had charged at 0.13 s, so reproducible solves at
#: 8,000 ops ran 18-29 s for a 10 s limit. Charged as fitted, those passes take about
#: 0.7 of their charge in all, at most 1.7 times it.
CHARGE_PER_TRY = 1e-5
CHARGE_PER_SCAN = 6e-7


@dataclass(frozen=True, slots=True)
class Stall:
    """Why a pass stopped: nothing runs and the op at the head of the sequence cannot fit."""

    time: int
    op: str
    reason: str



#: How many ready ops beyond the window an unblock tries, nearest first: trying them all
#: cost 450,000 start attempts (over 12 s) for one pass on the tight wide pair at 8,000
#: ops, where most loads are ready from the start and do not fit.
UNBLOCK_BEYOND = 64
#: Up to this many buffers that one op allocates are tried in every order when the
#: first order does not fit (5! = 120 orders at most).
PERMUTED_BUFFERS = 5

def _draw(lanes: dict[str, int], used: dict[str, int], mode: ModeView, sign: int) -> None:
    """Take (``sign`` 1) or give back (-1) what ``mode`` holds of lanes and budgets."""
    for lane, units in mode.lanes:
        lanes[lane] -= sign * units
    for budget, amount in mode.budgets:
        used[budget] += sign * amount


def _fits(inst: Instance, lanes: dict[str, int], used: dict[str, int], mode: ModeView) -> bool:
    """Whether ``mode``'s lanes are free and its budget draws fit beside ``used``."""
    return all(lanes[lane] >= units for lane, units in mode.lanes) and all(
        used[b] + amount <= inst.target.budgets[b] for b, amount in mode.budgets)


class _Memory:
    """Address occupancy of one memory: live blocks sorted by offset, first-fit search."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.blocks: list[tuple[int, int]] = []  # (offset, end offset)
        self.used = 0

    def first_fit(self, size: int, align: int) -> int | None:
        """The lowest aligned offset where ``size`` bytes fit now (:func:`lowest_fit`)."""
        return lowest_fit(self.blocks, size, align, self.capacity)

    def last_fit(self, size: int, align: int) -> int | None:
        """The highest aligned offset where ``size`` bytes fit, or None."""
        hi = self.capacity
        for offset, end in reversed(self.blocks):
            candidate = (hi - size) // align * align
            if candidate >= end:
                return candidate
            hi = min(hi, offset)
        candidate = (hi - size) // align * align
        return candidate if candidate >= 0 else None

    def take(self, offset: int, size: int) -> None:
        bisect.insort(self.blocks, (offset, offset + size))
        self.used += size

    def release(self, offset: int, size: int) -> None:
        self.blocks.remove((offset, offset + size))
        self.used -= size


class _SerialReserve:
    """The banker's rule of a safe pass (see the module docstring): per memory, for each
    sequence position, the bytes the sequence run one op at a time from now would hold
    there. Each buffer counts over one range of positions, which only shrinks (its
    accessors start) or grows leftward (it is allocated ahead of its first turn)."""

    def __init__(self, inst: Instance, pos: Sequence[int]) -> None:
        self.inst = inst
        n = inst.n_ops
        self.capacity = {m: spec.capacity_bytes for m, spec in inst.target.memories.items()}
        self.held = {m: np.zeros(n + 1, dtype=np.int64) for m in inst.target.memories}
        #: Per buffer, its accessors' sequence positions, sorted, and how many of the
        #: first and last of them have started.
        self.turns = [sorted(pos[i] for i in ops) for ops in inst.buffer_ops]
        self.lo = [0] * inst.n_buffers
        self.hi = [len(t) for t in self.turns]
        self.span: list[tuple[int, int] | None] = [None] * inst.n_buffers
        for b, turns in enumerate(self.turns):
            if turns:
                self._set(b, (turns[0], turns[-1]))

    def _set(self, b: int, span: tuple[int, int] | None) -> None:
        held, size = self.held[self.inst.buffer_memory[b]], self.inst.buffer_size[b]
        if self.span[b] is not None:
            lo, hi = self.span[b]
            held[lo:hi + 1] -= size
        if span is not None:
            held[span[0]:span[1] + 1] += size
        self.span[b] = span

    def _span_after(self, b: int, started: Sequence[bool], order: Sequence[int],
                    allocated: bool) -> tuple[int, int] | None:
        turns = self.turns[b]
        while self.lo[b] < self.hi[b] and started[order[turns[self.lo[b]]]]:
            self.lo[b] += 1
        while self.hi[b] > self.lo[b] and started[order[turns[self.hi[b] - 1]]]:
            self.hi[b] -= 1
        if self.lo[b] == self.hi[b]:
            return None
        return (0 if allocated else turns[self.lo[b]], turns[self.hi[b] - 1])

    def fits(self, op: int, placed: Sequence[int], started: list[bool],
             order: Sequence[int], head: int) -> bool:
        """Whether allocating ``placed`` (buffers of ``op``) and starting ``op`` keeps the
        serial run from ``head`` within capacity (nothing is changed)."""
        started[op] = True
        try:
            before = [(b, self.span[b], self.lo[b], self.hi[b]) for b in placed]
            for b in placed:
                self._set(b, self._span_after(b, started, order, True))
            fits = all(int(held[head:].max(initial=0)) <= self.capacity[m]
                       for m, held in self.held.items())
            for b, span, lo, hi in reversed(before):
                self._set(b, span)
                self.lo[b], self.hi[b] = lo, hi
            return fits
        finally:
            started[op] = False

    def commit(self, op: int, started: Sequence[bool], order: Sequence[int],
               allocated: Sequence[bool]) -> None:
        """``op`` started (after its buffers were allocated)."""
        for b in self.inst.op_buffers[op]:
            self._set(b, self._span_after(b, started, order, allocated[b]))


class SerialPass:
    """One run of the schedule generation scheme for a given sequence and window."""

    def __init__(self, inst: Instance, dag: Dag, order: Sequence[int], tail: Sequence[int],
                 spec: PassSpec, allowed: Sequence[Sequence[int]] | None = None) -> None:
        """The pass ``spec`` describes over ``order`` (its sequence) ranked by ``tail``
        (:func:`~.orders.tails`), each op among its ``allowed`` modes (default: all)."""
        self.inst, self.dag, self.order = inst, dag, order
        window, task_windows = spec.window, spec.task_windows
        hungry_first, hungry_unguarded = spec.hungry_first, spec.hungry_unguarded
        self.window, self.reserve, self.two_ended = window, spec.guarded, spec.two_ended
        self.large = (large_buffers(inst, spec.large_share) if spec.split
                      else [False] * inst.n_buffers)
        self.holders_first = spec.holders_first
        n = inst.n_ops
        self.pos = [0] * n
        for k, op in enumerate(order):
            self.pos[op] = k
        #: The window runs per group of ops: the whole sequence, or (``task_windows``)
        #: each task's own ops in sequence order, so that one task's ops waiting for
        #: memory do not hold every other task back (``gpos``: position in the group).
        tasks = {task: k for k, task in enumerate(dict.fromkeys(inst.op_task))}
        self.group = [tasks[inst.op_task[i]] if task_windows else 0 for i in range(n)]
        self.members: list[list[int]] = [[] for _ in range(max(self.group, default=0) + 1)]
        for op in order:
            self.members[self.group[op]].append(op)
        self.gpos = [0] * n
        for ops in self.members:
            for k, op in enumerate(ops):
                self.gpos[op] = k
        rank = task_ranks(inst) if hungry_first or hungry_unguarded else {}
        #: Per op, whether guard (1) keeps no room for it when it heads the sequence.
        self.unguarded = [hungry_unguarded and rank[inst.op_task[i]] == 0 for i in range(n)]
        lead = bottleneck_leads(inst, dag, tail) if spec.lead_first or spec.chain_first \
            else [0] * n
        #: ``chain_first``: loads without predecessors that lead to the busiest lane kind
        #: give way (``yields``) to the other ops that lead to it (``chain``) once those
        #: are ready (``pending``: their predecessors started, they did not).
        lane_op = on_lane(inst, bottleneck_lane(inst)) if spec.chain_first else [False] * n
        longest = max(lead, default=0)
        feeds = [lead[i] < longest and not lane_op[i] for i in range(n)]
        self.yields = [spec.chain_first and feeds[i] and not dag.preds[i] for i in range(n)]
        self.chain = [spec.chain_first and feeds[i] and bool(dag.preds[i]) for i in range(n)]
        self.pending: set[int] = set()
        self.backfill = spec.backfill
        self.key = [(min(rank[inst.op_task[i]], 1) if hungry_first else
                     lead[i] if spec.lead_first else
                     0 if spec.in_sequence else -tail[i],
                     -tail[i] if spec.lead_first else 0, self.pos[i]) for i in range(n)]
        self.consumers = [sorted(ops, key=self.pos.__getitem__) for ops in inst.buffer_ops]
        self.modes = [sorted(allowed[i] if allowed else range(len(inst.modes[i])),
                             key=lambda k, i=i: (inst.modes[i][k].duration, k))
                      for i in range(n)]
        self.missing = [len(p) for p in dag.preds]
        self.est = [0] * dag.n_nodes
        self.ready = [False] * n
        #: What an unblock scans instead of every op (stalls can come often on large
        #: problems): the sequence positions of the ops ready and not started, sorted, and
        #: those of them whose buffers are all allocated (``unallocated`` counts per op).
        self.waiting: list[int] = []
        self.unallocated = [len(buffers) for buffers in inst.op_buffers]
        self.holders: set[int] = set()
        self.started = [False] * n
        self.start = [0] * n
        self.end = [0] * n
        self.mode = [0] * n
        self.offset = [0] * inst.n_buffers
        self.allocated = [False] * inst.n_buffers
        self.unstarted = [len(ops) for ops in inst.buffer_ops]
        self.lane_free = dict(inst.target.lanes)
        self.budget_used = dict.fromkeys(inst.target.budgets, 0)
        self.memories = {name: _Memory(m.capacity_bytes)
                         for name, m in inst.target.memories.items()}
        self.running: list[tuple[int, int]] = []
        self.frees: list[tuple[int, int]] = []
        self.eligible: list[tuple[tuple[int, int], int]] = []
        self.head = 0
        self.ghead = [0] * len(self.members)
        self.glimit = [window] * len(self.members)
        self.dirty = False
        #: Start attempts so far, and eligible ops its scans passed over: the pass's
        #: deterministic measure of work done (:attr:`work`).
        self.tries = 0
        self.scanned = 0
        #: Per op, what decides whether a mode fits (its modes' lane and budget draws);
        #: within one instant resources only shrink as ops start, so a draw that did not
        #: fit, or a set of allocations that did not place, fails again until the next
        #: instant: those are rejected without a try (:meth:`_try_start`).
        self.draws = [tuple((inst.modes[i][k].lanes, inst.modes[i][k].budgets)
                            for k in self.modes[i]) for i in range(n)]
        self.no_mode: set[tuple[Any, ...]] = set()
        self.no_room: set[tuple[Any, ...]] = set()
        #: The banker's rule, where the sequence run one op at a time fits at all.
        self.serial_reserve = _SerialReserve(inst, self.pos) if spec.safe and all(
            peak <= inst.target.memories[m].capacity_bytes
            for m, peak in serial_peaks(inst, order).items()) else None

    # ------------------------------------------------------------------ bookkeeping
    def _release(self, node: int) -> None:
        """``node``'s predecessors have all started: make it eligible (a barrier passes)."""
        stack = [node]
        while stack:
            v = stack.pop()
            if v >= self.dag.n_ops:
                for s, lag in self.dag.succs[v]:
                    self.est[s] = max(self.est[s], self.est[v] + lag)
                    self.missing[s] -= 1
                    if not self.missing[s]:
                        stack.append(s)
                continue
            self.ready[v] = True
            if self.chain[v]:
                self.pending.add(v)
            bisect.insort(self.waiting, self.pos[v])
            if not self.unallocated[v]:
                self.holders.add(v)
            if self.gpos[v] <= self.glimit[self.group[v]]:
                bisect.insort(self.eligible, (self.key[v], v))
                self.dirty = True

    def _advance_window(self) -> None:
        order, started = self.order, self.started
        while self.head < len(order) and started[order[self.head]]:
            self.head += 1
        for g, ops in enumerate(self.members):
            head = self.ghead[g]
            while head < len(ops) and started[ops[head]]:
                head += 1
            self.ghead[g] = head
            new_limit = head + self.window
            for k in range(self.glimit[g] + 1, min(new_limit, len(ops) - 1) + 1):
                op = ops[k]
                if self.ready[op] and not started[op]:
                    bisect.insort(self.eligible, (self.key[op], op))
                    self.dirty = True
            self.glimit[g] = max(self.glimit[g], new_limit)

    def _finish_until(self, now: int) -> None:
        inst = self.inst
        while self.running and self.running[0][0] <= now:
            _, op = heapq.heappop(self.running)
            mode = inst.modes[op][self.mode[op]]
            for lane, n in mode.lanes:
                self.lane_free[lane] += n
            for budget, n in mode.budgets:
                self.budget_used[budget] -= n
        while self.frees and self.frees[0][0] <= now:
            _, b = heapq.heappop(self.frees)
            self.memories[inst.buffer_memory[b]].release(self.offset[b], inst.buffer_size[b])

    # ------------------------------------------------------------------ one op
    def _pick_mode(self, op: int) -> int | None:
        inst = self.inst
        for k in self.modes[op]:
            mode = inst.modes[op][k]
            if all(self.lane_free[lane] >= n for lane, n in mode.lanes) and all(
                    self.budget_used[b] + n <= inst.target.budgets[b] for b, n in mode.budgets):
                return k
        return None

    def _place_buffers(self, op: int) -> list[tuple[int, int]] | None:
        """Addresses for the op's unallocated buffers (taken), or None (nothing taken).

        First fit, the most demanding alignment first: a small buffer placed first at
        offset 0 could push a strictly aligned one past the end of a memory that holds
        both. When that fails although the free bytes would suffice, the other orders of
        up to :data:`PERMUTED_BUFFERS` buffers are tried too: with alignment padding, the
        order decides whether a few buffers pack into a nearly full memory."""
        inst = self.inst
        waiting = sorted((b for b in inst.op_buffers[op] if not self.allocated[b]),
                         key=lambda b: (-inst.buffer_align[b], -inst.buffer_size[b], b))
        placed = self._place_in_order(waiting)
        if placed is not None or not 1 < len(waiting) <= PERMUTED_BUFFERS:
            return placed
        need: dict[str, int] = {}
        for b in waiting:
            need[inst.buffer_memory[b]] = need.get(inst.buffer_memory[b], 0) + inst.buffer_size[b]
        if any(self.memories[m].capacity - self.memories[m].used < n for m, n in need.items()):
            return None
        for order in itertools.islice(itertools.permutations(waiting), 1, None):
            placed = self._place_in_order(order)
            if placed is not None:
                return placed
        return None

    def _place_in_order(self, buffers: Sequence[int]) -> list[tuple[int, int]] | None:
        inst = self.inst
        placed: list[tuple[int, int]] = []
        for b in buffers:
            memory = self.memories[inst.buffer_memory[b]]
            if self.large[b] or self.two_ended and self.unstarted[b] > 1:  # out of the way
                offset = memory.last_fit(inst.buffer_size[b], inst.buffer_align[b])
            else:
                offset = memory.first_fit(inst.buffer_size[b], inst.buffer_align[b])
            if offset is None:
                self._undo(placed)
                return None
            memory.take(offset, inst.buffer_size[b])
            placed.append((b, offset))
        return placed

    def _undo(self, placed: list[tuple[int, int]]) -> None:
        for b, offset in placed:
            self.memories[self.inst.buffer_memory[b]].release(offset, self.inst.buffer_size[b])

    def _leaves_room(self, op: int, placed: list[tuple[int, int]]) -> bool:
        """Guard (1): after allocating, the bytes still free (counting those ``op`` frees
        when it ends) must hold the unallocated buffers of the op at the head of the
        sequence and of the next consumer (in sequence order) of each buffer just
        allocated, whichever needs most. The head itself is never held back."""
        inst = self.inst
        new = {b for b, _ in placed}
        waiting = [self.order[self.head]] if self.head < len(self.order) and \
            not self.unguarded[self.order[self.head]] else []
        for b in new:
            waiting += [c for c in self.consumers[b] if not self.started[c] and c != op][:1]
        need: dict[str, int] = {}
        for consumer in waiting:
            if consumer == op:
                continue
            missing: dict[str, int] = {}
            for x in inst.op_buffers[consumer]:
                if not self.allocated[x] and x not in new:
                    memory = inst.buffer_memory[x]
                    missing[memory] = missing.get(memory, 0) + inst.buffer_size[x]
            for memory, size in missing.items():
                need[memory] = max(need.get(memory, 0), size)
        released: dict[str, int] = {}
        for b in inst.op_buffers[op]:
            if self.unstarted[b] == 1:  # op is its last accessor: freed when op ends
                memory = inst.buffer_memory[b]
                released[memory] = released.get(memory, 0) + inst.buffer_size[b]
        return all(self.memories[m].capacity - self.memories[m].used + released.get(m, 0)
                   >= size for m, size in need.items())

    def _in_the_way(self, op: int, k: int, now: int) -> bool:
        """Whether ``op`` in mode ``k`` from ``now`` keeps more of the chain ops that
        become ready before it ends (:attr:`pending`) from their fastest modes than
        would be kept without it."""
        end = now + self.inst.modes[op][k].duration
        soon = sorted((self.est[c], c) for c in self.pending if now < self.est[c] < end)
        return bool(soon) and self._slowed(soon, self.inst.modes[op][k]) > \
            self._slowed(soon, None)

    def _slowed(self, soon: list[tuple[int, int]], extra: ModeView | None) -> int:
        """How many of ``soon`` ((ready time, op), in that order) would not start in their
        fastest mode when ready, each taking the fastest that fits then and holding it,
        with the running ops holding theirs until they end and ``extra`` to the end."""
        inst = self.inst
        lanes, used = dict(self.lane_free), dict(self.budget_used)
        if extra is not None:
            _draw(lanes, used, extra, 1)
        ending = sorted(((end, inst.modes[r][self.mode[r]]) for end, r in self.running),
                        key=lambda item: item[0])
        freed = slowed = 0
        for at, c in soon:
            while freed < len(ending) and ending[freed][0] <= at:
                _draw(lanes, used, ending[freed][1], -1)
                freed += 1
            fits = [j for j in self.modes[c] if _fits(inst, lanes, used, inst.modes[c][j])]
            slowed += not fits or fits[0] != self.modes[c][0]
            if fits:
                _draw(lanes, used, inst.modes[c][fits[0]], 1)
        return slowed

    def _allocations(self, op: int) -> tuple[Any, ...]:
        """What decides whether ``op``'s unallocated buffers place now: per buffer, its
        memory, size, alignment and end of memory it is placed from."""
        inst = self.inst
        return tuple(sorted((inst.buffer_memory[b], inst.buffer_size[b], inst.buffer_align[b],
                             self.large[b] or self.two_ended and self.unstarted[b] > 1)
                            for b in inst.op_buffers[op] if not self.allocated[b]))

    def _try_start(self, op: int, now: int) -> bool:
        if self.est[op] > now or self.draws[op] in self.no_mode:
            return False
        self.tries += 1
        k = self._pick_mode(op)
        if k is None:
            self.no_mode.add(self.draws[op])
            return False
        if self.yields[op] and self._in_the_way(op, k, now):
            return False
        allocations = self._allocations(op)
        if allocations in self.no_room:
            return False
        placed = self._place_buffers(op)
        if placed is None:
            self.no_room.add(allocations)
            return False
        at_head = self.order[self.head] == op
        if placed and not at_head and (
                self.reserve and not self._leaves_room(op, placed) or
                self.serial_reserve is not None and not self.serial_reserve.fits(
                    op, [b for b, _ in placed], self.started, self.order, self.head)):
            self._undo(placed)
            return False
        self._commit(op, k, now, placed)
        return True

    def _commit(self, op: int, k: int, now: int, placed: list[tuple[int, int]]) -> None:
        inst = self.inst
        mode = inst.modes[op][k]
        self.started[op], self.mode[op], self.start[op] = True, k, now
        self.pending.discard(op)
        del self.waiting[bisect.bisect_left(self.waiting, self.pos[op])]
        self.holders.discard(op)
        self.end[op] = end = now + mode.duration
        for lane, n in mode.lanes:
            self.lane_free[lane] -= n
        for budget, n in mode.budgets:
            self.budget_used[budget] += n
        heapq.heappush(self.running, (end, op))
        for b, offset in placed:
            self.allocated[b], self.offset[b] = True, offset
            for c in inst.buffer_ops[b]:
                self.unallocated[c] -= 1
                if not self.unallocated[c] and self.ready[c] and not self.started[c]:
                    self.holders.add(c)
        if self.serial_reserve is not None:
            self.serial_reserve.commit(op, self.started, self.order, self.allocated)
        for b in inst.op_buffers[op]:
            self.unstarted[b] -= 1
            if not self.unstarted[b]:
                heapq.heappush(self.frees, (max(self.end[i] for i in inst.buffer_ops[b]), b))
        for s, lag in self.dag.succs[op]:
            self.est[s] = max(self.est[s], end + lag)
            self.missing[s] -= 1
            if not self.missing[s]:
                self._release(s)

    @property
    def work(self) -> float:
        """The work done so far in calibrated seconds: what the budget is charged."""
        return CHARGE_PER_TRY * self.tries + CHARGE_PER_SCAN * self.scanned

    # ------------------------------------------------------------------ the loop
    def run(self, max_work: float | None = None,
            deadline: float | None = None) -> Solution | Stall | None:
        """The pass's schedule, or why it stalled, or None when it gave up after
        ``max_work`` (:attr:`work`) or at ``deadline`` (a perf_counter value)."""
        n = self.inst.n_ops
        for v in range(self.dag.n_nodes):
            if not self.missing[v]:
                self._release(v)
        now, done = 0, 0
        events = 0
        while done < n:
            events += 1
            if max_work is not None and self.work > max_work:
                return None
            if deadline is not None and events % 64 == 0 and time.perf_counter() > deadline:
                return None
            self._finish_until(now)
            self.no_mode.clear()
            self.no_room.clear()
            self.dirty = False
            if self.holders_first:  # ops that allocate nothing new go first
                self.scanned += len(self.eligible)
                for _, op in list(self.eligible):
                    if not self.started[op] and \
                            all(self.allocated[b] for b in self.inst.op_buffers[op]) and \
                            self._try_start(op, now):
                        done += 1
            started, est, draws, no_mode = self.started, self.est, self.draws, self.no_mode
            self.scanned += len(self.eligible)
            for _, op in list(self.eligible):  # what _try_start refuses first, inline:
                if started[op] or est[op] > now or draws[op] in no_mode:
                    continue  # a wide window scans thousands of such ops per event
                if self._try_start(op, now):
                    done += 1
            self.eligible = [item for item in self.eligible if not started[item[1]]]
            self._advance_window()
            if self.frees and self.frees[0][0] <= now:
                self.dirty = True
            if self.dirty:
                continue
            if self.backfill:
                filled = self._backfill(now)
                if filled:
                    done += filled
                    continue
            upcoming = [t for t in (self.running[0][0] if self.running else None,
                                    self.frees[0][0] if self.frees else None) if t is not None]
            upcoming += [self.est[op] for _, op in self.eligible if self.est[op] > now]
            if not upcoming:
                unblocked = self._unblock(now)
                if unblocked:
                    done += unblocked
                    continue
                return self._stall(now)
            now = min(upcoming)
        return Solution(modes=tuple(self.mode), starts=tuple(self.start),
                        offsets=tuple(self.offset))

    def _unblock(self, now: int) -> int:
        """At a would-be stall (nothing runs, nothing eligible starts), start what can
        only help: ready ops anywhere in the sequence that allocate nothing new (they
        finish what holds memory), else the first eligible op that fits without guard
        (1), which held it back for a head op that fragmentation blocks anyway (its bytes
        are free, but not in one piece), else the first ready op beyond the window that
        fits without it (the window had kept out, say, the operand loads of the very GEMM
        tiles whose memory the blocked head waits for). How many ops started. Only ops
        ready and not started are scanned (stalls can come often on large problems)."""
        started = 0
        for op in sorted(self.holders):
            if self._try_start(op, now):
                started += 1
        if started or not self.reserve:
            return started
        self.reserve = False
        try:
            beyond = self._beyond()
            return int(any(not self.started[op] and self._try_start(op, now)
                           for _, op in list(self.eligible)) or
                       any(self._try_start(op, now) for op in beyond))
        finally:
            self.reserve = True

    def _backfill(self, now: int) -> int:
        """Start ready ops without predecessors past the window, in sequence order, that
        fit now in a mode leaving each of its lane kinds a free unit, which stays for the
        window's next op (``backfill``); how many started."""
        beyond = self._beyond()
        self.scanned += len(beyond)
        started = 0
        for op in beyond:
            k = None if self.dag.preds[op] else self._pick_mode(op)
            if k is not None and all(self.lane_free[lane] > units
                                     for lane, units in self.inst.modes[op][k].lanes):
                started += self._try_start(op, now)  # it picks the same mode
        return started

    def _beyond(self) -> list[int]:
        """The first :data:`UNBLOCK_BEYOND` ready ops past their group's window."""
        if len(self.members) == 1:
            first = bisect.bisect_right(self.waiting, self.head + self.window)
            return [self.order[k] for k in self.waiting[first:first + UNBLOCK_BEYOND]]
        ops = (self.order[k] for k in self.waiting)
        return list(itertools.islice(
            (op for op in ops
             if self.gpos[op] > self.ghead[self.group[op]] + self.window), UNBLOCK_BEYOND))

    def _stall(self, now: int) -> Stall:
        inst = self.inst
        op = self.order[self.head]
        held: dict[str, int] = {}
        for b in inst.op_buffers[op]:
            if not self.allocated[b]:
                held[inst.buffer_memory[b]] = held.get(inst.buffer_memory[b], 0) + \
                    inst.buffer_size[b]
        parts = [f"{size} bytes of {m} while {self.memories[m].used} of "
                 f"{self.memories[m].capacity} are held by buffers that later ops still need"
                 for m, size in sorted(held.items())]
        return Stall(now, inst.op_names[op], "; ".join(parts) or "resources")
