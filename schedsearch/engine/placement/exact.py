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
decomposition); a side that fails fails the branch. Each side is ranked afresh, its T
(largest section total) counting only the bytes still unplaced, as MiniMalloc does. The
canonical solutions do not depend on the ranks (a buffer rests on a neighbour or on 0
whatever the order; ranks only break ties at one offset), so any order is exact; the
symmetry rules keep the component's first ranks.

Nodes are budgeted: :func:`search` runs a round robin over buffer preorders with a
doubling node limit, because one order often finds in a thousand nodes what another
misses in a million. A search that exhausts the tree without hitting the limit proves
the capacity infeasible.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from schedsearch.engine.result import SolveStatus

__all__ = ["ExactOutcome", "search", "PREORDERS"]

#: Preorders tried in turn (MiniMalloc's defaults): W = lifetime length, A = area
#: (size x length), T = largest section total the buffer sits in; all descending.
PREORDERS = ("WAT", "TAW", "TWA")


#: Most part outcomes remembered per preorder before the memo starts afresh.
_MEMO_LIMIT = 200_000


class _Abort(Exception):
    """The node budget of this round ran out."""


class _Deadline(Exception):
    """The wall-clock deadline passed."""


@dataclass(frozen=True, slots=True)
class ExactOutcome:
    """``status``: ``FEASIBLE`` (``offsets`` filled), ``INFEASIBLE``, ``NO_SOLUTION_IN_TIME``
    (the deadline) or ``NO_SOLUTION_FOUND`` (the caller's node budget: the same on every
    machine)."""

    status: SolveStatus
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
    """One search over the free buffers of one time component, for one preorder.

    Buffers are renumbered 0..m-1 inside the component and sections 0..k-1; the state
    lives in NumPy arrays so that the cross-section check of a node is a handful of
    vectorised operations over the concatenated section member lists.
    """

    def __init__(self, size: np.ndarray, align: np.ndarray, overlaps: list[np.ndarray],
                 obstacles: dict[int, list[tuple[int, int]]], members: np.ndarray,
                 starts: np.ndarray, ranges: np.ndarray,
                 pinned_in_section: list[list[tuple[int, int]]], capacity: int,
                 code: str, fields: dict[str, np.ndarray], noise: np.ndarray,
                 node_limit: int, deadline: float, nodes_before: int,
                 group: list[int], twins: list[list[int]],
                 memo: dict[tuple[object, ...], object], refuted: dict[bytes, int]) -> None:
        m = len(size)
        self.code, self.fields, self.noise = code, fields, noise
        self.range_lo, self.range_hi = ranges[:, 0], ranges[:, 1]
        self.total = np.add.reduceat(size[members], starts)
        # The rank (preorder) is recomputed for every independent part, as MiniMalloc
        # does; symmetry breaking keeps the component's first ranks (``sym_rank``).
        rank = self._rank(np.arange(m))
        self.rank = rank.copy()
        self.sym_rank = rank.tolist()
        # Symmetry breaking (see _symmetry): a buffer may not sit directly on a buffer of
        # its lifetime group with a later rank, nor precede an identical one ranked before.
        self.group = group
        self.stacks: dict[tuple[int, int], int] = {}
        self.twin_before = [-1] * m
        for twin in twins:
            ordered = sorted(twin, key=lambda i: int(rank[i]))
            for a, b in zip(ordered, ordered[1:], strict=False):
                self.twin_before[b] = a
        # For a vectorised look-up; index m is a sentinel slot that always reads False.
        self.twin_before_a = np.array(self.twin_before, dtype=np.int64)
        self.twin_before_a[self.twin_before_a < 0] = m
        self.memo = memo
        self.refuted: dict[bytes, int] = refuted
        self.size, self.align, self.capacity = size, align, capacity
        self.size_l = size.tolist()
        self.overlaps, self.obstacles, self.ranges = overlaps, obstacles, ranges.tolist()
        self.members, self.starts = members, starts
        self.pinned_in_section = pinned_in_section
        self.pinned_sections = [s for s, p in enumerate(pinned_in_section) if p]
        self.node_limit, self.deadline = node_limit, deadline
        self.nodes = nodes_before
        self.placed = np.zeros(m + 1, dtype=bool)
        self.solution: dict[int, int] = {}
        self.minoff = np.array([self._lift(b, 0) for b in range(m)], dtype=np.int64)
        sections = len(starts)
        cuts = np.zeros(sections + 1, dtype=np.int64)
        np.add.at(cuts, ranges[:, 0], 1)
        np.add.at(cuts, ranges[:, 1] - 1, -1)
        self.cuts = np.cumsum(cuts)[: max(sections - 1, 0)].tolist()

    def _rank(self, part: np.ndarray) -> np.ndarray:
        """Preorder ranks 0..len(part)-1 of ``part``, in the order of ``part``.

        T is the largest section total of unplaced bytes the buffer sits in *now*: after
        a split, a part is ranked by what is left in it, not by the component's start.
        This is MiniMalloc's behaviour and it matters: on the challenging instances H and
        I the static ranks of the whole component send every part down the same dead
        end for minutes, the fresh ranks find a placement in seconds.
        """
        fields = {code: values[part] for code, values in self.fields.items()}
        if "T" in self.code:
            bounds = np.empty(2 * len(part), dtype=np.int64)
            bounds[0::2], bounds[1::2] = self.range_lo[part], self.range_hi[part]
            padded = np.append(self.total, 0)  # reduceat needs every bound < len
            fields["T"] = np.maximum.reduceat(padded, bounds)[0::2]
        keys = [np.arange(len(part)), self.noise[part]]
        keys += [-fields[c] for c in reversed(self.code)]
        rank = np.empty(len(part), dtype=np.int64)
        rank[np.lexsort(keys)] = np.arange(len(part))
        return rank

    def _lift(self, b: int, at_least: int) -> int:
        """The lowest aligned offset >= ``at_least`` where ``b`` clears the pinned buffers."""
        step = int(self.align[b])
        x = -(-at_least // step) * step
        obstacles = self.obstacles.get(b)
        if obstacles:
            size = self.size_l[b]
            moved = True
            while moved:
                moved = False
                for start, top in obstacles:
                    if start < x + size and x < top:
                        x = -(-top // step) * step
                        moved = True
        return x

    def run(self) -> bool:
        return self._search(np.arange(len(self.size)), 0, len(self.starts), 0, -1)

    def _check(self, lo: int, hi: int, x: int) -> bool:
        """Cross-section inference over sections [lo, hi) once the current offset is x."""
        capacity = self.capacity
        members = self.members
        floors = np.minimum.reduceat(np.where(self.placed[members], capacity,
                                              self.minoff[members]), self.starts)
        floors = np.maximum(floors[lo:hi], x)
        total = self.total[lo:hi]
        if (floors + total > capacity).any():
            return False
        for s in self.pinned_sections:
            if lo <= s < hi and total[s - lo]:
                f = int(floors[s - lo])
                above = sum(top - max(start, f) for start, top in self.pinned_in_section[s]
                            if top > f)
                if f + int(total[s - lo]) + above > capacity:
                    return False
        return True

    def _search(self, part: np.ndarray, lo: int, hi: int, cur_off: int, cur_rank: int) -> bool:
        self.nodes += 1
        if self.nodes > self.node_limit:
            raise _Abort
        # Every node: on a thousand buffers one node costs milliseconds, and checking
        # every 256th let a 0.3 s placement run 5.5 s (tight wide pair, 2,011 ops).
        if time.perf_counter() > self.deadline:
            raise _Deadline
        placed, minoff, size, rank = self.placed, self.minoff, self.size, self.rank
        unplaced = part[~placed[part]]
        if not len(unplaced):
            return True
        # Transposition table: different placements below often leave the same unplaced
        # buffers with the same minimum offsets; a state refuted for some last rank is
        # refuted for every later one (they allow fewer candidates). Ranks differ from
        # part to part, so theirs are part of the state.
        context = tuple(sorted(item for item in self.stacks.items() if item[0][1] >= cur_off))
        key = hashlib.blake2b(unplaced.tobytes() + minoff[unplaced].tobytes()
                              + rank[unplaced].tobytes()
                              + placed[self.twin_before_a[unplaced]].tobytes()
                              + repr((cur_off, context)).encode(), digest_size=16).digest()
        refuted = self.refuted.get(key)
        if refuted is not None and cur_rank >= refuted:
            return False
        low = minoff[unplaced]
        min_height = int((low + size[unplaced]).min())
        keep = low < min_height
        chosen, low = unplaced[keep], low[keep]
        # Canonical order: nothing below the last placement (nor level with it and ranked
        # before it). Placing b at x also lifts every other section of [lo, hi) to x at
        # least (offsets only rise), so x + that section's total must fit: prefix and
        # suffix maxima of the section totals reject most candidates at once.
        blo = self.range_lo[chosen]
        bhi = self.range_hi[chosen]
        r_all = rank[chosen]
        span = self.total[lo:hi]
        before = np.zeros(hi - lo + 1, dtype=np.int64)
        np.maximum.accumulate(span, out=before[1:])
        after = np.zeros(hi - lo + 1, dtype=np.int64)
        after[:-1] = np.maximum.accumulate(span[::-1])[::-1]
        capacity = self.capacity
        ok = ((low > cur_off) | ((low == cur_off) & (r_all >= cur_rank))) & (
            low + np.maximum(before[blo - lo], after[bhi - lo]) <= capacity) & (
            low + size[chosen] <= capacity)
        chosen, low, r_all = chosen[ok], low[ok], r_all[ok]
        order = np.lexsort((r_all, low))
        size_l, overlaps, align = self.size_l, self.overlaps, self.align
        total, ranges, obstacles = self.total, self.ranges, self.obstacles
        group, twin_before, stacks, sym_rank = (self.group, self.twin_before, self.stacks,
                                                self.sym_rank)
        for b, x, r in zip(chosen[order].tolist(), low[order].tolist(),
                           r_all[order].tolist(), strict=True):
            top = x + size_l[b]
            blo, bhi = ranges[b]
            twin = twin_before[b]
            if twin >= 0 and not placed[twin]:
                continue
            g = group[b]
            if g >= 0:
                below = stacks.get((g, x))
                if below is not None and below > sym_rank[b]:
                    continue
                stacks[(g, top)] = sym_rank[b]
            placed[b] = True
            self.solution[b] = x
            near = overlaps[b]
            near = near[~placed[near] & (minoff[near] < top)]
            old = minoff[near]
            step = align[near]
            minoff[near] = -(-top // step) * step
            if obstacles:
                for o in near.tolist():
                    if o in obstacles:
                        minoff[o] = self._lift(o, top)
            total[blo:bhi] -= size_l[b]
            ok = self._check(lo, hi, x) and self._descend(part, lo, hi, x, r, b)
            total[blo:bhi] += size_l[b]
            minoff[near] = old
            placed[b] = False
            if g >= 0:
                del stacks[(g, top)]
            if ok:
                return True
        if len(self.refuted) > _MEMO_LIMIT:
            self.refuted.clear()
        self.refuted[key] = cur_rank if refuted is None else min(refuted, cur_rank)
        return False

    def _descend(self, part: np.ndarray, lo: int, hi: int, x: int, r: int, b: int) -> bool:
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
            rest = part[~self.placed[part]]
            first = self.range_lo[rest]
            last = self.range_hi[rest]
            for a, z in zip(bounds, bounds[1:], strict=False):
                sub = rest[(first < z) & (a < last)]
                if len(sub) and not self._solve_part(sub, a, z):
                    return False
            return True
        finally:
            for s in range(blo, bhi - 1):
                cuts[s] += 1


    def _solve_part(self, sub: np.ndarray, a: int, z: int) -> bool:
        """Solve an independent part, remembering its outcome by state.

        After a split, the parent keeps trying other placements on the far side, which
        often leaves this part in exactly the same state: the unplaced buffers, their
        minimum offsets and the symmetry-breaking context fix its outcome, so a part
        solved (or refuted) once is never searched again.
        """
        groups = {self.group[b] for b in sub.tolist()} - {-1}
        context = tuple(sorted(item for item in self.stacks.items() if item[0][0] in groups))
        twins = self.twin_before_a[sub]
        key = (a, z, sub.tobytes(), self.minoff[sub].tobytes(),
               self.placed[twins].tobytes(), context)
        known = self.memo.get(key)
        if known is not None:
            if known is False:
                return False
            self.solution.update(known)
            return True
        saved = self.rank[sub]
        self.rank[sub] = self._rank(sub)
        try:
            ok = self._search(sub, a, z, 0, -1)
        finally:
            self.rank[sub] = saved
        if len(self.memo) > _MEMO_LIMIT:
            self.memo.clear()
        self.memo[key] = {b: self.solution[b] for b in sub.tolist()} if ok else False
        return ok


def _symmetry(shapes: list[tuple[int, int, int]], size: list[int],
              obstacles: dict[int, list[tuple[int, int]]]) -> tuple[list[int], list[list[int]]]:
    """Lifetime groups and classes of identical buffers, for symmetry breaking.

    Two buffers with the same lifetime and alignment that touch (one directly on the
    other) can swap places; two identical buffers can swap places anywhere. Each swap
    keeps the placement legal and no buffer able to drop, and moves the lower-ranked
    buffer down, so the rank-ordered offsets fall lexicographically: repeating them
    ends in a solution where touching same-lifetime buffers are stacked by rank and
    identical ones are placed in rank order. The search may look for those only.
    Buffers next to pinned ones are left out (their holes differ by size).
    """
    by_shape: dict[tuple[int, int, int], list[int]] = {}
    by_twin: dict[tuple[int, int, int, int], list[int]] = {}
    for i, shape in enumerate(shapes):
        if i in obstacles:
            continue
        by_shape.setdefault(shape, []).append(i)
        by_twin.setdefault((*shape, size[i]), []).append(i)
    group = [-1] * len(shapes)
    for g, members in enumerate(m for m in by_shape.values() if len(m) > 1):
        for i in members:
            group[i] = g
    return group, [m for m in by_twin.values() if len(m) > 1]


def _components(ranges: list[tuple[int, int]]) -> list[list[int]]:
    """Groups of buffer positions whose section ranges chain together (time components)."""
    order = sorted(range(len(ranges)), key=lambda i: ranges[i])
    groups: list[list[int]] = []
    reach = -1
    for i in order:
        lo, hi = ranges[i]
        if lo >= reach:
            groups.append([])
        groups[-1].append(i)
        reach = max(reach, hi)
    return groups


def search(lower: Sequence[int], upper: Sequence[int], size: Sequence[int],
           align: Sequence[int], pinned: Sequence[int], capacity: int, *,
           deadline: float, seed: int = 0, max_nodes: int | None = None,
           preorders: Sequence[str] = PREORDERS) -> ExactOutcome:
    """Offsets for the live buffers (``upper > lower`` and ``size > 0``) with
    ``pinned[i] < 0``, so that nothing overlaps below ``capacity``, or a proof that none
    exist. Pinned live buffers are obstacles; they are assumed to fit and not to clash
    with each other (the caller checks that). Buffers that are not live are left out.
    With ``max_nodes`` the search gives up (``NODE_LIMIT``) after that many nodes.
    """
    live = [i for i in range(len(size)) if upper[i] > lower[i] and size[i] > 0]
    free = [i for i in live if pinned[i] < 0]
    if not free:
        return ExactOutcome(SolveStatus.FEASIBLE, {}, 0)
    sections, ranges = _sections(lower, upper, live)
    free_set = set(free)
    rng = np.random.default_rng(seed) if seed else None
    offsets: dict[int, int] = {}
    nodes = 0
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 4 * len(free) + 1000))
    try:
        for group in _components([ranges[b] for b in free]):
            part = [free[i] for i in group]
            status, found, nodes = _solve_component(
                part, free_set, lower, upper, size, align, pinned, sections, ranges,
                capacity, deadline, rng, preorders, nodes, max_nodes)
            if status is not SolveStatus.FEASIBLE:
                return ExactOutcome(status, {}, nodes)
            offsets.update(found)
    finally:
        sys.setrecursionlimit(old_limit)
    return ExactOutcome(SolveStatus.FEASIBLE, offsets, nodes)


def _solve_component(part: list[int], free_set: set[int], lower: Sequence[int],
                     upper: Sequence[int], size: Sequence[int], align: Sequence[int],
                     pinned: Sequence[int], sections: list[list[int]],
                     ranges: dict[int, tuple[int, int]], capacity: int, deadline: float,
                     rng: np.random.Generator | None, preorders: Sequence[str],
                     nodes: int, max_nodes: int | None) -> tuple[str, dict[int, int], int]:
    """Round robin over preorders with a doubling node limit, on one time component."""
    local = {b: i for i, b in enumerate(part)}
    first = min(ranges[b][0] for b in part)
    last = max(ranges[b][1] for b in part)
    own_sections = sections[first:last]
    size_a = np.array([size[b] for b in part], dtype=np.int64)
    align_a = np.array([align[b] for b in part], dtype=np.int64)
    width = np.array([upper[b] - lower[b] for b in part], dtype=np.int64)
    range_a = np.array([(ranges[b][0] - first, ranges[b][1] - first) for b in part],
                       dtype=np.int64).reshape(-1, 2)
    member_lists = [[local[m] for m in members if m in local] for members in own_sections]
    members = np.array([m for ms in member_lists for m in ms], dtype=np.int64)
    starts = np.cumsum([0] + [len(ms) for ms in member_lists[:-1]]).astype(np.int64)
    pinned_in_section = [sorted((pinned[m], pinned[m] + size[m]) for m in ms
                                if m not in free_set) for ms in own_sections]
    # Free buffers overlap when they share a section; pinned ones are obstacles.
    neighbours: list[set[int]] = [set() for _ in part]
    obstacles: dict[int, list[tuple[int, int]]] = {}
    for ms, pins in zip(member_lists, pinned_in_section, strict=True):
        for i in ms:
            neighbours[i].update(ms)
            if pins:
                obstacles.setdefault(i, []).extend(pins)
    overlaps = [np.array(sorted(ns - {i}), dtype=np.int64) for i, ns in enumerate(neighbours)]
    obstacles = {i: sorted(set(v)) for i, v in obstacles.items()}
    fields = {"W": width, "A": width * size_a, "Z": size_a}
    noises = [rng.random(len(part)) if rng is not None else np.zeros(len(part))
              for _ in preorders]
    group, twins = _symmetry([(lower[b], upper[b], align[b]) for b in part],
                             size_a.tolist(), obstacles)
    memos: list[dict[tuple[object, ...], object]] = [{} for _ in preorders]
    tables: list[dict[bytes, int]] = [{} for _ in preorders]
    limit = 2 * len(part)
    while True:
        limit *= 2
        for index, code in enumerate(preorders):
            engine = _Search(size_a, align_a, overlaps, obstacles, members, starts, range_a,
                             pinned_in_section, capacity, code, fields, noises[index],
                             min(nodes + limit, sys.maxsize if max_nodes is None else max_nodes),
                             deadline, nodes,
                             group, twins, memos[index], tables[index])
            try:
                found = engine.run()
            except _Abort:
                nodes = engine.nodes
                if max_nodes is not None and nodes >= max_nodes:
                    return SolveStatus.NO_SOLUTION_FOUND, {}, nodes
                continue
            except _Deadline:
                return SolveStatus.NO_SOLUTION_IN_TIME, {}, engine.nodes
            nodes = engine.nodes
            if not found:
                return SolveStatus.INFEASIBLE, {}, nodes
            return SolveStatus.FEASIBLE, {part[i]: x for i, x in engine.solution.items()}, nodes
