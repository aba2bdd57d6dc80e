"""The project's checker judges placements through the schedule converter."""

import checker
from schedsearch.engine.placement import PlacementBuffer, place, placement_to_schedule_document
from tests.engine.placement.helpers import guillotine


def verify(buffers, offsets, capacity, alignment=1):
    return checker.verify(placement_to_schedule_document(buffers, offsets, capacity,
                                                         alignment))


def test_engine_placements_pass_the_checker():
    buffers = guillotine(seed=2, cuts=30) + [PlacementBuffer("dead", 5, 5, 3),
                                             PlacementBuffer("empty", 0, 9, 0)]
    result = place(buffers, 64, time_limit=10)
    assert result.status == "OPTIMAL"
    report = verify(buffers, result.offsets, 64)
    assert report.legal, [v.code for v in report.violations]


def test_aligned_and_pinned_placement_passes_the_checker():
    buffers = [PlacementBuffer("a", 0, 4, 6, align=8), PlacementBuffer("b", 1, 5, 8, align=8),
               PlacementBuffer("p", 2, 6, 8, offset=16, align=8)]
    result = place(buffers, None, time_limit=5)
    report = verify(buffers, result.offsets, result.peak, alignment=8)
    assert report.legal, [v.code for v in report.violations]


def test_overlapping_placement_is_an_alias_violation():
    buffers = [PlacementBuffer("a", 0, 4, 4), PlacementBuffer("b", 2, 6, 4)]
    report = verify(buffers, {"a": 0, "b": 2}, 8)
    assert not report.legal
    assert {v.code for v in report.violations} == {"ALIAS"}


def test_placement_beyond_capacity_is_a_range_violation():
    buffers = [PlacementBuffer("a", 0, 4, 4)]
    report = verify(buffers, {"a": 6}, 8)
    assert {v.code for v in report.violations} == {"MEM_RANGE"}
