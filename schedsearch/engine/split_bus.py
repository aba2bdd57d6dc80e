"""A schedule for layers bound by a shared bus: the energy LP's mode mix made whole.

On a decode layer the two DMA queues and the DDR bandwidth bind from start to end. A
load at its fast mode takes the whole bandwidth but for one more at its lean mode, so the
lower bound's ``energy`` part runs one fast load on one queue beside lean ones on the
other. The list scheduler's passes take modes one op at a time and run many small loads
fast (51 of the 71 largest and 41 of the 48 smallest on Qwen2.5-0.5B decode, v75): 2.5 %
above the bound. Here each op gets the mode :func:`~.modes.lean_split` gives it (fast ops
on one unit, lean ones on the other, or on either), the ops go longest tail first, each as
early as its unit allows, then alternately as late and as early as they can (a
forward-backward improvement, three rounds), and buffers take the lowest address free
over their lifetime. The result is checked here against every rule the construction does
not keep by itself (budgets, memory capacity); None where one fails.
"""

from __future__ import annotations

import bisect
import heapq

from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.solution import Solution, buffer_windows
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["split_bus_schedule", "FORWARD_BACKWARD_ROUNDS", "CHARGE_PER_OP"]

#: Rounds of the forward-backward improvement: on the four decode layers the third
#: round gains under 0.1 % and later ones nothing.
FORWARD_BACKWARD_ROUNDS = 3

#: Work charged per op where the shape applies (calibrated seconds): the two builds took
#: 0.06-0.16 s CPU at 637-1,703 ops.
CHARGE_PER_OP = 1e-4


def split_bus_schedule(inst: Instance, dag: Dag, choice: list[tuple[int, int]] | None,
                       budget: TimeBudget | None = None) -> Solution | None:
    """The shorter legal schedule of the lean ops on their own unit and on either
    (:mod:`this module <.split_bus>`), or None where the problem is not of the shape
    :func:`~.modes.lean_split` knows, has barriers, or neither schedule is legal. Where
    the shape applies, ``budget`` is charged :data:`CHARGE_PER_OP` per op, whatever the
    outcome; it runs to its end whatever the budget (it is cheap). ``choice`` is
    :func:`~.modes.lean_split` of ``inst``, which the caller's list passes share."""
    if choice is None or dag.n_nodes > dag.n_ops:
        return None
    if budget is not None:
        budget.charge(CHARGE_PER_OP * inst.n_ops)
    found = [_build(inst, dag, [(m, -1 if shared and u == 1 else u) for m, u in choice])
             for shared in (False, True)]
    legal = [s for s in found if s is not None]
    return min(legal, key=lambda s: s.makespan(inst), default=None)


def _fit(busy: list[tuple[int, int]], d: int, edge: int, forward: bool) -> int:
    """The earliest start at or after ``edge`` (forward), or the latest start ending by
    ``edge``, clear of the sorted intervals ``busy``."""
    if forward:
        start = edge
        for k in range(bisect.bisect_right(busy, edge, key=lambda iv: iv[1]), len(busy)):
            lo, hi = busy[k]
            if lo >= start + d:
                break
            start = max(start, hi)
        return start
    end = edge
    for k in range(bisect.bisect_left(busy, edge, key=lambda iv: iv[0]) - 1, -1, -1):
        lo, hi = busy[k]
        if hi <= end - d:
            break
        end = min(end, lo)
    return end - d


def _occupy(busy: list[tuple[int, int]], lo: int, hi: int) -> None:
    """Add ``[lo, hi)`` to the sorted, disjoint intervals ``busy``, merged with the
    intervals it touches: :func:`_fit` then steps over a run of back-to-back ops at once
    (one unit's queue on the tight pair at 7,966 ops had hundreds, and the walk took
    seconds). Merging changes no fit: no op of positive duration fits a gap of zero.
    Empty intervals stay apart, as they were."""
    k = bisect.bisect_left(busy, (lo, hi))
    if lo < hi and k > 0 and busy[k - 1][0] < busy[k - 1][1] == lo:
        k -= 1
        lo = busy.pop(k)[0]
    if lo < hi and k < len(busy) and busy[k][0] == hi < busy[k][1]:
        hi = busy.pop(k)[1]
    busy.insert(k, (lo, hi))


def _build(inst: Instance, dag: Dag, choice: list[tuple[int, int]]) -> Solution | None:
    n = inst.n_ops
    modes = [inst.modes[i][m] for i, (m, _) in enumerate(choice)]
    duration = [m.duration for m in modes]
    kind = [m.lanes[0][0] for m in modes]
    units = [list(range(inst.target.lanes[kind[i]])) if u < 0 else [u]
             for i, (_, u) in enumerate(choice)]
    tail = [0] * n
    level = [0] * n
    for v in reversed(dag.topo):
        tail[v] = duration[v] + max((lag + tail[s] for s, lag in dag.succs[v]), default=0)
    for v in dag.topo:
        level[v] = max((level[p] + 1 for p, _ in dag.preds[v]), default=0)

    def place(sequence: list[int], start: list[int] | None) -> list[int]:
        """Each op of ``sequence`` as early (``start`` None) or as late as it can go."""
        busy: dict[tuple[str, int], list[tuple[int, int]]] = {
            (k, u): [] for k, c in inst.target.lanes.items() for u in range(c)}
        new = [0] * n
        horizon = max(s + d for s, d in zip(start, duration, strict=True)) if start else 0
        for i in sequence:
            d = duration[i]
            if start is None:
                edge = max((new[p] + duration[p] + lag for p, lag in dag.preds[i]), default=0)
                s, u = min((_fit(busy[kind[i], u], d, edge, True), u) for u in units[i])
            else:
                edge = min((new[j] - lag for j, lag in dag.succs[i]), default=horizon)
                s, u = max((_fit(busy[kind[i], u], d, edge, False), u) for u in units[i])
            new[i] = s
            _occupy(busy[kind[i], u], s, s + d)
        if start is not None:
            low = min(new)
            new = [s - low for s in new]
        return new

    waiting = [len(dag.preds[i]) for i in range(n)]
    ready = [(duration[i] - tail[i], i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)
    sequence = []
    while ready:
        _, i = heapq.heappop(ready)
        sequence.append(i)
        for j, _ in dag.succs[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, (duration[j] - tail[j], j))
    start = place(sequence, None)
    if not _bytes_fit(inst, start, duration):
        return None  # the rounds keep the order's memory: Llama-3.2-1B decode 7x VTCM
    for _ in range(FORWARD_BACKWARD_ROUNDS):  # a successor ends later, or as late, deeper
        late = place(sorted(range(n), key=lambda i: (-(start[i] + duration[i]), -level[i])),
                     start)
        start = place(sorted(range(n), key=lambda i: (late[i], level[i])), None)
    if not _budgets_fit(inst, modes, start, duration):
        return None
    offsets = _first_fit(inst, start, [s + d for s, d in zip(start, duration, strict=True)])
    if offsets is None:
        return None
    return Solution(tuple(m for m, _ in choice), tuple(start), offsets)


def _budgets_fit(inst: Instance, modes: list, start: list[int], duration: list[int]
                 ) -> bool:
    """Whether every budget's draw stays within its capacity at every instant."""
    events: dict[str, list[tuple[int, int]]] = {}
    for i, mode in enumerate(modes):
        if duration[i]:
            for name, draw in mode.budgets:
                events.setdefault(name, []).extend(((start[i], draw),
                                                    (start[i] + duration[i], -draw)))
    for name, changes in events.items():
        level = 0
        for _, change in sorted(changes, key=lambda e: (e[0], e[1])):
            level += change
            if level > inst.target.budgets[name]:
                return False
    return True


def _bytes_fit(inst: Instance, start: list[int], duration: list[int]) -> bool:
    """Whether the bytes live at once fit each memory (before any address is chosen)."""
    windows = buffer_windows(inst, tuple(start),
                             tuple(s + d for s, d in zip(start, duration, strict=True)))
    events: dict[str, list[tuple[int, int]]] = {}
    for b, (alloc, free) in enumerate(windows):
        size = inst.buffer_size[b]
        events.setdefault(inst.buffer_memory[b], []).extend(((alloc, size), (free, -size)))
    for memory, changes in events.items():
        live = 0
        for _, change in sorted(changes):
            live += change
            if live > inst.target.memories[memory].capacity_bytes:
                return False
    return True


def _first_fit(inst: Instance, start: list[int], end: list[int]) -> tuple[int, ...] | None:
    """Per buffer, the lowest aligned address free over its lifetime, buffers taken by
    allocation time; None where some memory overflows."""
    windows = buffer_windows(inst, tuple(start), tuple(end))
    offsets = [0] * inst.n_buffers
    placed: dict[str, list[tuple[int, int, int, int]]] = {}
    for b in sorted(range(inst.n_buffers), key=lambda b: windows[b]):
        alloc, free = windows[b]
        if alloc == free:
            continue
        align, size = inst.buffer_align[b], inst.buffer_size[b]
        memory = inst.buffer_memory[b]
        others = placed.setdefault(memory, [])
        offset = 0
        for lo, hi in sorted((o, o + z) for o, z, a, f in others if a < free and alloc < f):
            if offset + size <= lo:
                break
            offset = max(offset, -(-hi // align) * align)
        if offset + size > inst.target.memories[memory].capacity_bytes:
            return None
        others.append((offset, size, alloc, free))
        offsets[b] = offset
    return tuple(offsets)
