"""COVERAGE: ranks, tasks without a space, unscheduled ops."""

from __future__ import annotations

from typing import Any

import checker

from .schedules import legal


def codes(doc: dict[str, Any]) -> set[str]:
    return checker.verify(doc).codes()


def test_op_space_of_the_wrong_rank() -> None:
    doc = legal()
    doc["problem"]["ops"]["mm1"]["space"] = [[0, 4], [4, 8], [0, 1]]
    messages = [v.message for v in checker.verify(doc).violations]
    assert "op 'mm1' has a space of rank 3 but task 'g0' has rank 2" in messages
    assert codes(doc) == {"COVERAGE"}


def test_tasks_without_space_or_outputs_have_no_rule() -> None:
    doc = legal()
    doc["problem"]["tasks"]["g0"] = {"kind": "gemm"}
    doc["problem"]["ops"]["mm1"]["space"] = [[0, 1], [0, 1]]
    assert codes(doc) == set()


def test_unscheduled_ops_still_count_for_coverage() -> None:
    """COVERAGE and OUTPUT are properties of the problem: a missing op is OP_MISSING."""
    doc = legal()
    del doc["ops"]["ld"]
    assert codes(doc) == {"OP_MISSING", "STALE_READ"}
