"""MEM_RANGE, ALIAS and LIFETIME on the legal schedule's two VTCM buffers, plus a third."""

from __future__ import annotations

from typing import Any

import checker

from .schedules import legal, on_buffer


def with_buffer(offset: int, alloc: int, free: int, size: int = 2048) -> dict[str, Any]:
    doc = legal()
    doc["problem"]["buffers"]["bX"] = {"memory": "VTCM", "size": size, "align": 2048}
    doc["buffers"]["bX"] = {"offset": offset, "alloc": alloc, "free": free}
    return doc


def test_bytes_may_be_reused_once_freed() -> None:
    assert checker.verify(with_buffer(0, 50, 70)).legal      # bA is freed at 50
    assert checker.verify(with_buffer(0, 49, 70)).codes() == {"ALIAS"}


def test_alias_is_found_through_a_large_buffer() -> None:
    """bX [2048, 10240) covers bA's end and bC entirely; both collisions are seen."""
    report = checker.verify(with_buffer(2048, 0, 5, size=8192))
    assert report.codes() == {"ALIAS"}
    assert [v.buffers for v in report.violations] == [("bA", "bX")]
    report = checker.verify(with_buffer(6144, 20, 25))
    assert [v.buffers for v in report.violations] == [("bC", "bX")]


def test_empty_windows_alias_nothing() -> None:
    assert checker.verify(with_buffer(0, 10, 10)).legal


def test_a_buffer_of_size_zero_is_format() -> None:
    assert checker.verify(with_buffer(0, 0, 60, size=0)).codes() == {"FORMAT"}


def test_range_checks() -> None:
    assert checker.verify(with_buffer(-2048, 60, 70)).codes() == {"MEM_RANGE"}
    assert checker.verify(with_buffer(14336, 60, 70)).legal           # ends at capacity
    assert checker.verify(with_buffer(14336, 60, 70, 4096)).codes() == {"MEM_RANGE"}


def test_lifetime_window_itself() -> None:
    assert checker.verify(with_buffer(8192, 70, 60)).codes() == {"LIFETIME"}
    assert checker.verify(with_buffer(8192, -1, 60)).codes() == {"LIFETIME"}


def test_every_access_lies_inside_the_window() -> None:
    doc = legal()
    doc["buffers"]["bC"]["alloc"] = 11   # mm0 writes bC from t=10
    [violation] = checker.verify(doc).violations
    assert violation.code == "LIFETIME"
    assert violation.ops == ("mm0",) and violation.buffers == ("bC",) and violation.time == 10


def test_an_inverted_window_lies_inside_any_lifetime() -> None:
    """An op with ``end < start`` (DURATION) runs in an empty window: its accesses need no
    lifetime. A zero-length window ``[t, t)`` still needs ``alloc <= t <= free``."""
    ops = {"a": (0, 10, [], [(0, 8, "w")]), "r": (30, 12, [(0, 8, "w")], [])}
    doc = on_buffer(ops)
    doc["buffers"]["b"] = {"offset": 0, "alloc": 0, "free": 20}
    assert checker.verify(doc).codes() == {"DURATION"}
    doc["ops"]["r"].update(start=30, end=30)
    doc["makespan"] = 30
    assert checker.verify(doc).codes() == {"LIFETIME"}


def test_an_inverted_window_in_the_legal_schedule_is_only_a_duration_fault() -> None:
    """mm0 at [55, 10): starts after bA is freed and holds HMX 0 while mm1 does, but its
    window is empty; its write of C0 is visible at its end, before st reads it."""
    doc = legal()
    doc["ops"]["mm0"].update(start=55, end=10)
    assert checker.verify(doc).codes() == {"DURATION"}
