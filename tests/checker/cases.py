"""One minimal negative example per rule code, each with a legal twin.

Each case changes the legal schedule of :mod:`schedules` in one small way. ``negative``
must produce exactly ``codes`` (the rule under test, plus nothing unrelated); ``twin`` is
the nearest legal variant and must produce nothing. The twin shows where the rule's
edge is: touching windows, a draw equal to capacity, a value written again, and so on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .schedules import legal

Doc = dict[str, Any]


@dataclass(frozen=True)
class Case:
    name: str
    codes: frozenset[str]
    negative: Callable[[], Doc]
    twin: Callable[[], Doc]


def _change(*edits: Callable[[Doc], None]) -> Callable[[], Doc]:
    def build() -> Doc:
        doc = legal()
        for edit in edits:
            edit(doc)
        return doc
    return build


def _op(name: str, **fields: Any) -> Callable[[Doc], None]:
    """Add or update a problem op."""
    def edit(doc: Doc) -> None:
        doc["problem"]["ops"].setdefault(name, {}).update(fields)
    return edit


def _place(name: str, **fields: Any) -> Callable[[Doc], None]:
    """Add or update an op's placement."""
    def edit(doc: Doc) -> None:
        doc["ops"].setdefault(name, {}).update(fields)
    return edit


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Doc], None]:
    """Set the value at ``path``; an index one past the end of a list appends."""
    def edit(doc: Doc) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        if isinstance(node, list) and path[-1] == len(node):
            node.append(value)
        else:
            node[path[-1]] = value
    return edit


def _drop(path: tuple[Any, ...]) -> Callable[[Doc], None]:
    def edit(doc: Doc) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return edit


_IDLE = {"task": "g0", "modes": [{"duration": 5}]}
_READ_C = {"task": "g0", "modes": [{"duration": 10}],
           "reads": [{"tensor": "C", "box": [[0, 4], [0, 8]]}]}
_RACER = {"task": "g0", "modes": [{"duration": 10, "lanes": {"HVX": 1}}],
          "writes": [{"buffer": "bC", "bytes": [0, 2048], "value": "C0"}]}
_ST = ("problem", "ops", "st")
_MM1 = ("problem", "ops", "mm1")

CASES: tuple[Case, ...] = (
    Case("format_unknown_op_in_after", frozenset({"FORMAT"}),
         _change(_set(("problem", "after", 0), ["ld", "nope"])),
         _change(_set(("problem", "after", 0), ["ld", "st"]))),
    Case("format_box_of_wrong_rank", frozenset({"FORMAT"}),
         _change(_set((*_ST, "writes", 0, "box"), [[0, 4]])),
         _change(_set((*_ST, "writes", 0, "box"), [[0, 4], [0, 8]]))),
    Case("format_bytes_outside_buffer", frozenset({"FORMAT"}),
         _change(_set((*_MM1, "writes", 0, "bytes"), [2048, 4097])),
         _change(_set((*_MM1, "writes", 0, "bytes"), [2048, 4096]))),
    Case("format_buffer_not_placed", frozenset({"FORMAT"}),
         _change(_drop(("buffers", "bC"))),
         _change(_set(("buffers", "bC"), {"offset": 4096, "alloc": 10, "free": 60}))),
    Case("format_unknown_key", frozenset({"FORMAT"}),
         _change(_set(("ops", "ld", "colour"), "red")),
         _change(_set(("ops", "ld", "meta"), {"colour": "red"}))),
    Case("op_missing", frozenset({"OP_MISSING"}),
         _change(_op("idle", **_IDLE)),
         _change(_op("idle", **_IDLE), _place("idle", mode=0, start=0, end=5))),
    Case("op_unknown", frozenset({"OP_UNKNOWN"}),
         _change(_place("ghost", mode=0, start=0, end=5)),
         _change(_op("ghost", **_IDLE), _place("ghost", mode=0, start=0, end=5))),
    Case("mode_out_of_range", frozenset({"MODE"}),
         _change(_place("st", mode=2)),
         _change(_place("st", mode=1, end=80, units={"HVX": [1]}), _set(("makespan",), 80),
                 _set(("buffers", "bC", "free"), 80))),
    Case("duration_too_short", frozenset({"DURATION"}),
         _change(_place("mm0", end=29)),
         _change(_place("mm0", end=30))),
    Case("duration_negative_start", frozenset({"DURATION"}),
         _change(_op("idle", **_IDLE), _place("idle", mode=0, start=-5, end=0)),
         _change(_op("idle", **_IDLE), _place("idle", mode=0, start=0, end=5))),
    Case("units_too_many", frozenset({"UNITS"}),
         _change(_place("ld", units={"DMA": [0, 1]})),
         _change(_place("ld", units={"DMA": [1]}))),
    Case("units_out_of_range", frozenset({"UNITS"}),
         _change(_place("ld", units={"DMA": [2]})),
         _change(_place("ld", units={"DMA": [1]}))),
    Case("lane_overlap", frozenset({"LANE_OVERLAP"}),
         _change(_place("mm1", start=29, end=49)),
         _change(_place("mm1", start=30, end=50))),  # touching windows do not overlap
    Case("budget_over_capacity", frozenset({"BUDGET"}),
         _change(_set((*_ST, "modes", 0, "budgets", "DDR_BW"), 61)),
         _change(_set((*_ST, "modes", 0, "budgets", "DDR_BW"), 60))),
    Case("after_edge_broken", frozenset({"AFTER"}),
         _change(_set(("problem", "after", 0), ["st", "ld"])),
         _change(_set(("problem", "after", 0), ["ld", "st"]))),
    Case("coverage_overlap", frozenset({"COVERAGE"}),
         _change(_set((*_MM1, "space"), [[0, 4], [3, 8]])),
         _change(_set((*_MM1, "space"), [[0, 4], [4, 8]]))),
    Case("coverage_gap", frozenset({"COVERAGE"}),
         _change(_set((*_MM1, "space"), [[0, 4], [5, 8]])),
         _change(_set((*_MM1, "space"), [[0, 4], [4, 8]]))),
    Case("coverage_outside", frozenset({"COVERAGE"}),
         _change(_set((*_MM1, "space"), [[0, 4], [4, 9]])),
         _change(_set((*_MM1, "space"), [[0, 4], [4, 8]]))),
    Case("output_not_covered", frozenset({"OUTPUT"}),
         _change(_set((*_ST, "writes", 0, "box"), [[0, 4], [0, 7]])),
         _change(_set((*_ST, "writes", 0, "box"), [[0, 4], [0, 8]]))),
    Case("output_writes_input", frozenset({"OUTPUT"}),
         _change(_set((*_ST, "writes", 1), {"tensor": "A", "box": [[0, 1], [0, 1]]})),
         _change(_set((*_ST, "reads", 2), {"tensor": "A", "box": [[0, 1], [0, 1]]}))),
    Case("ddr_read_before_write_ends", frozenset({"DDR_RAW"}),
         _change(_op("rd", **_READ_C), _place("rd", mode=0, start=59, end=69),
                 _set(("makespan",), 69)),
         _change(_op("rd", **_READ_C), _place("rd", mode=0, start=60, end=70),
                 _set(("makespan",), 70))),
    Case("mem_range_misaligned", frozenset({"MEM_RANGE"}),
         _change(_set(("buffers", "bC", "offset"), 5120)),
         _change(_set(("buffers", "bC", "offset"), 6144))),
    Case("mem_range_beyond_capacity", frozenset({"MEM_RANGE"}),
         _change(_set(("buffers", "bC", "offset"), 14336)),
         _change(_set(("buffers", "bC", "offset"), 12288))),
    Case("alias_overlapping_buffers", frozenset({"ALIAS"}),
         _change(_set(("buffers", "bC", "offset"), 2048)),
         _change(_set(("buffers", "bC", "offset"), 4096))),
    Case("lifetime_freed_too_early", frozenset({"LIFETIME"}),
         _change(_set(("buffers", "bA", "free"), 49)),
         _change(_set(("buffers", "bA", "free"), 50))),
    Case("stale_read_wrong_value", frozenset({"STALE_READ"}),
         _change(_set((*_MM1, "reads", 0, "value"), "B")),
         _change(_set((*_MM1, "reads", 0, "value"), "A"))),
    Case("stale_read_partial_write", frozenset({"STALE_READ"}),
         _change(_set((*_ST, "reads", 1, "bytes"), [0, 4096])),
         _change(_set((*_ST, "reads", 1, "bytes"), [2048, 4096]))),
    Case("write_race", frozenset({"WRITE_RACE"}),
         _change(_op("z", **_RACER), _place("z", mode=0, start=15, end=25,
                                            units={"HVX": [0]})),
         _change(_op("z", **_RACER), _place("z", mode=0, start=30, end=40,
                                            units={"HVX": [0]}))),
    Case("makespan_wrong", frozenset({"MAKESPAN"}),
         _change(_set(("makespan",), 61)),
         _change(_set(("makespan",), 60))),
)
