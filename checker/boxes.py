"""Box geometry for the coverage and DDR rules, without all-pairs loops.

Both questions asked here (do these boxes partition a region? which writes touch this
read?) are answered on the *compressed grid*: the distinct box bounds along each
dimension cut the region into cells that no box splits, so counting per cell is exact.
Tilings made by an operator library have few distinct bounds per dimension, so the grid
is about as large as the number of boxes and NumPy does the counting. When the grid
would exceed :data:`GRID_CELLS` cells, a sort-and-sweep along one dimension takes over.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import product
from math import prod

import numpy as np

from checker.model import Box

__all__ = ["GRID_CELLS", "Partition", "volume", "inside", "clip", "show", "partition",
           "latest_writes"]

#: Largest compressed grid built in memory (cells); beyond it the sweep is used.
GRID_CELLS = 1 << 22


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
    """Pairs of intersecting boxes, one per box, by a sweep along the most varied dimension."""
    rank = len(boxes[0])
    axis = max(range(rank), key=lambda k: len({b[k][0] for b in boxes}))
    order = sorted(range(len(boxes)), key=lambda i: boxes[i][axis][0])
    active: list[int] = []
    pairs = []
    for i in order:
        box = boxes[i]
        lo = box[axis][0]
        active = [j for j in active if boxes[j][axis][1] > lo]
        for j in active:
            if intersects(box, boxes[j]):
                pairs.append((ids[i], ids[j]))
                break
        active.append(i)
    return pairs


def _grid(boxes: list[Box], region: Box) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Per-dimension cut points and each box's cell index range on the compressed grid."""
    corners = np.array(boxes, dtype=np.int64).reshape(len(boxes), len(region), 2)
    lo, hi = corners[:, :, 0], corners[:, :, 1]
    cuts = [np.unique(np.concatenate([lo[:, k], hi[:, k], np.array(region[k], np.int64)]))
            for k in range(len(region))]
    ilo = np.stack([np.searchsorted(cuts[k], lo[:, k]) for k in range(len(region))], axis=1)
    ihi = np.stack([np.searchsorted(cuts[k], hi[:, k]) for k in range(len(region))], axis=1)
    return cuts, ilo, ihi


def partition(region: Box, boxes: list[Box]) -> Partition:
    """Check that ``boxes`` (each inside ``region``) cover every point of it exactly once."""
    if region and boxes:
        corners = np.array(boxes, dtype=np.int64).reshape(len(boxes), len(region), 2)
        ids = np.flatnonzero((corners[:, :, 0] < corners[:, :, 1]).all(axis=1)).tolist()
    else:
        ids = list(range(len(boxes)))
    kept = boxes if len(ids) == len(boxes) else [boxes[i] for i in ids]
    if volume(region) == 0:
        return Partition([], False, None)
    if not kept:
        return Partition([], True, region)
    if not region:  # rank 0: one point, covered by every box
        return Partition([(ids[i], ids[0]) for i in range(1, len(ids))], False, None)
    cuts, ilo, ihi = _grid(kept, region)
    cells = prod(len(c) - 1 for c in cuts)
    if cells > GRID_CELLS:
        overlaps = _sweep_overlaps(kept, ids)
        if overlaps:
            return Partition(overlaps, None, None)
        return Partition([], sum(map(volume, kept)) < volume(region), None)
    rank = len(region)
    diff = np.zeros([len(c) for c in cuts], dtype=np.int32)
    for corner in product((0, 1), repeat=rank):
        index = tuple(ihi[:, k] if corner[k] else ilo[:, k] for k in range(rank))
        np.add.at(diff, index, -1 if sum(corner) % 2 else 1)
    for axis in range(rank):
        np.cumsum(diff, axis=axis, out=diff)
    counts = diff[tuple(slice(0, len(c) - 1) for c in cuts)]
    holes = np.argwhere(counts == 0)
    gap = None
    if len(holes):
        cell = holes[0]
        gap = tuple((int(cuts[k][cell[k]]), int(cuts[k][cell[k] + 1])) for k in range(rank))
    overlaps = _sweep_overlaps(kept, ids) if (counts > 1).any() else []
    return Partition(overlaps, gap is not None, gap)


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
