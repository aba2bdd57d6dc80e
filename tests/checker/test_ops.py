"""AFTER, MODE and MAKESPAN edges (names and durations are in the negative cases)."""

from __future__ import annotations

from typing import Any

import checker

from .schedules import legal


def codes(doc: dict[str, Any]) -> set[str]:
    return checker.verify(doc).codes()


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
