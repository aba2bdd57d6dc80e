"""Ops, lanes and budgets: the half-open window edges and what each rule ignores."""

from __future__ import annotations

from typing import Any

import checker

from .schedules import legal


def codes(doc: dict[str, Any]) -> set[str]:
    return checker.verify(doc).codes()


def with_idle(*windows: tuple[int, int, dict[str, list[int]]], draw: int = 0,
              lanes: dict[str, int] | None = None) -> dict[str, Any]:
    """The legal schedule plus ops ``i0, i1, ...`` of duration 0 in the given windows."""
    doc = legal()
    for k, (start, end, units) in enumerate(windows):
        mode: dict[str, Any] = {"duration": 0, "lanes": lanes or {}}
        if draw:
            mode["budgets"] = {"DDR_BW": draw}
        doc["problem"]["ops"][f"i{k}"] = {"task": "g0", "modes": [mode]}
        doc["ops"][f"i{k}"] = {"mode": 0, "start": start, "end": end, "units": units}
    return doc


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


def test_after_allows_equal_times() -> None:
    doc = legal()
    doc["problem"]["after"].append(["mm0", "mm1"])  # mm0 ends at 30, mm1 starts at 30
    assert codes(doc) == set()


def test_mode_problems_do_not_cascade() -> None:
    doc = legal()
    doc["ops"]["st"]["mode"] = -1
    assert codes(doc) == {"MODE"}


def test_makespan_of_an_empty_schedule_is_zero() -> None:
    doc = legal()
    doc["problem"]["ops"] = {}
    doc["problem"]["after"] = []
    doc["problem"]["tasks"]["g0"] = {"kind": "gemm"}
    doc["problem"]["buffers"] = {}
    doc["ops"], doc["buffers"], doc["makespan"] = {}, {}, 0
    assert codes(doc) == {"OUTPUT"}  # C is an output nobody writes
    doc["problem"]["tensors"]["C"]["role"] = "input"
    assert codes(doc) == set()
    doc["makespan"] = 1
    assert codes(doc) == {"MAKESPAN"}
