"""BUDGET: ends before starts, capacity is inclusive, one report per stretch."""

from __future__ import annotations

from typing import Any

import checker

from .schedules import with_idle


def codes(doc: dict[str, Any]) -> set[str]:
    return checker.verify(doc).codes()


def test_budget_ends_before_starts() -> None:
    # st draws 40 over [50, 60); idle ops draw 20 or 30 more
    assert codes(with_idle((40, 50, {}), draw=30)) == set()
    assert codes(with_idle((41, 51, {}), draw=30)) == {"BUDGET"}
    assert codes(with_idle((50, 60, {}), draw=20)) == set()  # exactly at capacity
    assert codes(with_idle((55, 55, {}), draw=60)) == set()  # an instant draws nothing


def test_one_budget_violation_per_stretch_over_capacity() -> None:
    doc = with_idle((45, 70, {}), (52, 58, {}), draw=30)
    doc["makespan"] = 70
    [violation] = checker.verify(doc).violations
    assert violation.code == "BUDGET" and violation.time == 50
    assert violation.ops == ("i0", "st")
