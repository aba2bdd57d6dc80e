"""Borderline schedules, each judged by both checkers: the regression tests of fuzzing.

Why: the properties find their counterexamples at random; these pin the borders where
two readings of FORMATS.md are most likely to part (touching windows, ties between
writes, partial overwrites, empty windows), so a change in either checker that moves a
border fails here first, with a readable three-op example. The boundaries FORMATS.md
settled on 2026-12-01 are pinned in tests/conformance/.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from ._real import real_codes, real_report_text
from .reference_checker import reference_codes

#: One op writes ``a`` with "x" over [0, 1), another reads it over [1, 2).
BASE: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {"format": "npu-target/1", "name": "t", "lanes": {"DMA": 1}, "budgets": {},
               "memories": {"M": {"capacity_bytes": 16, "alignment_bytes": 1}}},
    "problem": {"format": "npu-problem/1", "name": "p", "tasks": {"t": {"kind": "k"}},
                "buffers": {"a": {"memory": "M", "size": 4}, "b": {"memory": "M", "size": 4}},
                "ops": {"w": {"task": "t", "modes": [{"duration": 1}],
                              "writes": [{"buffer": "a", "value": "x"}]},
                        "r": {"task": "t", "modes": [{"duration": 1}],
                              "reads": [{"buffer": "a", "value": "x"}]}},
                "after": []},
    "ops": {"w": {"mode": 0, "start": 0, "end": 1}, "r": {"mode": 0, "start": 1, "end": 2}},
    "buffers": {"a": {"offset": 0, "alloc": 0, "free": 2},
                "b": {"offset": 8, "alloc": 0, "free": 0}},
    "makespan": 2}

Edit = Callable[[dict[str, Any]], None]


def _add_op(name: str, start: int, end: int, **op: Any) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        d["problem"]["ops"][name] = {"task": "t", "modes": [{"duration": end - start}], **op}
        d["ops"][name] = {"mode": 0, "start": start, "end": end}
    return edit


def _set(*path_and_value: Any) -> Edit:
    *path, value = path_and_value

    def edit(d: dict[str, Any]) -> None:
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value
    return edit


CASES: list[tuple[str, list[Edit], set[str]]] = [
    ("base is legal", [], set()),
    ("empty window at the same address is no alias",
     [_set("buffers", "b", {"offset": 0, "alloc": 1, "free": 1})], set()),
    ("windows that touch are no alias",
     [_set("buffers", "b", {"offset": 0, "alloc": 2, "free": 3})], set()),
    ("windows that share a tick alias",
     [_set("buffers", "b", {"offset": 2, "alloc": 1, "free": 3})], {"ALIAS"}),
    ("two writes ending together: not a single last write",
     [_add_op("w2", 0, 1, writes=[{"buffer": "a", "bytes": [0, 2], "value": "x"}])],
     {"STALE_READ", "WRITE_RACE"}),
    ("last write covers only part of the read",
     [_set("problem", "ops", "w", "writes", [{"buffer": "a", "bytes": [0, 2], "value": "x"}])],
     {"STALE_READ"}),
    ("a later partial write that ended before the read",
     [_add_op("w2", 1, 2, writes=[{"buffer": "a", "bytes": [3, 4], "value": "x"}]),
      _set("ops", "r", {"mode": 0, "start": 2, "end": 3}), _set("makespan", 3),
      _set("buffers", "a", {"offset": 0, "alloc": 0, "free": 3})], {"STALE_READ"}),
    ("a write starting exactly when the read ends",
     [_add_op("w2", 2, 3, writes=[{"buffer": "a", "value": "y"}]), _set("makespan", 3),
      _set("buffers", "a", {"offset": 0, "alloc": 0, "free": 3})], set()),
    ("a write during the read",
     [_add_op("w2", 1, 2, writes=[{"buffer": "a", "bytes": [3, 4], "value": "y"}])],
     {"STALE_READ"}),
    ("reading and writing the same bytes in place",
     [_set("problem", "ops", "r", "writes", [{"buffer": "a", "value": "y"}])], set()),
    ("a read with no value tag: values not compared",
     [lambda d: d["problem"]["ops"]["r"]["reads"][0].pop("value")], set()),
    ("a read before any write",
     [_set("ops", "r", {"mode": 0, "start": 0, "end": 1}), _set("makespan", 1)],
     {"STALE_READ"}),
    ("an access one tick past free",
     [_set("buffers", "a", {"offset": 0, "alloc": 0, "free": 1})], {"LIFETIME"}),
    ("self edge", [_set("problem", "after", [["w", "w"]])], {"FORMAT"}),
    ("touching edge", [_set("problem", "after", [["w", "r"]])], set()),
    ("negative mode index", [_set("ops", "w", "mode", -1)], {"MODE"}),
    ("a lane demand of zero", [_set("problem", "ops", "w", "modes", [
        {"duration": 1, "lanes": {"DMA": 0}}]), _set("ops", "w", "units", {"DMA": []})],
     {"FORMAT"}),
    ("units for a lane the mode does not ask",
     [_set("ops", "w", "units", {"DMA": [0]})], {"UNITS"}),
    ("a negative unit", [_set("problem", "ops", "w", "modes", [
        {"duration": 1, "lanes": {"DMA": 1}}]), _set("ops", "w", "units", {"DMA": [-1]})],
     {"UNITS"}),
    ("a float makespan", [_set("makespan", 2.0)], {"FORMAT"}),
    ("a boolean start", [_set("ops", "r", "start", True)], {"FORMAT"}),
    ("op space of the wrong rank", [_set("problem", "tasks", "t", "space", [[0, 2]]),
                                    _set("problem", "ops", "w", "space", [[0, 2], [0, 1]])],
     {"COVERAGE"}),
    ("an op reading the DDR region it writes",
     [_set("problem", "tensors", {"T": {"shape": [2], "dtype": "f16", "role": "output"}}),
      lambda d: d["problem"]["ops"]["w"]["writes"].append({"tensor": "T", "box": [[0, 2]]}),
      _set("problem", "ops", "w", "reads", [{"tensor": "T", "box": [[0, 1]]}])],
     {"DDR_RAW"}),
    ("a task writing past its output box, each element once overall",
     [_set("problem", "tensors", {"T": {"shape": [2], "dtype": "f16", "role": "temp"}}),
      _set("problem", "tasks", "t", "outputs", {"T": [[0, 1]]}),
      lambda d: d["problem"]["ops"]["w"]["writes"].append({"tensor": "T", "box": [[0, 2]]})],
     set()),
    ("a budget exactly at capacity",
     [_set("target", "budgets", {"BW": 3}), _add_op("x", 0, 1),
      _set("problem", "ops", "x", "modes", [{"duration": 1, "budgets": {"BW": 1}}]),
      _set("problem", "ops", "w", "modes", [{"duration": 1, "budgets": {"BW": 2}}])], set()),
    ("a budget one over", [_set("target", "budgets", {"BW": 1}),
                           _set("problem", "ops", "w", "modes",
                                [{"duration": 1, "budgets": {"BW": 2}}])], {"BUDGET"}),
    ("a dropped writer", [lambda d: d["ops"].pop("w")], {"OP_MISSING", "STALE_READ"}),
]


@pytest.mark.parametrize(("edits", "expected"), [(e, x) for _, e, x in CASES],
                         ids=[name for name, _, _ in CASES])
def test_border(edits: list[Edit], expected: set[str]) -> None:
    doc = copy.deepcopy(BASE)
    for edit in edits:
        edit(doc)
    assert reference_codes(doc) == expected
    assert real_codes(doc) == expected, real_report_text(doc)
