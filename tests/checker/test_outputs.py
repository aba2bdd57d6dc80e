"""OUTPUT and DDR_RAW: tensors written exactly once, and read only after."""

from __future__ import annotations

from typing import Any

import checker

from .schedules import legal


def codes(doc: dict[str, Any]) -> set[str]:
    return checker.verify(doc).codes()


def test_two_tasks_writing_the_same_elements() -> None:
    doc = legal()
    doc["problem"]["tasks"]["g1"] = {"kind": "copy", "outputs": {"C": [[0, 1], [0, 1]]}}
    doc["problem"]["ops"]["cp"] = {"task": "g1", "modes": [{"duration": 1}],
                                   "writes": [{"tensor": "C", "box": [[0, 1], [0, 1]]}]}
    doc["ops"]["cp"] = {"mode": 0, "start": 0, "end": 1}
    report = checker.verify(doc)
    assert report.codes() == {"OUTPUT"}
    assert [v.ops for v in report.violations] == [("st", "cp")]


def test_temp_tensors_are_written_once_and_read_after() -> None:
    doc = legal()
    doc["problem"]["tensors"]["C"]["role"] = "temp"
    doc["problem"]["ops"]["rd"] = {"task": "g0", "modes": [{"duration": 1}],
                                   "reads": [{"tensor": "C", "box": [[3, 4], [7, 8]]}]}
    doc["ops"]["rd"] = {"mode": 0, "start": 60, "end": 61}
    doc["makespan"] = 61
    assert codes(doc) == set()
    doc["ops"]["rd"] = {"mode": 0, "start": 59, "end": 60}
    doc["makespan"] = 60
    [violation] = checker.verify(doc).violations
    assert violation.code == "DDR_RAW" and violation.ops == ("rd", "st")
    assert violation.tensors == ("C",) and violation.time == 59


def test_reading_an_input_never_waits() -> None:
    doc = legal()
    doc["problem"]["ops"]["mm0"]["reads"].append({"tensor": "A", "box": [[0, 4], [0, 8]]})
    assert codes(doc) == set()
