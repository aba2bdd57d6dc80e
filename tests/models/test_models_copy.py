"""The copy tiling: DDR -> on-chip -> DDR, on copy engines or driven by the vector unit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled


@given(rows=st.integers(1, 200), cols=st.integers(1, 300), block=st.integers(1, 80))
def test_any_shape_is_well_tiled(rows: int, cols: int, block: int) -> None:
    assert_well_tiled(one_task("copy", rows=rows, cols=cols, block_rows=block))


def test_hexagon_offers_an_hvx_driven_mode() -> None:
    problem = one_task("copy", rows=64, cols=256)
    load = problem.ops["t0.ldX.b0"]
    assert [m.lanes for m in load.modes] == [{"DMA": 1}, {"DMA": 1}, {"HVX": 1}]
    assert all("DDR_BW" in m.budgets for m in load.modes)
    assert load.space == ((0, 64), (0, 256))  # no compute op: the load carries the space
    assert problem.ops["t0.st.b0"].modes[-1].lanes == {"HVX": 1}


def test_ascend_copies_on_mte_engines_only() -> None:
    problem = one_task("copy", "ascend-910b-core", rows=64, cols=256, block_rows=32)
    assert_well_tiled(problem)
    assert [m.lanes for m in problem.ops["t0.ldX.b0"].modes] == [{"MTE2": 1}] * 2
    assert [m.lanes for m in problem.ops["t0.st.b0"].modes] == [{"MTE3": 1}] * 2
