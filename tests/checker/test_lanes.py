"""UNITS and LANE_OVERLAP: half-open windows, empty windows, long holders."""

from __future__ import annotations

from typing import Any

import checker

from .schedules import with_idle


def codes(doc: dict[str, Any]) -> set[str]:
    return checker.verify(doc).codes()


def test_touching_windows_share_a_unit() -> None:
    hvx = {"HVX": 1}
    assert codes(with_idle((0, 5, {"HVX": [0]}), (5, 9, {"HVX": [0]}), lanes=hvx)) == set()
    assert codes(with_idle((0, 5, {"HVX": [0]}), (4, 9, {"HVX": [0]}), lanes=hvx)) == \
        {"LANE_OVERLAP"}
    assert codes(with_idle((0, 5, {"HVX": [0]}), (4, 9, {"HVX": [1]}), lanes=hvx)) == set()


def test_empty_windows_hold_nothing() -> None:
    hvx = {"HVX": 1}
    assert codes(with_idle((0, 9, {"HVX": [0]}), (4, 4, {"HVX": [0]}), lanes=hvx)) == set()


def test_overlap_is_found_past_a_long_holder() -> None:
    """A long op followed by short ones: each short one collides with the long one."""
    hvx = {"HVX": 1}
    doc = with_idle((0, 100, {"HVX": [0]}), (10, 20, {"HVX": [0]}), (30, 40, {"HVX": [0]}),
                    lanes=hvx)
    doc["makespan"] = 100
    overlaps = [v.ops for v in checker.verify(doc).violations]
    assert overlaps == [("i0", "i1"), ("i0", "i2")]


def test_units_are_distinct_and_match_the_mode() -> None:
    assert codes(with_idle((0, 5, {"HVX": [0, 0]}), lanes={"HVX": 2})) == {"UNITS"}
    assert codes(with_idle((0, 5, {"HVX": [0, 1]}), lanes={"HVX": 2})) == set()
    assert codes(with_idle((0, 5, {"HVX": [0]}))) == {"UNITS"}  # mode asks none
    assert codes(with_idle((0, 5, {"HVX": [-1]}), lanes={"HVX": 1})) == {"UNITS"}


def test_a_nonexistent_unit_held_twice_is_only_a_units_fault() -> None:
    """Two ops on HVX index 2 of a 2-unit lane at once: that unit does not exist, so each
    op breaks UNITS and nothing is shared (LANE_OVERLAP is about units of the lane)."""
    hvx = {"HVX": 1}
    report = checker.verify(with_idle((0, 5, {"HVX": [2]}), (2, 7, {"HVX": [2]}), lanes=hvx))
    assert report.codes() == {"UNITS"}
    assert len(report.violations) == 2
    # the twin on an existing unit: the same windows collide
    assert codes(with_idle((0, 5, {"HVX": [1]}), (2, 7, {"HVX": [1]}), lanes=hvx)) == \
        {"LANE_OVERLAP"}


def test_an_inverted_window_holds_no_unit() -> None:
    """``end < start`` is DURATION's fault; the window is empty and holds nothing."""
    hvx = {"HVX": 1}
    doc = with_idle((0, 9, {"HVX": [0]}), (2, 7, {"HVX": [0]}), lanes=hvx)
    doc["problem"]["ops"]["i1"]["modes"][0]["duration"] = 5
    assert codes(doc) == {"LANE_OVERLAP"}
    doc["ops"]["i1"].update(start=7, end=2)
    assert codes(doc) == {"DURATION"}
