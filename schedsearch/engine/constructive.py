"""A memory-aware list scheduler: a legal schedule fast, for every problem it can fit.

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

Why it does not deadlock. Loads that fill memory with operands whose partners can never
fit are the classic trap. Two guards: (1) an op that allocates buffers must leave room
(in bytes) for the other not-yet-allocated buffers of at least the hungriest consumer of
what it allocates, so a tile is loaded only when its partner tiles could be too; (2) ops
may run ahead of the oldest unstarted op of the sequence by at most ``window`` positions.
If every pass stalls (nothing running, nothing fits), the scheduler retries with a
narrower window on a depth-first sequence (each op right after what it needs), down to
a window of zero: ops start in sequence order, which holds no more memory than running
that sequence serially. Only if that too stalls is the problem reported as not fitting.

Which modes. The ``all`` policy lets an op take any mode; the ``priced`` policy only
the modes the energy LP prices cheapest (:mod:`schedsearch.engine.modes`): on the bundled pair
this keeps the DDR bandwidth busy with the cheaper half-rate loads and brings the
makespan from 3.5 % to 0.4 % above the lower bound; on the triple it is worse (its
cheapest copy mode is too long to pack), so a portfolio of passes runs both policies
and several sequences and windows, and keeps the shortest schedule.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from models.errors import InputError
from schedsearch.engine.bounds.lower import EnergyRelaxation, energy_relaxation
from schedsearch.engine.cpsat.model import WHOLE_MODEL_MAX_OPS, build, solve_built, whole_problem
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.modes import mode_prices
from schedsearch.engine.placement.greedy import lowest_fit
from schedsearch.engine.result import NoSchedule, SolveStatus
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["construct", "list_schedule", "exact_fallback", "stall_error",
           "tails", "Stall", "PassSpec", "problem_order", "interleaved_order",
           "hungriest_first_order", "task_ranks", "large_buffers", "LARGE_SHARE"]


@dataclass(frozen=True, slots=True)
class Stall:
    """Why a pass stopped: nothing runs and the op at the head of the sequence cannot fit."""

    time: int
    op: str
    reason: str


def tails(inst: Instance, dag: Dag, allowed: Sequence[Sequence[int]] | None = None
          ) -> list[int]:
    """Per node, the longest path from its start to the end of the schedule (each op at
    its shortest mode, among the ``allowed`` ones if given)."""
    tail = [0] * dag.n_nodes
    for v in reversed(dag.topo):
        if v >= dag.n_ops:
            own = 0
        elif allowed is None:
            own = inst.min_duration(v)
        else:
            own = min(inst.modes[v][k].duration for k in allowed[v])
        tail[v] = own + max((lag + tail[s] for s, lag in dag.succs[v]), default=0)
    return tail


def _heads(inst: Instance, dag: Dag) -> list[int]:
    head = [0] * dag.n_nodes
    for v in dag.topo:
        own = inst.min_duration(v) if v < dag.n_ops else 0
        for s, lag in dag.succs[v]:
            head[s] = max(head[s], head[v] + own + lag)
    return head


def _topological(dag: Dag, key: Sequence[tuple[Any, ...]]) -> list[int]:
    """The ops of ``dag`` in the topological order that always takes the ready node of
    smallest ``key`` (one per node, ending with the node's index, which breaks ties);
    barrier nodes pass without entering the order."""
    missing = [len(p) for p in dag.preds]
    heap = [key[v] for v in range(dag.n_nodes) if not missing[v]]
    heapq.heapify(heap)
    order = []
    while heap:
        v = heapq.heappop(heap)[-1]
        if v < dag.n_ops:
            order.append(v)
        for s, _ in dag.succs[v]:
            missing[s] -= 1
            if not missing[s]:
                heapq.heappush(heap, key[s])
    return order


def breadth_order(inst: Instance, dag: Dag, tail: Sequence[int]) -> list[int]:
    """Ops in a topological order by earliest possible start, then critical path."""
    head = _heads(inst, dag)
    return _topological(dag, [(head[v], -tail[v], v) for v in range(dag.n_nodes)])


def problem_order(dag: Dag) -> list[int]:
    """Ops in a topological order that keeps the problem's own op order where it can
    (task by task, as the operator library emits them): the ready op of lowest index
    first."""
    return _topological(dag, [(v,) for v in range(dag.n_nodes)])


def interleaved_order(inst: Instance, dag: Dag) -> list[int]:
    """Ops in a topological order that advances every task at the same pace: the ready op
    whose task has the least share of its work (shortest durations, in problem order)
    done before it goes first.

    Task by task (:func:`problem_order`) leaves one task's engines idle while the other
    runs; longest tail first loads the operands of many tiles of every task and fills a
    tight memory. Here each task keeps its own order (its tiles finish before others
    load) while the engines of all tasks stay busy: on the tight GEMM + RMSNorm of 2,048
    columns (129 ops) the list schedule drops from 65,023 to 52,450 ns."""
    work: dict[str, int] = {}
    done_before = [0] * inst.n_ops
    for i in range(inst.n_ops):
        task = inst.op_task[i]
        done_before[i] = work.get(task, 0)
        work[task] = done_before[i] + inst.min_duration(i)
    share = [done_before[i] / max(1, work[inst.op_task[i]]) for i in range(inst.n_ops)]
    share += [-1.0] * (dag.n_nodes - inst.n_ops)  # barriers pass as soon as they can
    return _topological(dag, [(share[v], v) for v in range(dag.n_nodes)])


#: A buffer of at least 1/LARGE_SHARE of its memory is *large*: few fit at once, and the
#: holes small buffers leave between them are what blocks it.
LARGE_SHARE = 4


def large_buffers(inst: Instance) -> list[bool]:
    """Per buffer, whether it is large (:data:`LARGE_SHARE`)."""
    return [inst.buffer_size[b] * LARGE_SHARE >= inst.target.memories[
        inst.buffer_memory[b]].capacity_bytes for b in range(inst.n_buffers)]


def task_ranks(inst: Instance) -> dict[str, int]:
    """Per task, its rank by the largest share of a memory one of its buffers takes
    (0: the hungriest), ties in problem order."""
    hunger: dict[str, float] = {}
    for op in range(inst.n_ops):
        task = inst.op_task[op]
        hunger[task] = max([hunger.get(task, 0.0)] + [
            inst.buffer_size[b] / inst.target.memories[inst.buffer_memory[b]].capacity_bytes
            for b in inst.op_buffers[op]])
    first_seen = {task: k for k, task in reversed(list(enumerate(inst.op_task)))}
    ranked = sorted(hunger, key=lambda task: (-hunger[task], first_seen[task]))
    return {task: k for k, task in enumerate(ranked)}


def hungriest_first_order(inst: Instance, dag: Dag) -> list[int]:
    """Ops in a topological order that puts the task with the largest buffer first and
    keeps each task's own order: the ready op of the hungriest task, lowest index first.

    Why. Where one task's blocks fill most of memory (an RMSNorm block of 2,048 columns:
    input, output and weight are 132 of 192 KiB), that task is the long pole: its
    computes can run beside almost nothing, so its chain of transfer, compute, transfer
    sets the pace, and the other tasks must fill the gaps. Issued in sequence with a wide
    window, this order starts the hungry task's next op as soon as it fits and lets the
    others' ready ops take what is left; guard (1) keeps room, in bytes, for the hungry
    task's next op. On the tight GEMM + RMSNorm of 2,048 columns at 600 ops the list
    schedule goes from 1.33 to 1.21 of the bound."""
    rank = task_ranks(inst)
    key = [(rank[inst.op_task[v]], v) for v in range(inst.n_ops)]
    key += [(-1, v) for v in range(inst.n_ops, dag.n_nodes)]  # barriers pass at once
    return _topological(dag, key)


def depth_order(dag: Dag, tail: Sequence[int]) -> list[int]:
    """Ops in a depth-first topological order: each sink right after what it needs.

    Sinks are taken longest tail first; an op's predecessors are visited in node order.
    Running this order keeps few buffers alive: a tile is loaded just before its use.
    """
    sinks = sorted((v for v in range(dag.n_nodes) if not dag.succs[v]),
                   key=lambda v: (-tail[v], v))
    done = [False] * dag.n_nodes
    order = []
    for sink in sinks:
        stack = [(sink, 0)]
        while stack:
            v, k = stack.pop()
            if done[v]:
                continue
            preds = dag.preds[v]
            while k < len(preds) and done[preds[k][0]]:
                k += 1
            if k < len(preds):
                stack.append((v, k + 1))
                stack.append((preds[k][0], 0))
                continue
            done[v] = True
            if v < dag.n_ops:
                order.append(v)
    return order


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


class _Pass:
    """One run of the schedule generation scheme for a given sequence and window."""

    def __init__(self, inst: Instance, dag: Dag, order: Sequence[int], window: int,
                 reserve: bool, tail: Sequence[int],
                 allowed: Sequence[Sequence[int]] | None = None,
                 two_ended: bool = False, in_sequence: bool = False,
                 holders_first: bool = False, split: bool = False,
                 hungry_first: bool = False, task_windows: bool = False,
                 hungry_unguarded: bool = False) -> None:
        self.inst, self.dag, self.order = inst, dag, order
        self.window, self.reserve, self.two_ended = window, reserve, two_ended
        self.large = large_buffers(inst) if split else [False] * inst.n_buffers
        self.holders_first = holders_first
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
        self.key = [(min(rank[inst.op_task[i]], 1) if hungry_first else
                     0 if in_sequence else -tail[i], self.pos[i]) for i in range(n)]
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
        #: Start attempts so far: the pass's deterministic measure of work done.
        self.tries = 0
        #: Per op, what decides whether a mode fits (its modes' lane and budget draws);
        #: within one instant resources only shrink as ops start, so a draw that did not
        #: fit, or a set of allocations that did not place, fails again until the next
        #: instant: those are rejected without a try (:meth:`_try_start`).
        self.draws = [tuple((inst.modes[i][k].lanes, inst.modes[i][k].budgets)
                            for k in self.modes[i]) for i in range(n)]
        self.no_mode: set[tuple[Any, ...]] = set()
        self.no_room: set[tuple[Any, ...]] = set()

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
        up to :data:`_PERMUTED_BUFFERS` buffers are tried too: with alignment padding, the
        order decides whether a few buffers pack into a nearly full memory."""
        inst = self.inst
        waiting = sorted((b for b in inst.op_buffers[op] if not self.allocated[b]),
                         key=lambda b: (-inst.buffer_align[b], -inst.buffer_size[b], b))
        placed = self._place_in_order(waiting)
        if placed is not None or not 1 < len(waiting) <= _PERMUTED_BUFFERS:
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
        allocations = self._allocations(op)
        if allocations in self.no_room:
            return False
        placed = self._place_buffers(op)
        if placed is None:
            self.no_room.add(allocations)
            return False
        at_head = self.order[self.head] == op
        if self.reserve and placed and not at_head and not self._leaves_room(op, placed):
            self._undo(placed)
            return False
        self._commit(op, k, now, placed)
        return True

    def _commit(self, op: int, k: int, now: int, placed: list[tuple[int, int]]) -> None:
        inst = self.inst
        mode = inst.modes[op][k]
        self.started[op], self.mode[op], self.start[op] = True, k, now
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
        for b in inst.op_buffers[op]:
            self.unstarted[b] -= 1
            if not self.unstarted[b]:
                heapq.heappush(self.frees, (max(self.end[i] for i in inst.buffer_ops[b]), b))
        for s, lag in self.dag.succs[op]:
            self.est[s] = max(self.est[s], end + lag)
            self.missing[s] -= 1
            if not self.missing[s]:
                self._release(s)

    # ------------------------------------------------------------------ the loop
    def run(self, max_tries: int | None = None,
            deadline: float | None = None) -> Solution | Stall | None:
        """The pass's schedule, or why it stalled, or None when it gave up after
        ``max_tries`` start attempts or at ``deadline`` (a perf_counter value)."""
        n = self.inst.n_ops
        for v in range(self.dag.n_nodes):
            if not self.missing[v]:
                self._release(v)
        now, done = 0, 0
        events = 0
        while done < n:
            events += 1
            if max_tries is not None and self.tries > max_tries:
                return None
            if deadline is not None and events % 64 == 0 and time.perf_counter() > deadline:
                return None
            self._finish_until(now)
            self.no_mode.clear()
            self.no_room.clear()
            self.dirty = False
            if self.holders_first:  # ops that allocate nothing new go first
                for _, op in list(self.eligible):
                    if not self.started[op] and \
                            all(self.allocated[b] for b in self.inst.op_buffers[op]) and \
                            self._try_start(op, now):
                        done += 1
            for _, op in list(self.eligible):
                if not self.started[op] and self._try_start(op, now):
                    done += 1
            self.eligible = [item for item in self.eligible if not self.started[item[1]]]
            self._advance_window()
            if self.frees and self.frees[0][0] <= now:
                self.dirty = True
            if self.dirty:
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


@dataclass(frozen=True, slots=True)
class PassSpec:
    """One pass of the portfolio: which modes (``all``, ``priced`` or ``large_fast``: ops
    that access a large buffer only at their shortest modes), which sequence
    (``breadth``, ``depth``, ``problem``, ``interleaved`` or ``hungry``:
    :func:`breadth_order`, :func:`depth_order`, :func:`problem_order`,
    :func:`interleaved_order`, :func:`hungriest_first_order`), how far ops
    may run ahead of the oldest unstarted one (``window``), whether eligible ops are tried
    in sequence order rather than longest tail first (``in_sequence``), and whether ops
    that allocate nothing go first (``holders_first``: finish what already holds memory
    before loading more)."""

    policy: str
    sequence: str
    window: int
    in_sequence: bool = False
    holders_first: bool = False
    #: Large buffers (:data:`LARGE_SHARE`) at the highest address that fits, the others
    #: at the lowest: the small ones' holes then do not split the space a large one
    #: needs (tight wide pair, 161 ops: 1.38 -> 1.32 of the bound, no pass worse by more
    #: than 0.3 % on the other tight problems).
    split: bool = False
    #: Eligible ops of the hungriest task (:func:`task_ranks`) before the others', each
    #: group in sequence order: the long pole never waits for an op of a filler task.
    hungry_first: bool = False
    #: A window per task instead of one over the whole sequence (see :class:`_Pass`).
    task_windows: bool = False
    #: Guard (1) keeps no room for the hungriest task's op at the head of the sequence.
    hungry_unguarded: bool = False
    #: Run only where some buffer is large (:data:`LARGE_SHARE`).
    large_only: bool = False


#: The portfolio, in the order tried. Every pass the budget allows runs and the shortest
#: legal schedule wins; measured on the bundled pair and triple at 130-8,000 ops, and on
#: the tight-memory problems of ``benchmarks/bench_memory.py``, no single pass is best
#: everywhere. Where VTCM binds, the problem's own order with a narrow window comes first
#: (it finishes a task's tiles before it loads many others': 1.04 of the bound on the
#: tight pair where the longest-tail-first passes reach 1.75), then the same order with
#: the ready ops tried in sequence (what a plain list scheduler does: 1.096 on the tight
#: triple where the first pass gives 1.127; a window of 64 matches no window there and
#: costs 40 times fewer start attempts at 2,000 ops). The cheap passes come first, so a
#: large problem's budget reaches several: a wide window suits the priced modes, a narrow
#: one large problems; breadth order stalls on big ones. The interleaved passes (cheap)
#: come before the hungriest-first one among them (see :data:`PASS_SHARE`).
#: Where some buffer is large, the hungriest task first with a window per task leads,
#: in three variants. First, with its head unguarded (``hungry_unguarded``: guard (1) no
#: longer keeps 64 KiB free for the norm's next transfer while the bus cannot take it
#: anyway, so the GEMM loads into that room), every mode allowed and a window of 4 per
#: task (a window of 128 gave the same or worse, 1.35 instead of 1.17 of the bound at
#: 161 ops, at up to 15 times the cost: 5.5 s instead of 0.4 at 7,966 ops); then, after the
#: problem-order passes, the guarded one with the shortest modes for large buffers
#: (``large_fast``), and the unguarded one with them. With one window over the whole
#: sequence the hungriest-first pass needed 1,024 positions to reach the GEMM's ops
#: (6 s at 2,011 ops) and a 7,966-op problem's budget never reached it; per task, 128
#: give the same answer in a fifth of the attempts. Measured from the list scheduler on
#: the tight wide pair at 161/609/2,011/7,966 ops: guarded 1.21 of the bound at every
#: size; unguarded, large_fast 1.34/1.114/1.255/1.257; unguarded, all modes, window 4
#: 1.169/1.122/1.115/1.113 (the norm waits for the GEMM's row at some blocks and not at
#: others, depending on how the rows fall against the blocks, so no variant wins
#: everywhere). The Ascend pair keeps its figures (1.118 at 7,972 ops, 10 s), and the
#: tight chain gains (1.146 -> 1.06 at 7,806 ops).
_PORTFOLIO = (PassSpec("all", "hungry", 4, True, split=True, task_windows=True,
                       hungry_unguarded=True, large_only=True),
              PassSpec("all", "problem", 16), PassSpec("all", "problem", 64, True),
              PassSpec("large_fast", "hungry", 128, True, split=True, task_windows=True),
              PassSpec("large_fast", "hungry", 128, True, split=True, task_windows=True,
                       hungry_unguarded=True),
              PassSpec("priced", "interleaved", 16, True), PassSpec("all", "interleaved", 16),
              PassSpec("priced", "interleaved", 256, True),
              PassSpec("large_fast", "interleaved", 64, True, split=True, hungry_first=True),
              PassSpec("all", "breadth", 64), PassSpec("all", "depth", 64),
              PassSpec("priced", "breadth", 256), PassSpec("priced", "depth", 1024),
              PassSpec("priced", "depth", 1024, True), PassSpec("all", "depth", 1024, True, True),
              PassSpec("all", "breadth", 256), PassSpec("priced", "depth", 64),
              PassSpec("all", "depth", 1024), PassSpec("all", "problem", 1024),
              PassSpec("priced", "depth", 4096))
#: Up to this many buffers that one op allocates are tried in every order when the
#: first order does not fit (5! = 120 orders at most).
_PERMUTED_BUFFERS = 5
#: Tried only when every portfolio pass stalled, in turn: (sequence, window, guard,
#: two-ended placement). Two-ended placement puts buffers that outlive the op starting
#: them at the top of memory and those that die with it at the bottom, so that short
#: lives do not fragment the space long ones need.
_FALLBACK = (("depth", 16, True, False), ("depth", 0, False, False),
             ("depth", 0, False, True))
#: The share of the work and wall time left that one pass after the first finished one
#: may take, so that a slow pass does not take the time of the cheaper ones after it:
#: the hungriest-first sequence pass takes 2.9 s at 2,000 ops and 9 s at 8,000 on the
#: tight wide pair (where it is best at 2,000), and placed before the interleaved passes
#: it left the Ascend pair at 8,000 ops without the one that is best there (1.173 of the
#: bound instead of 1.118 at 10 s).
PASS_SHARE = 0.5
#: How many ready ops beyond the window an unblock tries, nearest first: trying them all
#: cost 450,000 start attempts (over 12 s) for one pass on the tight wide pair at 8,000
#: ops, where most loads are ready from the start and do not fit.
UNBLOCK_BEYOND = 64
#: Work charged per start attempt of a pass (calibrated seconds): a pass's cost grows
#: with its window as well as its ops, and attempts count both. Measured 2e-6 to 4e-6 s
#: per attempt on a shared 2-core machine at 500-8,000 ops.
CHARGE_PER_TRY = 5e-6
#: Relative tolerance under which a mode's price counts as its op's cheapest.
_PRICE_TOLERANCE = 1e-6


def priced_modes(inst: Instance, relaxation: EnergyRelaxation | None) -> list[list[int]]:
    """Per op, the modes whose price under ``relaxation``
    (:func:`schedsearch.engine.modes.mode_prices`) is its cheapest: what the ``priced`` policy
    allows."""
    allowed = []
    for prices in mode_prices(inst, relaxation):
        cheapest = min(prices)
        allowed.append([k for k, price in enumerate(prices)
                        if price <= cheapest * (1 + _PRICE_TOLERANCE) + 1e-12])
    return allowed


def construct(inst: Instance, dag: Dag, source: str = "<problem>",
              budget: TimeBudget | None = None, *, seed: int = 0, workers: int = 1,
              priced: list[list[int]] | None = None) -> Solution:
    """:func:`list_schedule`'s solution (``priced`` as there); when every pass stalls,
    :func:`exact_fallback` within ``budget`` (``seed`` and ``workers`` as there). Without
    a budget the stall is the answer (:func:`stall_error`): the exact search runs only on
    time the caller gave, never on a hidden allowance of its own."""
    found = list_schedule(inst, dag, budget, priced=priced)
    if isinstance(found, Solution):
        return found
    if budget is None:
        raise stall_error(found, source, "every list-scheduling pass stalled, and no time "
                          "was given for the exact search")
    return exact_fallback(inst, dag, found, source, budget, seed, workers)


def _shortest(inst: Instance, op: int) -> list[int]:
    """The modes of ``op`` of its shortest duration."""
    least = inst.min_duration(op)
    return [k for k, mode in enumerate(inst.modes[op]) if mode.duration == least]


class _Sequences:
    """The mode policies that apply to ``inst`` and each (policy, sequence) computed
    once: the order and the tails it was ranked by. ``priced`` is :func:`priced_modes`
    when the caller already has it (it costs an LP), else it is computed here."""

    def __init__(self, inst: Instance, dag: Dag, priced: list[list[int]] | None = None
                 ) -> None:
        self.inst, self.dag = inst, dag
        self.policies: dict[str, list[list[int]] | None] = {"all": None}
        if priced is None:
            priced = priced_modes(inst, energy_relaxation(inst.problem, inst.target))
        if any(len(modes) < len(inst.modes[i]) for i, modes in enumerate(priced)):
            self.policies["priced"] = priced
        large = large_buffers(inst)
        self.any_large = any(large)
        fast = [_shortest(inst, i) if any(large[b] for b in inst.op_buffers[i])
                else list(range(len(inst.modes[i]))) for i in range(inst.n_ops)]
        if any(len(modes) < len(inst.modes[i]) for i, modes in enumerate(fast)):
            self.policies["large_fast"] = fast
        self.cache: dict[tuple[str, str], tuple[list[int], list[int]]] = {}

    def applies(self, spec: PassSpec) -> bool:
        """Whether ``spec`` runs on this problem: its mode policy exists here, it orders
        tasks only where there are several, and it needs large buffers only where some
        buffer is large."""
        return spec.policy in self.policies and (
            spec.sequence not in ("interleaved", "hungry") or
            len(set(self.inst.op_task)) > 1) and (not spec.large_only or self.any_large)

    def make_pass(self, spec: PassSpec) -> _Pass:
        """The pass ``spec`` describes, with guard (1) on, ready to run."""
        order, tail = self.get(spec.policy, spec.sequence)
        return _Pass(self.inst, self.dag, order, spec.window, True, tail,
                     self.policies[spec.policy], in_sequence=spec.in_sequence,
                     holders_first=spec.holders_first, split=spec.split,
                     hungry_first=spec.hungry_first, task_windows=spec.task_windows,
                     hungry_unguarded=spec.hungry_unguarded)

    def get(self, policy: str, name: str) -> tuple[list[int], list[int]]:
        if (policy, name) not in self.cache:
            tail = tails(self.inst, self.dag, self.policies[policy])
            order = (breadth_order(self.inst, self.dag, tail) if name == "breadth" else
                     problem_order(self.dag) if name == "problem" else
                     interleaved_order(self.inst, self.dag) if name == "interleaved" else
                     hungriest_first_order(self.inst, self.dag) if name == "hungry" else
                     depth_order(self.dag, tail))
            self.cache[(policy, name)] = (order, tail)
        return self.cache[(policy, name)]


def _run_portfolio(inst: Instance, dag: Dag, sequences: _Sequences,
                   portfolio: Sequence[PassSpec], budget: TimeBudget | None
                   ) -> tuple[Solution | None, Stall | None]:
    """The shortest solution of the passes the budget allows, and the first stall. Passes
    run to their end until one finishes (there must be an answer); each later one gets at
    most :data:`PASS_SHARE` of the work and wall time left, so that one slow pass does
    not take the time of the cheaper ones after it."""
    best: Solution | None = None
    stall: Stall | None = None
    for spec in portfolio:
        if not sequences.applies(spec):
            continue
        if best is not None and budget is not None and budget.exhausted():
            break
        run = sequences.make_pass(spec)
        if budget is None or best is None:
            result = run.run()
        else:
            share = budget.share(PASS_SHARE)
            result = run.run(max_tries=int(share.left / CHARGE_PER_TRY),
                             deadline=share.deadline)
            share.exhausted()  # marks the cut when the deadline stopped the pass
            budget.absorb(share)
        if budget is not None:
            budget.charge(CHARGE_PER_TRY * run.tries)
        if result is None:  # cut at its share: the next pass may finish in what is left
            continue
        if isinstance(result, Stall):
            stall = stall or result
        elif best is None or result.makespan(inst) < best.makespan(inst):
            best = result
    return best, stall


def list_schedule(inst: Instance, dag: Dag, budget: TimeBudget | None = None, *,
                  priced: list[list[int]] | None = None) -> Solution | Stall:
    """The shortest legal solution among the passes of :data:`_PORTFOLIO` the budget
    allows, or of :data:`_FALLBACK` when all of them stall. The first pass always runs to its end;
    later ones stop when the work left (:data:`CHARGE_PER_TRY` per start attempt) or the
    deadline runs out, and are charged the attempts they made.

    When even in-sequence issue of a depth-first order stalls, greedy placement has
    failed, not necessarily the problem (a first-fit address can block the exact packing
    memory needs): the last stall is returned, and the caller decides whether the exact
    search (:func:`exact_fallback`) gets time.

    ``priced`` is :func:`priced_modes` of ``inst`` when the caller already computed it
    (a solve shares one energy LP between its bound and every portfolio).
    """
    sequences = _Sequences(inst, dag, priced)
    best, stall = _run_portfolio(inst, dag, sequences, _PORTFOLIO, budget)
    for name, window, reserve, two_ended in _FALLBACK if best is None else ():
        order, tail = sequences.get("all", name)
        result = _Pass(inst, dag, order, window, reserve, tail, two_ended=two_ended).run()
        if isinstance(result, Solution):
            return result
        assert result is not None  # only a pass given limits gives up
        stall = result
    if best is not None:
        return best
    assert stall is not None
    return stall


def stall_error(stall: Stall, source: str, why: str,
                status: SolveStatus = SolveStatus.NO_SOLUTION_FOUND) -> NoSchedule:
    """No schedule: the op ``stall`` names could not start (rule FIT, at that op), and
    ``why`` nothing else found one."""
    return NoSchedule(status, InputError(
        f"no memory-feasible order found: at time {stall.time} op {stall.op!r} needs "
        f"{stall.reason}; {why}", source=source, path=f"$.ops[\"{stall.op}\"]", rule="FIT"))


def exact_fallback(inst: Instance, dag: Dag, stall: Stall, source: str, budget: TimeBudget,
                   seed: int, workers: int) -> Solution:
    """Any legal solution, from CP-SAT on the whole exact model (memory with addresses),
    after every list-scheduling pass stalled at ``stall``.

    Greedy passes are incomplete: first-fit can put a buffer where the exact packing a
    tight memory needs has to go, and no sequence or window repairs that. CP-SAT is
    complete within a horizon that provably loses no legal schedule
    (the safe horizon), so it finds one, proves there is none, or runs out of the
    budget. Its incumbent (the hint, and the horizon) is the serial schedule: ops in
    topological order, each at its longest mode, one tick apart (so every lag holds and
    its makespan is the safe horizon below), every offset 0 (so it is illegal in memory). Each
    run stops at its first solution, which the later stages improve. Deterministic for a
    seed and worker count, as every CP-SAT run here.

    The safe horizon is the sum of every op's longest duration plus one tick between
    consecutive ops. Why no legal schedule is lost: take one and its distinct start and
    end times, in order. Keep each gap between consecutive times that some op of positive
    duration runs through, and shrink every other gap to one tick. The order of all times
    is kept, ties included, so every constraint keeps holding: which windows (ops',
    buffers') overlap depends only on that order, as do the precedences (their lags are
    0, or 1 where the order is strict); no running op loses a tick, so durations hold. The
    kept gaps add up to at most the sum of the durations; each shrunk gap ends where some
    op starts (an op of positive duration ending there would have run through it), and
    not the first op, so there are fewer of them than ops. (With every duration positive
    those gaps could even shrink to zero; zero-duration ops with a lag of 1 between them
    need the tick.)

    Raises :class:`InputError` (rule FIT) when CP-SAT proves that no schedule respects
    the derived dependencies (:mod:`schedsearch.engine.hazards`; they fix one order of the
    writers of shared bytes), when the budget runs out first, or when the problem has more
    than :data:`WHOLE_MODEL_MAX_OPS` ops (the model would be too slow to help).
    """
    def fit_error(why: str, status: SolveStatus = SolveStatus.NO_SOLUTION_FOUND) -> NoSchedule:
        return stall_error(stall, source, why, status)

    if inst.n_ops > WHOLE_MODEL_MAX_OPS:
        raise fit_error(f"every list-scheduling pass stalled, and the exact search is "
                        f"not tried above {WHOLE_MODEL_MAX_OPS} ops")
    modes = [max(range(len(inst.modes[i])), key=lambda k, i=i: (inst.modes[i][k].duration, -k))
             for i in range(inst.n_ops)]
    starts = [0] * inst.n_ops
    now = 0
    for v in dag.topo:
        if v < inst.n_ops:
            starts[v] = now
            now += inst.modes[v][modes[v]].duration + 1
    inc = Incumbent.of(inst, dag, Solution(tuple(modes), tuple(starts), (0,) * inst.n_buffers))
    built = build(inst, dag, inc, whole_problem(dag, inc), max(tails(inst, dag), default=0),
                  region_end=inc.makespan)
    outcome = solve_built(built, budget, work=budget.left, seed=seed, workers=workers,
                          first=True)
    if outcome.solution is not None:
        return outcome.solution
    if outcome.status == "INFEASIBLE":
        raise fit_error("CP-SAT proved that no schedule respecting the derived "
                        "dependencies (after, read-after-write, and the chosen order of "
                        "the writers of shared bytes) fits memory", SolveStatus.INFEASIBLE)
    raise fit_error("every list-scheduling pass stalled, and the exact search (CP-SAT "
                    "on the whole problem) ran out of time before finding a schedule",
                    SolveStatus.NO_SOLUTION_IN_TIME)
