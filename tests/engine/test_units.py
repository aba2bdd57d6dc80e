"""Unit indices named after the fact from cumulative-feasible times."""

from __future__ import annotations

import pytest

from models.formats import Mode, Op, Problem, Task
from schedsearch.engine.instance import build_instance
from schedsearch.engine.units import assign_units
from tests.engine.problems import target


def _problem(demands: list[int]) -> Problem:
    ops = {f"o{i}": Op("t", (Mode(10, {"VX": d}),)) for i, d in enumerate(demands)}
    return Problem("u", {}, {"t": Task("k")}, {}, ops)


def test_units_are_distinct_while_ops_overlap_and_reused_after() -> None:
    inst = build_instance(_problem([1, 1, 2]), target())
    units = assign_units(inst, [0, 0, 0], [0, 5, 15], [10, 15, 25])
    assert units[0]["VX"] != units[1]["VX"]
    assert sorted(units[2]["VX"]) == [0, 1]  # both free again at 15


def test_zero_length_op_takes_any_units() -> None:
    inst = build_instance(_problem([2, 1]), target())
    units = assign_units(inst, [0, 0], [0, 5], [10, 5])
    assert len(units[1]["VX"]) == 1


def test_over_capacity_is_an_error_not_a_silent_clash() -> None:
    inst = build_instance(_problem([2, 1]), target())
    with pytest.raises(ValueError):
        assign_units(inst, [0, 0], [0, 5], [10, 15])
