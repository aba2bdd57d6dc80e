"""Exact placement search: a depth-first search over canonical solutions.

The search follows MiniMalloc (Moffitt, ASPLOS 2023) and adds what a Python engine needs
to stay fast. Its soundness rests on three facts, each a few lines of argument:

*Canonical solutions.* Take any legal placement and repeatedly drop a buffer to the
lowest aligned offset that clears the buffers below it (and the pinned ones); the sum of
offsets falls, so this stops, and every buffer then rests at its *minimum offset* given
the buffers placed before it in (offset, rank) order. The search therefore only places
buffers in non-decreasing (offset, rank) order, each exactly at its minimum offset.

*Dominance.* If an unplaced buffer ``b`` could sit at ``minoff[b]`` and every later
placement lies at or above ``minoff[b] + size[b]``, the room under ``b`` stays empty and
``b`` could drop into it: so no branch may place anything at or above the lowest
``minoff + size`` of the unplaced buffers.

*Cross-section inference.* A section is a maximal set of buffers live at one instant
(only instants right before a death matter). All unplaced buffers of a section go above
the section's floor (the lowest minimum offset among them, and the current offset),
side by side, so ``floor + sum of their sizes`` must fit the capacity; pinned buffers
above the floor take their bytes out of that room.

*Decomposition.* Once no unplaced buffer spans the boundary between two sections, the
two sides no longer interact and are solved one after the other (MiniMalloc's dynamic
decomposition); a side that fails fails the branch.

Nodes are budgeted: :func:`search` runs a round robin over buffer preorders with a
doubling node limit, because one order often finds in a thousand nodes what another
misses in a million. A search that exhausts the tree without hitting the limit proves
the capacity infeasible.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ExactOutcome", "search", "PREORDERS"]

#: Preorders tried in turn (MiniMalloc's defaults): W = lifetime length, A = area
#: (size x length), T = largest section total the buffer sits in; all descending.
PREORDERS = ("WAT", "TAW", "TWA")


class _Abort(Exception):
    """The node budget of this round ran out."""


class _Deadline(Exception):
    """The wall-clock deadline passed."""


@dataclass(frozen=True, slots=True)
class ExactOutcome:
    """``status``: ``FOUND`` (``offsets`` filled), ``INFEASIBLE`` or ``TIMEOUT``."""

    status: str
    offsets: dict[int, int]
    nodes: int


def _sections(lower: Sequence[int], upper: Sequence[int],
              members: Sequence[int]) -> tuple[list[list[int]], dict[int, tuple[int, int]]]:
    """Maximal cross-sections of ``members`` and each member's section range [lo, hi).

    Sweeping by time with deaths before births at a tick, a section is recorded at a
    death that follows at least one birth: the live set is then maximal, and every
    other live set is a subset of one of these. A buffer's sections are consecutive.
    """
    events = sorted([(upper[b], 0, b) for b in members] + [(lower[b], 1, b) for b in members])
    active: set[int] = set()
    grown = False
    sections: list[list[int]] = []
    first: dict[int, int] = {}
    ranges: dict[int, tuple[int, int]] = {}
    for _, kind, b in events:
        if kind == 1:
            active.add(b)
            first[b] = len(sections)
            grown = True
        else:
            if grown:
                sections.append(sorted(active))
                grown = False
            active.discard(b)
            ranges[b] = (first[b], len(sections))
    return sections, ranges


class _Search:
    """One search over the free buffers of one time component, for one preorder."""

    def __init__(self, size: list[int], align: list[int], free: list[int],
                 overlaps: dict[int, list[int]], obstacles: dict[int, list[tuple[int, int]]],
                 sections: list[list[int]], ranges: dict[int, tuple[int, int]],
                 pinned_in_section: list[list[tuple[int, int]]], capacity: int,
                 rank: dict[int, int], node_limit: int, deadline: float,
                 nodes_before: int) -> None:
        self.size, self.align, self.capacity = size, align, capacity
        self.overlaps, self.obstacles, self.ranges = overlaps, obstacles, ranges
        self.sections, self.pinned_in_section = sections, pinned_in_section
        self.rank, self.node_limit, self.deadline = rank, node_limit, deadline
        self.nodes = nodes_before
        self.offset: dict[int, int] = {b: -1 for b in free}
        self.solution: dict[int, int] = {}
        self.minoff: dict[int, int] = {b: self._lift(b, 0) for b in free}
        self.total = [sum(size[b] for b in members if b in self.offset) for members in sections]
        self.floor = [0] * len(sections)
        self.cuts = [0] * max(len(sections) - 1, 0)
        for b in free:
            lo, hi = ranges[b]
            for s in range(lo, hi - 1):
                self.cuts[s] += 1
        self.free_in_section = [[b for b in members if b in self.offset] for members in sections]

    def _lift(self, b: int, at_least: int) -> int:
        """The lowest aligned offset >= ``at_least`` where ``b`` clears the pinned buffers."""
        step = self.align[b]
        x = -(-at_least // step) * step
        obstacles = self.obstacles.get(b)
        if obstacles:
            size = self.size[b]
            moved = True
            while moved:
                moved = False
                for start, top in obstacles:
                    if start < x + size and x < top:
                        x = -(-top // step) * step
                        moved = True
        return x

    def run(self, part: list[int], lo: int, hi: int) -> bool:
        return self._search(part, lo, hi, 0, -1)

    def _check(self, lo: int, hi: int, x: int) -> bool:
        capacity, total, floor, pinned = self.capacity, self.total, self.floor, self.pinned_in_section
        for s in range(lo, hi):
            t = total[s]
            if t:
                f = floor[s]
                if f < x:
                    f = x
                if f + t > capacity:
                    return False
                if pinned[s]:
                    above = sum(top - max(start, f) for start, top in pinned[s] if top > f)
                    if f + t + above > capacity:
                        return False
        return True

    def _search(self, part: list[int], lo: int, hi: int, cur_off: int, cur_rank: int) -> bool:
        self.nodes += 1
        if self.nodes > self.node_limit:
            raise _Abort
        if not self.nodes & 255 and time.perf_counter() > self.deadline:
            raise _Deadline
        offset, minoff, size, rank = self.offset, self.minoff, self.size, self.rank
        unplaced = [b for b in part if offset[b] < 0]
        if not unplaced:
            return True
        min_height = min(minoff[b] + size[b] for b in unplaced)
        candidates = sorted((minoff[b], rank[b], b) for b in unplaced if minoff[b] < min_height)
        capacity = self.capacity
        for x, r, b in candidates:
            if x < cur_off or (x == cur_off and r < cur_rank):
                continue
            top = x + size[b]
            if top > capacity:
                continue
            # Place b at x, remembering how to undo it.
            offset[b] = x
            self.solution[b] = x
            changed: list[tuple[int, int]] = []
            for o in self.overlaps[b]:
                if offset[o] < 0 and minoff[o] < top:
                    changed.append((o, minoff[o]))
                    minoff[o] = self._lift(o, top)
            floor, total = self.floor, self.total
            blo, bhi = self.ranges[b]
            old_floors = floor[blo:bhi]
            for s in range(blo, bhi):
                floor[s] = top
                total[s] -= size[b]
            raised: list[tuple[int, int]] = []
            if changed:
                touched: set[int] = set()
                for o, _ in changed:
                    olo, ohi = self.ranges[o]
                    touched.update(range(olo, ohi))
                for s in touched:
                    lowest = min((minoff[m] for m in self.free_in_section[s] if offset[m] < 0),
                                 default=-1)
                    if lowest > floor[s]:
                        raised.append((s, floor[s]))
                        floor[s] = lowest
            ok = False
            if self._check(lo, hi, x):
                ok = self._descend(part, lo, hi, x, r, b)
            for s, old in reversed(raised):
                floor[s] = old
            floor[blo:bhi] = old_floors
            for s in range(blo, bhi):
                total[s] += size[b]
            for o, old in reversed(changed):
                minoff[o] = old
            offset[b] = -1
            if ok:
                return True
        return False

    def _descend(self, part: list[int], lo: int, hi: int, x: int, r: int, b: int) -> bool:
        """Recurse after placing ``b``, splitting the component where no cut remains."""
        blo, bhi = self.ranges[b]
        cuts = self.cuts
        splits: list[int] = []
        for s in range(blo, bhi - 1):
            cuts[s] -= 1
            if cuts[s] == 0 and lo <= s < hi - 1:
                splits.append(s + 1)
        try:
            if not splits:
                return self._search(part, lo, hi, x, r)
            bounds = [lo, *splits, hi]
            offset, ranges = self.offset, self.ranges
            for a, z in zip(bounds, bounds[1:], strict=False):
                sub = [m for m in part if offset[m] < 0 and ranges[m][0] < z and a < ranges[m][1]]
                if sub and not self._search(sub, a, z, 0, -1):
                    return False
            return True
        finally:
            for s in range(blo, bhi - 1):
                cuts[s] += 1


def _preorder(code: str, free: list[int], lower: Sequence[int], upper: Sequence[int],
              size: Sequence[int], section_total: dict[int, int],
              rng: np.random.Generator | None) -> dict[int, int]:
    """Rank of each free buffer (0 first) for a preorder code such as ``"WAT"``."""
    noise = {b: float(rng.random()) for b in free} if rng is not None else dict.fromkeys(free, 0.0)

    def key(b: int) -> tuple[float, ...]:
        width = upper[b] - lower[b]
        fields = {"W": width, "A": width * size[b], "T": section_total[b], "Z": size[b]}
        return (*(-fields[c] for c in code), noise[b], b)

    return {b: i for i, b in enumerate(sorted(free, key=key))}


def search(lower: Sequence[int], upper: Sequence[int], size: Sequence[int],
           align: Sequence[int], pinned: Sequence[int], capacity: int, *,
           deadline: float, seed: int = 0,
           preorders: Sequence[str] = PREORDERS) -> ExactOutcome:
    """Offsets for the live buffers (``upper > lower`` and ``size > 0``) with
    ``pinned[i] < 0``, so that nothing overlaps below ``capacity``, or a proof that none
    exist. Pinned live buffers are obstacles; they are assumed to fit and not to clash
    with each other (the caller checks that). Buffers that are not live are left out.
    """
    n = len(size)
    size_l, align_l = list(map(int, size)), list(map(int, align))
    live = [i for i in range(n) if upper[i] > lower[i] and size[i] > 0]
    free = [i for i in live if pinned[i] < 0]
    fixed = [i for i in live if pinned[i] >= 0]
    if not free:
        return ExactOutcome("FOUND", {}, 0)
    sections, ranges = _sections(lower, upper, live)
    is_free = set(free)
    # Overlap lists among free buffers, and pinned obstacles per free buffer.
    overlaps: dict[int, list[int]] = {b: [] for b in free}
    obstacles: dict[int, list[tuple[int, int]]] = {}
    by_lower = sorted(live, key=lambda i: lower[i])
    starts = [lower[i] for i in by_lower]
    import bisect
    for k, i in enumerate(by_lower):
        stop = bisect.bisect_left(starts, upper[i])
        for j in by_lower[k + 1:stop]:
            if i in is_free and j in is_free:
                overlaps[i].append(j)
                overlaps[j].append(i)
            elif i in is_free:
                obstacles.setdefault(i, []).append((pinned[j], pinned[j] + size[j]))
            elif j in is_free:
                obstacles.setdefault(j, []).append((pinned[i], pinned[i] + size[i]))
    for value in obstacles.values():
        value.sort()
    pinned_in_section = [sorted((pinned[m], pinned[m] + size[m]) for m in members
                                if m not in is_free) for members in sections]
    totals = [sum(size[m] for m in members if m in is_free) for members in sections]
    section_total = {b: max(totals[s] for s in range(*ranges[b])) for b in free}
    # Time components: maximal runs of sections that no free buffer bridges.
    components: list[tuple[int, int]] = []
    reach = -1
    start = 0
    for b in sorted(free, key=lambda i: ranges[i][0]):
        lo, hi = ranges[b]
        if lo >= reach and reach >= 0:
            components.append((start, reach))
            start = lo
        elif reach < 0:
            start = lo
        reach = max(reach, hi)
    components.append((start, reach))
    rng = np.random.default_rng(seed) if seed else None
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 4 * len(free) + 1000))
    offsets: dict[int, int] = {}
    nodes = 0
    try:
        for lo, hi in components:
            part = [b for b in free if lo <= ranges[b][0] < hi]
            ranks = [_preorder(code, part, lower, upper, size_l, section_total, rng)
                     for code in preorders]
            limit = 2 * len(part)
            solved = False
            while not solved:
                limit *= 2
                for rank in ranks:
                    engine = _Search(size_l, align_l, part, overlaps, obstacles, sections,
                                     ranges, pinned_in_section, capacity, rank,
                                     nodes + limit, deadline, nodes)
                    try:
                        found = engine.run(part, lo, hi)
                    except _Abort:
                        nodes = engine.nodes
                        continue
                    except _Deadline:
                        return ExactOutcome("TIMEOUT", {}, engine.nodes)
                    nodes = engine.nodes
                    if not found:
                        return ExactOutcome("INFEASIBLE", {}, nodes)
                    offsets.update(engine.solution)
                    solved = True
                    break
    finally:
        sys.setrecursionlimit(old_limit)
    return ExactOutcome("FOUND", offsets, nodes)
