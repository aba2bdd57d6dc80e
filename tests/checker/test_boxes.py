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


@METHODS
@given(case=boxes_in())
def test_partition_agrees_with_brute_force(cells: int, case: tuple[Box, list[Box]]) -> None:
    region, items = case
    overlap, gap = brute_partition(region, items)
    with mock.patch.object(boxes, "GRID_CELLS", cells):
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


@st.composite
def boxes_around(draw: st.DrawFn) -> tuple[Box, list[Box]]:
    """A region and non-empty boxes of its rank, some inside it, some across or outside
    its edges."""
    rank = draw(st.integers(0, 5))
    region = tuple(draw(st.tuples(st.integers(-3, 3), st.integers(4, 9))) for _ in range(rank))
    items = []
    for _ in range(draw(st.integers(0, 8))):
        dims = []
        for _ in range(rank):
            lo = draw(st.integers(-6, 11))
            dims.append((lo, draw(st.integers(lo + 1, 12))))
        items.append(tuple(dims))
    return region, items


@given(case=boxes_around())
def test_clip_all_is_clip_of_each(case: tuple[Box, list[Box]]) -> None:
    """The NumPy test for boxes already inside and the Python clip of the others give
    what clipping each box does, the boxes inside returned as they are, and the corners
    of the kept parts."""
    region, items = case
    parts, corners = boxes.clip_all(items, region)
    assert parts == [boxes.clip(box, region) for box in items]
    for box, part in zip(items, parts, strict=True):
        assert (part is box) == boxes.inside(box, region)
    kept = [part for part in parts if part is not None]
    assert corners.shape == (len(kept), len(region), 2)
    assert corners.tolist() == [[list(dim) for dim in part] for part in kept]
