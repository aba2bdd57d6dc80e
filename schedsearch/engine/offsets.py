"""Addresses for a solution whose times are decided: the placement engine inside the search.

A CP-SAT model that decides offsets carries a NoOverlap2D per memory, which is what
makes it slow; with memory as a cumulative only (bytes in use fit the capacity at every
instant) it solves much faster, but its answer has no addresses yet. Once the times are
fixed, every buffer's lifetime is fixed (:func:`schedsearch.engine.solution.buffer_windows`),
and choosing its addresses is exactly the placement engine's problem
(:func:`schedsearch.engine.placement.place`). A placement that fits every buffer under the
capacity makes the whole solution legal; one that does not means the candidate is
dropped and the incumbent kept.

The engine is tried on ever more free buffers, each time with the rest pinned at their
incumbent addresses (:func:`_pin_levels`), and sees only the free ones and the pinned
ones live at the same time as one of them (:func:`_near`):

1. only the buffers that, at their incumbent addresses, now share bytes with another
   while both are live (none: the candidate is legal as it is, and nothing is placed);
2. with them the moved buffers live beside one of them, unless much longer lived;
3. every moved buffer outside the block an LNS window moved left as a whole (every op
   after the window shifts by one amount, :mod:`schedsearch.engine.lns`: a block
   translated in time keeps its buffers apart among themselves);
4. every moved buffer; 5. all of them; an attempt after the first that would free more
   than :data:`MAX_FREED` is skipped.

Every buffer left pinned shares bytes with no other while both are live, so the pinned
ones are legal among themselves. Why: on the tight wide pair at 609 ops nearly every
buffer after a window is such a block, and placing them all again took 0.3 s per
candidate, more than CP-SAT's time on the window; at 7,966 ops, where the RMSNorm's
weight (live from the first row to the last) moved with nearly every window, the
attempt that freed the moved buffers outside the block still handed the engine 5,459
buffers for 8 free ones.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from models.errors import InputError
from schedsearch.engine.instance import Instance
from schedsearch.engine.placement import PlacementBuffer, place
from schedsearch.engine.result import SolveStatus
from schedsearch.engine.solution import Solution, buffer_windows
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["place_offsets", "CHARGE_PER_BUFFER"]

#: Work charged per buffer handed to the engine (calibrated seconds).
CHARGE_PER_BUFFER = 2e-4
#: Work charged per node of the exact search, and per node and buffer placed: a node
#: took 0.27 ms with 111 buffers (the tight wide pair at 161 ops, where the charge was
#: first set as 3e-6 per node and buffer), and 0.16-0.21 ms with 355-415 (the tight
#: triple and chain at about 600 ops), where that charge came to 5-8 times the work
#: CP-SAT is charged for the same wall time.
CHARGE_PER_NODE = 3e-4
CHARGE_PER_NODE_BUFFER = 4e-7
#: Nodes of the exact search one placement may use: a base plus some per free buffer (it
#: branches on those only). A placement that succeeds needs about one node per buffer
#: (0.98-1.29 per buffer over the tight problems of ``benchmarks/bench_memory.py`` at
#: 150-600 ops, 10 s, when every buffer was free), and one that fails runs to the cap: at
#: 300 + 2 per buffer the failures took half of LNS's time on the tight wide pair at 609
#: ops (a base of 2,000 had spent 0.3-0.6 s on each failure at 161 ops, most of LNS's
#: time there). Counting the pinned buffers the engine sees too, a failure with 8 free
#: among 5,459 ran 8,266 nodes in 4.4 s (the tight wide pair at 7,966 ops).
PLACE_BASE_NODES = 50
PLACE_NODES_PER_BUFFER = 1.5
#: The second attempt frees the moved buffers live while a clashing one is and at most
#: this many times as long as the longest of those (:func:`_pin_levels`): on the tight
#: wide pair at 7,966 ops the window's own buffers lived up to 3.5 times that, the
#: RMSNorm's weight 990 times; freeing it too made the engine see 5,459 buffers instead
#: of about 20.
LOCAL_SPANS = 4
#: An attempt after the first frees at most this many buffers: on the tight wide pair at
#: 7,966 ops, where the pinned attempts were proven impossible, the one that freed the
#: 5,315 buffers the window moved ran to its node cap in 4.6 s; the candidate is better
#: dropped. The tight problems of ``benchmarks/bench_memory.py`` at about 600 ops have
#: 355-415 buffers in all.
MAX_FREED = 500


def place_offsets(inst: Instance, solution: Solution, incumbent: Solution, budget: TimeBudget,
                  seed: int, before: Sequence[tuple[int, int]] | None = None
                  ) -> Solution | None:
    """``solution`` with offsets from the placement engine, or None if some memory's
    buffers cannot be placed within the node budget (or the deadline came first: then
    ``budget.cut``).
    ``incumbent`` is the legal solution ``solution`` was derived from; ``before`` its
    buffer windows when the caller has them."""
    windows = buffer_windows(inst, solution.starts, solution.ends(inst))
    if before is None:
        before = buffer_windows(inst, incumbent.starts, incumbent.ends(inst))
    offsets = list(incumbent.offsets)
    for memory, spec in sorted(inst.target.memories.items()):
        members = [b for b in range(inst.n_buffers) if inst.buffer_memory[b] == memory]
        moved = {b for b in members if windows[b] != before[b]}
        if not moved:
            continue
        clashing = _clashing(set(members), windows, offsets, inst.buffer_size)
        if not clashing:  # every buffer still fits at its incumbent address
            continue
        block = _translated_block(moved, windows, before)
        for unpinned in _pin_levels(clashing, moved, block, members, windows):
            items = [PlacementBuffer(inst.buffer_names[b], *windows[b], inst.buffer_size[b],
                                     inst.buffer_align[b],
                                     None if b in unpinned else offsets[b])
                     for b in _near(unpinned, members, windows)]
            budget.charge(CHARGE_PER_BUFFER * len(items))
            try:
                result = place(items, spec.capacity_bytes, time_limit=budget.wall_left(),
                               seed=seed, max_nodes=_node_cap(len(unpinned)))
            except InputError:
                return None
            budget.charge((CHARGE_PER_NODE + CHARGE_PER_NODE_BUFFER * len(items))
                          * result.stats.get("nodes", 0))
            if result.placed:
                for b in unpinned:
                    offsets[b] = result.offsets[inst.buffer_names[b]]
                break
            timed_out = result.status is SolveStatus.NO_SOLUTION_IN_TIME
            if timed_out or budget.exhausted():
                budget.cut = budget.cut or timed_out
                return None
        else:
            return None
    return Solution(solution.modes, solution.starts, tuple(offsets))


class _Spans:
    """The union of some buffers' lifetimes, as sorted disjoint spans: whether another
    lifetime meets it is one bisection."""

    def __init__(self, buffers: set[int], windows: list[tuple[int, int]]) -> None:
        self.spans: list[tuple[int, int]] = []
        for lo, hi in sorted(windows[b] for b in buffers if windows[b][0] < windows[b][1]):
            if self.spans and lo <= self.spans[-1][1]:
                self.spans[-1] = (self.spans[-1][0], max(self.spans[-1][1], hi))
            else:
                self.spans.append((lo, hi))
        self.starts = [lo for lo, _ in self.spans]

    def meets(self, lo: int, hi: int) -> bool:
        k = bisect_right(self.starts, lo) - 1  # the last span starting at or before lo
        return lo < hi and ((k >= 0 and self.spans[k][1] > lo)
                            or (k + 1 < len(self.spans) and self.spans[k + 1][0] < hi))


def _near(unpinned: set[int], members: list[int], windows: list[tuple[int, int]]
          ) -> list[int]:
    """The buffers of ``members`` the engine must see to place ``unpinned``: those, and
    every pinned one live at some instant one of them is (the others cannot meet them,
    and the pinned ones are legal among themselves). On the tight wide pair at 7,966
    ops an accepted window moved a few dozen of about 5,000 buffers, and handing the
    engine all of them took 0.4 s per candidate, four times CP-SAT's time on the window."""
    spans = _Spans(unpinned, windows)
    return [b for b in members if b in unpinned or spans.meets(*windows[b])]


def _node_cap(buffers: int) -> int:
    return PLACE_BASE_NODES + int(PLACE_NODES_PER_BUFFER * buffers)


def _translated_block(moved: set[int], windows: list[tuple[int, int]],
                      before: Sequence[tuple[int, int]]) -> set[int]:
    """The moved buffers whose lifetime moved earlier by the amount most of them did
    (a whole lifetime translated: both ends by the same amount)."""
    shifts: dict[int, list[int]] = {}
    for b in sorted(moved):
        (lo, hi), (was_lo, was_hi) = windows[b], before[b]
        if was_lo - lo == was_hi - hi > 0:
            shifts.setdefault(was_lo - lo, []).append(b)
    if not shifts:
        return set()
    return set(max(shifts.values(), key=len))


def _pin_levels(clashing: set[int], moved: set[int], block: set[int], members: list[int],
                windows: list[tuple[int, int]]) -> list[set[int]]:
    """The buffers left free at each attempt, fewest first: the ``clashing`` ones (which
    share bytes with another while both are live, everything at its incumbent address);
    with them the moved ones outside the translated ``block`` that are local to them;
    every moved one outside the block; every moved one; all of
    them. Every buffer left pinned clashes with no other, so the pinned ones are legal
    among themselves; an attempt after the first frees at most :data:`MAX_FREED`. The
    local ones are those live while some clashing one is and at most
    :data:`LOCAL_SPANS` times as long as the longest of those: a moved buffer that lives
    much longer (the RMSNorm's weight, whose last reader a window's shift brings
    earlier) would make the engine see every buffer of its lifetime. Where several
    windows moved at once (:mod:`.repeat`), each one's clashes free its own buffers."""
    spans = _Spans(clashing, windows)
    longest = max(windows[b][1] - windows[b][0] for b in clashing)
    outside = moved - block
    local = {b for b in outside if spans.meets(*windows[b])
             and windows[b][1] - windows[b][0] <= LOCAL_SPANS * longest}
    levels = [clashing]
    for level in (clashing | local, clashing | outside, clashing | moved, set(members)):
        if level != levels[-1] and len(level) <= MAX_FREED:
            levels.append(level)
    return levels


def _clashing(pinned: set[int], windows: list[tuple[int, int]], offsets: list[int],
              sizes: tuple[int, ...]) -> set[int]:
    """The buffers of ``pinned`` that, at their offsets, share bytes with another of them
    while both are live (a sweep over the lifetimes: only buffers live at once are
    compared, a few dozen where memory is tight, so thousands of buffers stay cheap)."""
    found: set[int] = set()
    live: list[int] = []
    for b in sorted((b for b in pinned if windows[b][0] < windows[b][1]),
                    key=lambda b: windows[b][0]):
        live = [other for other in live if windows[other][1] > windows[b][0]]
        for other in live:
            if offsets[other] < offsets[b] + sizes[b] and \
                    offsets[b] < offsets[other] + sizes[other]:
                found.update((other, b))
        live.append(b)
    return found
