"""The element-wise tiling: one vector op per row block, cost by activation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

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
