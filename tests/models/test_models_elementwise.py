"""The element-wise tiling: one vector op per row block, cost by activation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from models.ops import elementwise
from models.ops.elementwise import FUNCTIONS
from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled


@given(rows=st.integers(1, 200), cols=st.integers(1, 300), block=st.integers(1, 80),
       fn=st.sampled_from(FUNCTIONS))
def test_any_shape_is_well_tiled(rows: int, cols: int, block: int, fn: str) -> None:
    assert_well_tiled(one_task("elementwise", rows=rows, cols=cols, block_rows=block, fn=fn))


def test_silu_costs_more_than_relu() -> None:
    silu = one_task("elementwise", rows=64, cols=512, fn="silu")
    relu = one_task("elementwise", rows=64, cols=512, fn="relu")
    assert silu.ops["t0.silu.b0"].modes[0].duration > relu.ops["t0.relu.b0"].modes[0].duration


def test_on_ascend_the_data_lives_in_ub() -> None:
    problem = one_task("elementwise", "ascend-910b-core", rows=64, cols=128, block_rows=16)
    assert_well_tiled(problem)
    assert {b.memory for b in problem.buffers.values()} == {"UB"}
    assert problem.ops["t0.silu.b0"].modes[-1].lanes == {"VECTOR": 2}


@given(rows=st.integers(1, 100), cols=st.integers(1, 300), block=st.integers(1, 60),
       width=st.integers(0, 120))
def test_column_blocks_tile_any_shape(rows: int, cols: int, block: int, width: int) -> None:
    problem = one_task("elementwise", rows=rows, cols=cols, block_rows=block, block_cols=width)
    assert_well_tiled(problem)
    assert len(problem.ops) == elementwise.op_count(problem.tasks["t0"].params, None)


def test_column_blocks_go_column_by_column() -> None:
    """Blocks of every row by 512 columns, in column order: each needs only its columns
    of the producer (a GEMM's output tiles, say)."""
    problem = one_task("elementwise", rows=128, cols=1280, block_rows=128, block_cols=512)
    computes = [op for name, op in problem.ops.items() if ".silu." in name]
    assert [op.space for op in computes] == [((0, 128), (0, 512)), ((0, 128), (512, 1024)),
                                             ((0, 128), (1024, 1280))]
    assert list(problem.ops)[:3] == ["t0.ldX.b0c0", "t0.silu.b0c0", "t0.st.b0c0"]
    whole = one_task("elementwise", rows=128, cols=512, block_rows=128, block_cols=512)
    assert "t0.silu.b0" in whole.ops  # one column block: the names of whole rows
