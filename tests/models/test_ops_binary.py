"""The binary element-wise kind: two inputs, the second full or broadcast."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.errors import InputError
from models.ops import binary
from models.targets import load_target
from models.workload import tile, workload_from_dict
from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled

SHAPES = {"none": (50, 24), "row": (24,), "col": (50, 1), "scalar": (1,)}


@pytest.mark.parametrize("form", binary.BROADCASTS)
def test_second_operand_shape_and_where_it_is_loaded(form: str) -> None:
    problem = one_task("binary", "hexagon-v75", "a", rows=50, cols=24, block_rows=20,
                       broadcast=form, fn="mul")
    assert_well_tiled(problem)
    assert problem.tensors["a.Z"].shape == SHAPES[form]
    loads = sorted(n for n in problem.ops if n.startswith("a.ldZ"))
    per_block = form in ("none", "col")
    assert loads == (["a.ldZ.b0", "a.ldZ.b1", "a.ldZ.b2"] if per_block else ["a.ldZ"])
    # every block's op reads its X block and the operand it needs
    op = problem.ops["a.mul.b2"]
    assert len(op.reads) == 2
    assert op.reads[1].buffer == ("a.Z.b2" if per_block else "a.Z")
    if form == "col":
        assert problem.ops["a.ldZ.b2"].reads[0].box == ((40, 50), (0, 1))


@given(rows=st.integers(1, 100), cols=st.integers(1, 120), block=st.integers(4, 50),
       form=st.sampled_from(binary.BROADCASTS), fn=st.sampled_from(binary.FUNCTIONS))
def test_any_shape_is_well_tiled(rows: int, cols: int, block: int, form: str, fn: str) -> None:
    problem = one_task("binary", rows=rows, cols=cols, block_rows=block, broadcast=form, fn=fn)
    assert_well_tiled(problem)
    assert len(problem.ops) == binary.op_count(problem.tasks["t0"].params, None)


def test_division_costs_more_than_addition_and_swap_is_kept() -> None:
    add = one_task("binary", rows=64, cols=256, fn="add")
    div = one_task("binary", rows=64, cols=256, fn="div", swap=1)
    assert div.ops["t0.div.b0"].modes[0].duration > add.ops["t0.add.b0"].modes[0].duration
    assert div.tasks["t0"].params["swap"] == 1
    with pytest.raises(InputError) as caught:
        one_task("binary", rows=4, cols=4, swap=2)
    assert caught.value.rule == "FORMAT" and "swap" in caught.value.message


def test_a_residual_add_reads_what_another_task_wrote() -> None:
    workload = workload_from_dict({"name": "w", "target": "hexagon-v75", "tasks": [
        {"name": "act", "kind": "elementwise", "rows": 64, "cols": 32, "x": "h", "out": "g"},
        {"name": "res", "kind": "binary", "rows": 64, "cols": 32, "x": "h", "y": "g",
         "out": "y"}]})
    problem = tile(workload, load_target("hexagon-v75"))
    assert problem.tensors["g"].role == "temp"
    assert ("act.st.b0", "res.ldZ.b0") in problem.after


@pytest.mark.parametrize("form", binary.BROADCASTS)
def test_column_blocks_load_the_operand_they_need(form: str) -> None:
    problem = one_task("binary", "hexagon-v75", "a", rows=50, cols=24, block_rows=20,
                       block_cols=10, broadcast=form, fn="mul")
    assert_well_tiled(problem)
    assert len(problem.ops) == binary.op_count(problem.tasks["a"].params, None)
    op = problem.ops["a.mul.b2c1"]
    assert op.space == ((40, 50), (10, 20))
    if form == "none":  # Z's block is X's
        assert problem.ops["a.ldZ.b2c1"].reads[0].box == op.space
    if form == "col":  # one value per row, for the block's rows
        assert problem.ops["a.ldZ.b2c1"].reads[0].box == ((40, 50), (0, 1))
