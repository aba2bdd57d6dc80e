"""Each program code: a minimal negative example and its legal twin (FORMATS.md, Program).

Every twin is the lowered program; every negative example changes one thing in it, so
the example shows the rule and nothing else."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from checker.program import verify_program

from .cases import read, schedule_doc, write
from .programs import lowered


def two_ops(a: list[Any], b: list[Any], **extra: Any) -> dict[str, Any]:
    """``a`` on DMA.0 over [0, 10), ``b`` on HMX.0 over [20, 30); (reads, writes) each."""
    return schedule_doc({"a": ("DMA.0", 0, 10, *a), "b": ("HMX.0", 20, 30, *b)}, **extra)


ORDER_CASES = {
    "ORDER_AFTER": two_ops([[], []], [[], []], after=[["a", "b"]]),
    "ORDER_RAW": two_ops([[], [write("x", "v")]], [[read("x", "v")], []],
                         buffers={"x": (64, 0, 0, 30)}),
    "ORDER_WAW": two_ops([[], [write("x", "v1")]], [[], [write("x", "v2")]],
                         buffers={"x": (64, 0, 0, 30)}),
    "ORDER_REUSE": two_ops([[], [write("x", "v")]], [[], [write("y", "w")]],
                           buffers={"x": (64, 0, 0, 10), "y": (64, 32, 20, 30)}),
    "ORDER_DDR": two_ops([[], [{"tensor": "T", "box": [[0, 4]]}]],
                         [[{"tensor": "T", "box": [[2, 4]]}], []],
                         tensors={"T": ([4], "temp")}),
}


@pytest.mark.parametrize("code", sorted(ORDER_CASES))
def test_missing_order_is_reported_with_its_two_ops(code: str) -> None:
    twin = lowered(ORDER_CASES[code])
    assert twin["waits"] == {"b": ["a"]}
    assert verify_program(twin).legal
    broken = copy.deepcopy(twin)
    broken["waits"] = {}
    report = verify_program(broken)
    assert report.codes() == {code}
    assert all(v.ops == ("a", "b") for v in report.violations)


def test_a_queue_succession_needs_no_wait() -> None:
    doc = schedule_doc({"a": ("DMA.0", 0, 10, [], [write("x", "v")]),
                        "b": ("DMA.0", 20, 30, [read("x", "v")], [])},
                       buffers={"x": (64, 0, 0, 30)})
    program = lowered(doc)
    assert program["waits"] == {} and program["queues"]["DMA.0"] == ["a", "b"]
    assert verify_program(program).legal


def test_orders_through_ops_in_no_queue() -> None:
    """x and y hold no lane; z reads what x wrote, through y's waits only."""
    doc = schedule_doc({"x": (None, 0, 10, [], [write("b", "v")]),
                        "y": (None, 10, 20, [read("b", "v")], []),
                        "z": ("HMX.0", 20, 30, [read("b", "v")], [])},
                       buffers={"b": (64, 0, 0, 30)})
    program = lowered(doc)
    assert verify_program(program).legal
    chained = copy.deepcopy(program)
    chained["waits"] = {"y": ["x"], "z": ["y"]}
    assert verify_program(chained).legal
    cut = copy.deepcopy(program)
    cut["waits"] = {"y": ["x"]}
    assert verify_program(cut).codes() == {"ORDER_RAW"}


def test_deadlock_names_the_cycle_and_stops_the_order_rules() -> None:
    twin = lowered(ORDER_CASES["ORDER_AFTER"])
    broken = copy.deepcopy(twin)
    broken["waits"]["a"] = ["b"]
    report = verify_program(broken)
    assert report.codes() == {"DEADLOCK"}
    assert set(report.violations[0].ops) == {"a", "b"}
    assert "ORDER_AFTER" in report.stats["skipped_rules"]


def _unknown_key(d: dict[str, Any]) -> None:
    d["colour"] = "red"


def _swap(d: dict[str, Any]) -> None:
    d["queues"]["DMA.0"].reverse()


def _wrong_unit(d: dict[str, Any]) -> None:
    d["queues"]["DMA.1"] = d["queues"].pop("DMA.0")
    d["queues"]["DMA.0"] = []


def _missing_queue(d: dict[str, Any]) -> None:
    del d["queues"]["HMX.0"]


def _bad_name(d: dict[str, Any]) -> None:
    d["queues"]["HMX"] = []


def _twice(d: dict[str, Any]) -> None:
    d["queues"]["DMA.0"].append("a")


def _unknown_op(d: dict[str, Any]) -> None:
    d["waits"]["b"].append("nobody")


FORMAT_BREAKS = [_unknown_key, _swap, _wrong_unit, _missing_queue, _bad_name, _twice,
                 _unknown_op]


@pytest.mark.parametrize("breaker", FORMAT_BREAKS, ids=lambda f: f.__name__.strip("_"))
def test_program_format(breaker: Any) -> None:
    twin = lowered(schedule_doc({"a": ("DMA.0", 0, 10, [], []), "c": ("DMA.0", 10, 20, [], []),
                                 "b": ("HMX.0", 20, 30, [], [])}, after=[["a", "b"]]))
    assert verify_program(twin).legal
    broken = copy.deepcopy(twin)
    breaker(broken)
    report = verify_program(broken)
    assert "PROGRAM_FORMAT" in report.codes()
    assert report.codes() <= {"PROGRAM_FORMAT", "ORDER_AFTER"}


def test_schedule_violations_come_first_with_paths_under_schedule() -> None:
    program = lowered(ORDER_CASES["ORDER_AFTER"])
    program["schedule"]["makespan"] = 99
    program["schedule"]["meta"] = 1
    report = verify_program(program)
    assert [v.code for v in report.violations] == ["FORMAT", "MAKESPAN"]
    assert report.violations[0].message.startswith("$.schedule.meta: ")


def test_a_huge_lane_costs_nothing_until_used_and_missing_queues_are_one_violation() -> None:
    """Issue 29: a lane of 10^9 units took one table entry per unit, and 10^5 units
    without a queue were 99,999 violations. Now: one violation per lane, naming the
    units some op holds first."""
    doc = lowered(schedule_doc({"a": ("DMA.0", 0, 10, [], []), "b": ("DMA.1", 10, 20, [], [])}))
    doc["schedule"]["target"]["lanes"]["DMA"] = 10**9
    assert verify_program(doc).legal is False
    del doc["queues"]["DMA.1"]
    report = verify_program(doc)
    missing = [v for v in report.violations if v.code == "PROGRAM_FORMAT"]
    assert len(missing) == 1, missing
    assert "DMA.1, DMA.2, DMA.3 and 999999996 more" in missing[0].message
    assert missing[0].ops == ("b",)
