"""Box geometry for the coverage and DDR rules, without all-pairs loops.

Both questions asked here (do these boxes partition a region? which writes touch this
read?) are answered on the *compressed grid*: the distinct box bounds along each
dimension cut the region into cells that no box splits, so counting per cell is exact.
Tilings made by an operator library have few distinct bounds per dimension, so the grid
is about as large as the number of boxes and NumPy does the counting. When the grid
would exceed :data:`GRID_CELLS` cells, or :data:`GRID_CELLS_PER_BOX` cells per box, a
sort-and-sweep along one dimension takes over.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from heapq import heappop, heappush
from itertools import chain, cycle, product
from math import prod
from operator import itemgetter, ne

import numpy as np

from checker.intervals import LiveIntervals
from checker.model import Box

__all__ = ["GRID_CELLS", "GRID_CELLS_PER_BOX", "GRID_RANK", "READ_WHOLE_RANK", "Partition",
           "Corners", "volume", "inside", "clip", "clip_all", "corners_of", "show", "partition",
           "latest_writes"]

#: Largest compressed grid built in memory (cells); beyond it the sweep is used.
GRID_CELLS = 1 << 22
#: Most axes counted on the grid: its difference array costs ``2^rank`` updates per box.
GRID_RANK = 4
#: Most grid cells per box for a partition to be counted on the grid. A tiling's grid has
#: about one cell per box; an irregular partition's can have ``n^rank`` (a staircase of n
#: boxes, n^2/4), so past this the grid's cost would grow faster than the boxes'. The
#: sweep costs about what 500-750 cells per box cost on a staircase of rank 2.
GRID_CELLS_PER_BOX = 64


def volume(box: Box) -> int:
    return prod(hi - lo for lo, hi in box)


def inside(box: Box, region: Box) -> bool:
    if len(box) == 1:  # the common ranks, without a generator
        return region[0][0] <= box[0][0] and box[0][1] <= region[0][1]
    if len(box) == 2:
        return region[0][0] <= box[0][0] and box[0][1] <= region[0][1] and \
            region[1][0] <= box[1][0] and box[1][1] <= region[1][1]
    return all(rlo <= lo and hi <= rhi for (lo, hi), (rlo, rhi) in zip(box, region, strict=True))


def clip(box: Box, region: Box) -> Box | None:
    """``box`` intersected with ``region``, or ``None`` when the intersection is empty."""
    if inside(box, region):
        return box
    out = tuple((max(lo, rlo), min(hi, rhi)) for (lo, hi), (rlo, rhi)
                in zip(box, region, strict=True))
    return out if all(lo < hi for lo, hi in out) else None


@dataclass(slots=True)
class Corners:
    """Some boxes' bounds along ``axes`` of their region, as an array ``[box, axis, (lo,
    hi)]``; along the region's other axes every one of these boxes is the region's own
    interval (:func:`corners_of`)."""

    axes: list[int]
    values: np.ndarray


def clip_all(boxes: list[Box], region: Box) -> tuple[list[Box | None], Corners]:
    """Each box (of ``region``'s rank) clipped to ``region`` as :func:`clip` does, and the
    corners (:func:`corners_of`) of the clipped boxes that are not ``None``, in order.

    One NumPy test finds the boxes already inside (every box of a legal tiling): they are
    returned as they are, and only the others are clipped in Python. A box of rank 64 is
    128 numbers; comparing them one by one in Python was most of COVERAGE and OUTPUT.
    """
    corners = corners_of(boxes, region)
    if not boxes or not corners.axes:
        return list(boxes), corners
    region_lo, region_hi = _bounds(region, corners.axes)
    values = corners.values
    within = ((values[:, :, 0] >= region_lo) & (values[:, :, 1] <= region_hi)).all(axis=1)
    if within.all():
        return list(boxes), corners
    parts: list[Box | None] = list(boxes)
    for i in np.flatnonzero(~within).tolist():
        parts[i] = clip(boxes[i], region)
    kept = [part for part in parts if part is not None]
    # clipping a box to the region changes none of the intervals that equal the region's
    return parts, Corners(corners.axes, _read(kept, corners.axes, len(region)))


def intersects(a: Box, b: Box) -> bool:
    return all(alo < bhi and blo < ahi for (alo, ahi), (blo, bhi) in zip(a, b, strict=True))


def show(box: Box) -> str:
    """``[0:128,0:256]``, the slice notation of value tags."""
    return "[" + ",".join(f"{lo}:{hi}" for lo, hi in box) + "]"


@dataclass(slots=True)
class Partition:
    """How a list of boxes fails to partition a region.

    ``overlaps`` pairs ``(i, j)``: box ``i`` intersects box ``j``, at most one pair per
    ``i``. ``gap`` is an uncovered box of the region; ``gapped`` says whether any point is
    uncovered: ``None`` when that is unknown (overlaps found and the grid too large to
    count, so volumes cannot tell).
    """

    overlaps: list[tuple[int, int]]
    gapped: bool | None
    gap: Box | None


def _sweep_overlaps(boxes: list[Box], ids: list[int]) -> list[tuple[int, int]]:
    """Pairs ``(ids[i], ids[j])`` of intersecting boxes, at most one per box, in
    ``O(n log n)`` for ranks 1 and 2.

    A sweep along axis ``A`` (the one with the most distinct lower bounds) keeps the boxes
    it crosses as live intervals of axis ``B`` (the next one, :class:`LiveIntervals`). A
    new box asks which live box meets it on ``B``; in rank 2 any answer intersects it,
    in higher ranks the other axes are compared too, one candidate at a time (so a
    tiling deep along a third axis costs more). A box found to overlap is reported once
    and left out of the sweep, so the live boxes stay disjoint.
    """
    rank = len(boxes[0])
    varied = sorted(range(rank), key=lambda k: -len({b[k][0] for b in boxes}))
    a = varied[0]
    order = sorted(range(len(boxes)), key=lambda i: boxes[i][a][0])
    if rank == 1:
        return _sweep_line(boxes, ids, order)
    b = varied[1]
    live = LiveIntervals([box[b] for box in boxes])
    ends: list[tuple[int, int]] = []
    pairs = []
    for i in order:
        box = boxes[i]
        while ends and ends[0][0] <= box[a][0]:
            live.remove(heappop(ends)[1])
        partner = _live_partner(live, boxes, box, b)
        if partner is not None:
            pairs.append((ids[i], ids[partner]))
            continue
        live.add(i)
        heappush(ends, (box[a][1], i))
    return pairs


def _sweep_line(boxes: list[Box], ids: list[int], order: list[int]) -> list[tuple[int, int]]:
    """Rank 1: by lower bound, each interval against the one reaching furthest so far."""
    pairs = []
    reach, holder = None, -1
    for i in order:
        lo, hi = boxes[i][0]
        if reach is not None and lo < reach:
            pairs.append((ids[i], ids[holder]))
        if reach is None or hi > reach:
            reach, holder = hi, i
    return pairs


def _live_partner(live: LiveIntervals, boxes: list[Box], box: Box, b: int) -> int | None:
    """A live box intersecting ``box`` on every axis, or ``None``."""
    lo, hi = box[b]
    found = live.meeting(lo, hi)
    if found is None or len(box) == 2 or intersects(box, boxes[found]):
        return found
    set_aside = [found]
    live.remove(found)
    while (found := live.meeting(lo, hi)) is not None and not intersects(box, boxes[found]):
        set_aside.append(found)
        live.remove(found)
    for k in set_aside:
        live.add(k)
    return found


#: Boxes of at most this rank are read whole: comparing each interval with the region's
#: first would cost about what reading it costs.
READ_WHOLE_RANK = GRID_RANK


def corners_of(boxes: list[Box], region: Box) -> Corners:
    """The corners of ``boxes`` (each of ``region``'s rank) along the axes where any of
    them may differ from ``region``.

    Past :data:`READ_WHOLE_RANK`, each interval is first compared whole with the
    region's, in C (``list != list``, no number taken out of either): an output of shape
    ``[n] + [1] * 63`` split along its first axis then reads 2 numbers per box, not 128.
    The comparison is exact where it says "equal"; an interval of another type than the
    region's list (a tuple) compares unequal and is read, which is only slower.
    """
    rank = len(region)
    axes = list(range(rank))
    if rank > READ_WHOLE_RANK and boxes:
        intervals = [list(interval) for interval in region]
        differ = np.fromiter(map(ne, chain.from_iterable(boxes), cycle(intervals)), bool,
                             rank * len(boxes)).reshape(len(boxes), rank)
        axes = np.flatnonzero(differ.any(axis=0)).tolist()
    return Corners(axes, _read(boxes, axes, rank))


def _read(boxes: list[Box], axes: list[int], rank: int) -> np.ndarray:
    """The bounds of ``boxes`` along ``axes`` as an array ``[box, axis, (lo, hi)]``
    (flattened first: NumPy reads a flat iterator of ints far faster than nested lists)."""
    if len(axes) == rank:
        flat = chain.from_iterable(chain.from_iterable(boxes))
    elif len(axes) == 1:
        flat = chain.from_iterable(map(itemgetter(axes[0]), boxes))
    elif axes:
        flat = chain.from_iterable(chain.from_iterable(map(itemgetter(*axes), boxes)))
    else:
        flat = iter(())
    return np.fromiter(flat, np.int64, 2 * len(axes) * len(boxes)).reshape(
        len(boxes), len(axes), 2)


def _bounds(region: Box, axes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The region's lower and upper bounds along ``axes``."""
    return (np.array([region[k][0] for k in axes], dtype=np.int64),
            np.array([region[k][1] for k in axes], dtype=np.int64))


def _grid(boxes: list[Box] | np.ndarray, region: Box
          ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Per-dimension cut points and each box's cell index range on the compressed grid."""
    rank = len(region)
    corners = boxes if isinstance(boxes, np.ndarray) else _read(boxes, list(range(rank)), rank)
    lo, hi = corners[:, :, 0], corners[:, :, 1]
    cuts = [np.unique(np.concatenate([lo[:, k], hi[:, k], np.array(region[k], np.int64)]))
            for k in range(len(region))]
    ilo = np.stack([np.searchsorted(cuts[k], lo[:, k]) for k in range(len(region))], axis=1)
    ihi = np.stack([np.searchsorted(cuts[k], hi[:, k]) for k in range(len(region))], axis=1)
    return cuts, ilo, ihi


def partition(region: Box, boxes: list[Box], corners: Corners | None = None) -> Partition:
    """Check that ``boxes`` (each inside ``region``) cover every point of it exactly once;
    ``corners`` is theirs (:func:`corners_of`) if the caller already has them.

    Empty boxes cover nothing, and axes every box spans whole are set aside (an output
    of shape ``[1] * 20`` is a problem of rank 0). Then the compressed grid counts
    coverage when it is small (at most :data:`GRID_RANK` axes and :data:`GRID_CELLS`
    entries, since its difference array costs ``2^rank`` updates per box); otherwise a
    sweep finds overlaps and, without them, the volumes tell whether anything is
    uncovered.
    """
    if volume(region) == 0:
        return Partition([], False, None)
    if not region:  # rank 0: one point, covered by every box
        return Partition([(i, 0) for i in range(1, len(boxes))], not boxes,
                         region if not boxes else None)
    if corners is None:
        corners = corners_of(boxes, region)
    # along the axes not read, every box is the region's interval: not empty, and whole
    values = corners.values
    ids = np.flatnonzero((values[:, :, 0] < values[:, :, 1]).all(axis=1)).tolist()
    if not ids:
        return Partition([], True, region)
    if len(ids) < len(boxes):
        values = values[ids]
    region_lo, region_hi = _bounds(region, corners.axes)
    whole = ((values[:, :, 0] == region_lo) & (values[:, :, 1] == region_hi)).all(axis=0)
    varying = np.flatnonzero(~whole).tolist()
    if not varying:  # every box is the whole region
        return Partition([(ids[i], ids[0]) for i in range(1, len(ids))], False, None)
    axes = [corners.axes[k] for k in varying]
    sub_region = tuple(tuple(region[k]) for k in axes)
    projected = values[:, varying, :]
    cuts, ilo, ihi = _grid(projected, sub_region)
    cells = prod(len(c) for c in cuts)
    fits = len(axes) <= GRID_RANK and cells <= GRID_CELLS
    if not fits or cells > GRID_CELLS_PER_BOX * len(ids):
        kept = _boxes(projected)
        overlaps = _sweep_overlaps(kept, ids)
        if overlaps:
            return Partition(overlaps, None, None)
        uncovered = sum(map(volume, kept)) < volume(sub_region)
        if not uncovered or not fits:
            return Partition([], uncovered, None)
        # a hole in a grid that fits: the grid says where it is (an illegal file's cost)
    counts = _coverage_counts(cuts, ilo, ihi)
    holes = np.argwhere(counts == 0)
    gap = None
    if len(holes):
        cell = holes[0]
        found = {k: (int(cuts[i][cell[i]]), int(cuts[i][cell[i] + 1]))
                 for i, k in enumerate(axes)}
        gap = tuple(found.get(k, tuple(region[k])) for k in range(len(region)))
    overlaps = _sweep_overlaps(_boxes(projected), ids) if (counts > 1).any() else []
    return Partition(overlaps, gap is not None, gap)


def _boxes(corners: np.ndarray) -> list[Box]:
    """Corners back to boxes, for the Python sweeps (built only when one runs)."""
    return [tuple(map(tuple, box)) for box in corners.tolist()]


def _coverage_counts(cuts: list[np.ndarray], ilo: np.ndarray, ihi: np.ndarray) -> np.ndarray:
    """How many boxes cover each cell of the compressed grid: +1/-1 at each box's
    ``2^rank`` corners of a difference array, then a running sum along every axis."""
    rank = len(cuts)
    diff = np.zeros([len(c) for c in cuts], dtype=np.int32)
    for corner in product((0, 1), repeat=rank):
        index = tuple(ihi[:, k] if corner[k] else ilo[:, k] for k in range(rank))
        np.add.at(diff, index, -1 if sum(corner) % 2 else 1)
    for axis in range(rank):
        np.cumsum(diff, axis=axis, out=diff)
    return diff[tuple(slice(0, len(c) - 1) for c in cuts)]


def latest_writes(writes: list[Box], ends: list[int],
                  reads: list[Box]) -> list[tuple[int, int] | None]:
    """For each read box, ``(end, index)`` of the latest-ending write that intersects it."""
    if not writes or not reads:
        return [None] * len(reads)
    rank = len(writes[0])
    if rank == 0:
        best = max(range(len(writes)), key=ends.__getitem__)
        return [(ends[best], best)] * len(reads)
    cuts, wlo, whi = _grid(writes + reads, tuple((0, 0) for _ in range(rank)))
    cells = prod(len(c) - 1 for c in cuts)
    answers: list[tuple[int, int] | None] = []
    if cells <= GRID_CELLS:
        floor = np.iinfo(np.int64).min
        best_end = np.full([len(c) - 1 for c in cuts], floor, dtype=np.int64)
        best_id = np.full(best_end.shape, -1, dtype=np.int64)
        lo, hi = wlo.tolist(), whi.tolist()
        for i, end in enumerate(ends):
            window = tuple(map(slice, lo[i], hi[i]))
            sub = best_end[window]
            later = sub < end
            sub[later] = end
            best_id[window][later] = i
        for r in range(len(writes), len(writes) + len(reads)):
            window = tuple(map(slice, lo[r], hi[r]))
            sub = best_end[window]
            if sub.size == 0:
                answers.append(None)
                continue
            at = int(sub.argmax())
            end = int(sub.flat[at])
            answers.append(None if end == floor else (end, int(best_id[window].flat[at])))
        return answers
    axis = max(range(rank), key=lambda k: len({b[k][0] for b in writes}))
    order = sorted(range(len(writes)), key=lambda i: writes[i][axis][0])
    starts = [writes[i][axis][0] for i in order]
    reach = max(b[axis][1] - b[axis][0] for b in writes)
    for box in reads:
        found: tuple[int, int] | None = None
        first = bisect_left(starts, box[axis][0] - reach)
        last = bisect_left(starts, box[axis][1])
        for i in order[first:last]:
            if intersects(box, writes[i]) and volume(writes[i]) and \
                    (found is None or ends[i] > found[0]):
                found = (ends[i], i)
        answers.append(found if volume(box) else None)
    return answers
