"""The box geometry against brute force: every point of a small space, enumerated."""

from __future__ import annotations

from itertools import product
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checker import boxes
from checker.boxes import latest_writes, partition
from checker.model import Box


def points(box: Box) -> set[tuple[int, ...]]:
    return set(product(*(range(lo, hi) for lo, hi in box)))


@st.composite
def boxes_in(draw: st.DrawFn, rank: int = 2, extent: int = 6) -> tuple[Box, list[Box]]:
    region = tuple((0, extent) for _ in range(rank))
    items = []
    for _ in range(draw(st.integers(0, 8))):
        dims = []
        for _ in range(rank):
            lo = draw(st.integers(0, extent))
            dims.append((lo, draw(st.integers(lo, extent))))
        items.append(tuple(dims))
    return region, items


def brute_partition(region: Box, items: list[Box]) -> tuple[bool, bool]:
    """(some point covered twice, some point uncovered)."""
    seen: dict[tuple[int, ...], int] = {}
    for box in items:
        for point in points(box):
            seen[point] = seen.get(point, 0) + 1
    return any(n > 1 for n in seen.values()), bool(points(region) - set(seen))


#: Run each property on the compressed grid and on the sweep fallback (no grid allowed).
METHODS = pytest.mark.parametrize("cells", [boxes.GRID_CELLS, 0], ids=["grid", "sweep"])


@pytest.mark.parametrize("per_box", [boxes.GRID_CELLS_PER_BOX, 0],
                         ids=["grid", "sweep-then-grid-for-holes"])
@METHODS
@given(case=boxes_in())
def test_partition_agrees_with_brute_force(cells: int, per_box: int,
                                           case: tuple[Box, list[Box]]) -> None:
    region, items = case
    overlap, gap = brute_partition(region, items)
    with mock.patch.object(boxes, "GRID_CELLS", cells), \
            mock.patch.object(boxes, "GRID_CELLS_PER_BOX", per_box):
        result = partition(region, items)
    assert bool(result.overlaps) == overlap
    for i, j in result.overlaps:
        assert i != j and points(items[i]) & points(items[j])
    if result.gapped is not None:
        assert result.gapped == gap
    else:
        assert overlap  # unknown only when overlaps hide the volume argument
    if result.gap is not None:
        assert points(result.gap) and not points(result.gap) & set().union(
            *map(points, items))


@METHODS
@given(case=boxes_in(rank=3, extent=4))
def test_partition_in_three_dimensions(cells: int, case: tuple[Box, list[Box]]) -> None:
    region, items = case
    overlap, gap = brute_partition(region, items)
    with mock.patch.object(boxes, "GRID_CELLS", cells):
        result = partition(region, items)
    assert bool(result.overlaps) == overlap
    assert result.gapped in (gap, None)


@METHODS
def test_a_grid_tiling_is_a_partition(cells: int) -> None:
    tiles = [((r, r + 2), (c, c + 3)) for r in range(0, 8, 2) for c in range(0, 9, 3)]
    with mock.patch.object(boxes, "GRID_CELLS", cells):
        result = partition(((0, 8), (0, 9)), tiles)
    assert result.overlaps == [] and result.gapped is False


def _staircase(m: int) -> tuple[Box, list[Box]]:
    """A square of side m cut into a staircase: column i split at height i + 1 (about m^2
    grid cells for 2m boxes)."""
    items = [((i, i + 1), (lo, hi)) for i in range(m)
             for lo, hi in ((0, i + 1), (i + 1, m)) if lo < hi]
    return ((0, m), (0, m)), items


def test_a_partition_with_many_grid_cells_per_box_is_swept_not_counted() -> None:
    region, items = _staircase(400)  # 160,000 cells for 799 boxes: under GRID_CELLS
    with mock.patch.object(boxes, "_coverage_counts", side_effect=AssertionError("grid")):
        result = partition(region, items)
    assert result.overlaps == [] and result.gapped is False


def test_a_hole_in_a_swept_partition_is_located_on_the_grid() -> None:
    region, items = _staircase(400)
    result = partition(region, items[:10] + items[11:])
    hole = items[10]
    assert result.gapped is True and result.gap is not None
    assert points(result.gap) <= points(hole)


def test_rank_zero_and_empty_regions() -> None:
    assert partition((), [()]).gapped is False
    assert partition((), [(), ()]).overlaps == [(1, 0)]
    assert partition((), []).gapped is True
    assert partition(((3, 3),), []).gapped is False


@METHODS
@given(writes=boxes_in(), reads=boxes_in(), ends=st.lists(st.integers(0, 50), min_size=8,
                                                          max_size=8))
def test_latest_writes_agrees_with_brute_force(cells: int, writes: tuple[Box, list[Box]],
                                               reads: tuple[Box, list[Box]],
                                               ends: list[int]) -> None:
    write_boxes, read_boxes = writes[1], reads[1]
    ends = ends[:len(write_boxes)]
    with mock.patch.object(boxes, "GRID_CELLS", cells):
        answers = latest_writes(write_boxes, ends, read_boxes)
    for read, answer in zip(read_boxes, answers, strict=True):
        touching = [i for i, w in enumerate(write_boxes) if points(w) & points(read)]
        if not touching:
            assert answer is None
        else:
            assert answer is not None and answer[0] == max(ends[i] for i in touching)
            assert answer[1] in touching and ends[answer[1]] == answer[0]


def test_axes_every_box_spans_are_set_aside() -> None:
    """Issue 29: rank-N boxes walked 2^N corners each; an output of shape [1] * 40 is a
    single point now, and a split along one of 64 axes is a problem of rank 1."""
    point = ((0, 1),) * 40
    assert partition(point, [point]) == boxes.Partition([], False, None)
    assert partition(point, [point, point]).overlaps == [(1, 0)]
    region = ((0, 3),) + ((0, 1),) * 63
    halves = [((0, 1),) + ((0, 1),) * 63, ((1, 3),) + ((0, 1),) * 63]
    assert partition(region, halves) == boxes.Partition([], False, None)
    gap = partition(region, halves[:1])
    assert gap.gapped and gap.gap == ((1, 3),) + ((0, 1),) * 63


def test_more_varying_axes_than_the_grid_counts_are_swept() -> None:
    rank = boxes.GRID_RANK + 1
    region = ((0, 2),) * rank
    cells = [tuple((c, c + 1) for c in corner) for corner in product((0, 1), repeat=rank)]
    assert partition(region, cells) == boxes.Partition([], False, None)
    assert partition(region, cells[1:]).gapped is True
    assert partition(region, [*cells, cells[3]]).overlaps == [(len(cells), 3)]


def as_lists(box: Box) -> list[list[int]]:
    """A box as the loader keeps it: the document's own lists."""
    return [list(interval) for interval in box]


@st.composite
def boxes_around(draw: st.DrawFn) -> tuple[Box, list[Box]]:
    """A region and non-empty boxes of its rank, some inside it, some across or outside
    its edges, some (ranks past READ_WHOLE_RANK) equal to it along most axes; as tuples or
    as the document's lists."""
    rank = draw(st.integers(0, boxes.READ_WHOLE_RANK + 3))
    region = tuple(draw(st.tuples(st.integers(-3, 3), st.integers(4, 9))) for _ in range(rank))
    items = []
    for _ in range(draw(st.integers(0, 8))):
        dims = []
        for k in range(rank):
            if draw(st.integers(0, 2)) == 0:
                lo = draw(st.integers(-6, 11))
                dims.append((lo, draw(st.integers(lo + 1, 12))))
            else:
                dims.append(region[k])
        items.append(tuple(dims))
    if draw(st.booleans()):
        region, items = as_lists(region), [as_lists(box) for box in items]
    return region, items


@given(case=boxes_around())
def test_clip_all_is_clip_of_each(case: tuple[Box, list[Box]]) -> None:
    """The NumPy test for boxes already inside and the Python clip of the others give
    what clipping each box does, the boxes inside returned as they are, and the corners
    of the kept parts: their bounds along the axes read, the region's along the others."""
    region, items = case
    parts, corners = boxes.clip_all(items, region)
    assert parts == [boxes.clip(box, region) for box in items]
    for box, part in zip(items, parts, strict=True):
        assert (part is box) == boxes.inside(box, region)
    kept = [part for part in parts if part is not None]
    assert corners.values.shape == (len(kept), len(corners.axes), 2)
    assert corners.values.tolist() == [[list(part[k]) for k in corners.axes] for part in kept]
    for part in kept:
        assert all(tuple(part[k]) == tuple(region[k]) for k in range(len(region))
                   if k not in corners.axes)


@given(case=boxes_around())
def test_corners_leave_out_only_axes_equal_to_the_region(case: tuple[Box, list[Box]]) -> None:
    """Past READ_WHOLE_RANK, lists are compared with the region before they are read: an
    axis is left out only where every box equals the region (and never for tuples)."""
    region, items = case
    corners = boxes.corners_of(items, region)
    rank = len(region)
    same = [k for k in range(rank) if all(tuple(box[k]) == tuple(region[k]) for box in items)]
    if rank > boxes.READ_WHOLE_RANK and items and isinstance(items[0], list):
        assert corners.axes == [k for k in range(rank) if k not in same]
    else:
        assert corners.axes == list(range(rank))


@st.composite
def deep_boxes(draw: st.DrawFn) -> tuple[Box, list[Box]]:
    """A region of rank past READ_WHOLE_RANK and boxes inside it, most axes whole."""
    rank = draw(st.integers(boxes.READ_WHOLE_RANK + 1, boxes.READ_WHOLE_RANK + 3))
    region = tuple((0, draw(st.integers(1, 3))) for _ in range(rank))
    cut = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=2, unique=True))
    items = []
    for _ in range(draw(st.integers(0, 6))):
        dims = []
        for k in range(rank):
            lo = draw(st.integers(0, region[k][1])) if k in cut else 0
            dims.append((lo, draw(st.integers(lo, region[k][1]))) if k in cut else region[k])
        items.append(tuple(dims))
    return region, items


@METHODS
@given(case=deep_boxes())
def test_partition_of_deep_lists_agrees_with_brute_force(cells: int,
                                                        case: tuple[Box, list[Box]]) -> None:
    """The same boxes as tuples (every axis read) and as the document's lists (axes equal
    to the region left out) give the same partition, and brute force agrees."""
    region, items = case
    overlap, gap = brute_partition(region, items)
    with mock.patch.object(boxes, "GRID_CELLS", cells):
        read_all = partition(region, items)
        compared = partition(as_lists(region), [as_lists(box) for box in items])
    assert (compared.overlaps, compared.gapped) == (read_all.overlaps, read_all.gapped)
    assert compared.gap == read_all.gap or \
        tuple(map(tuple, compared.gap)) == read_all.gap  # the region itself, as given
    assert bool(compared.overlaps) == overlap
    assert compared.gapped in (gap, None)
