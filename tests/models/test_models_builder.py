"""The problem builder: blocks, edges from buffer values and temp tensors, roles; and the
tiling checks themselves catching a broken problem."""

from __future__ import annotations

import dataclasses

import pytest

from models.ops.builder import Block, box_tag, split
from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_reads_ordered_after_writes, assert_spaces_partition


def test_split_gives_a_shorter_edge_block() -> None:
    assert split(10, 4) == [Block(0, 0, 4), Block(1, 4, 8), Block(2, 8, 10)]
    assert split(8, 4)[-1].size == 4


def test_box_tag() -> None:
    assert box_tag("A", ((0, 128), (64, 96))) == "A[0:128,64:96]"


def test_value_reads_get_edges_from_their_writers() -> None:
    problem = one_task("copy", rows=8, cols=8, block_rows=4)
    assert set(problem.after) == {("t0.ldX.b0", "t0.st.b0"), ("t0.ldX.b1", "t0.st.b1")}
    assert {name: t.role for name, t in problem.tensors.items()} == {
        "t0.X": "input", "t0.Y": "output"}


def test_the_checks_catch_a_missing_edge_and_a_gap() -> None:
    problem = one_task("rmsnorm", rows=8, cols=8, block_rows=4)
    broken = dataclasses.replace(problem, after=problem.after[1:])
    with pytest.raises(AssertionError):
        assert_reads_ordered_after_writes(broken)
    ops = dict(problem.ops)
    ops["t0.norm.b1"] = dataclasses.replace(ops["t0.norm.b1"], space=((4, 7), (0, 8)))
    with pytest.raises(AssertionError):
        assert_spaces_partition(dataclasses.replace(problem, ops=ops))
