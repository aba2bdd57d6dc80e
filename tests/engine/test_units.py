"""Lane units are named as ops first need them, whatever the target's count."""

from __future__ import annotations

from dataclasses import replace

import pytest

from models.formats import MAX_LANE_UNITS
from schedsearch.engine.instance import build_instance
from schedsearch.engine.units import assign_units
from tests.engine.problems import gemm_problem, target


@pytest.mark.parametrize("dma_units", [2, MAX_LANE_UNITS])
def test_units_are_the_lowest_free_ones_and_cost_what_the_ops_use(dma_units: int) -> None:
    """Two DMA ops at once take units 0 and 1, whether the target has 2 units or 65,536
    (a list per declared unit would cost its count)."""
    tgt = replace(target(), lanes={**target().lanes, "DMA": dma_units})
    inst = build_instance(gemm_problem(blocks=1, k_steps=1), tgt)
    dma_ops = [op for op in range(inst.n_ops)
               if any(lane == "DMA" for lane, _ in inst.modes[op][0].lanes)][:2]
    assert len(dma_ops) == 2
    starts = [10 * op for op in range(inst.n_ops)]
    for op in dma_ops:
        starts[op] = 0
    ends = [start + 1 for start in starts]
    units = assign_units(inst, [0] * inst.n_ops, starts, ends)
    assert sorted(units[op]["DMA"] for op in dma_ops) == [(0,), (1,)]


def test_more_ops_at_once_than_units_is_refused() -> None:
    tgt = replace(target(), lanes={**target().lanes, "DMA": 1})
    inst = build_instance(gemm_problem(blocks=1, k_steps=1), tgt)
    dma_ops = [op for op in range(inst.n_ops)
               if any(lane == "DMA" for lane, _ in inst.modes[op][0].lanes)][:2]
    starts = [10 * op for op in range(inst.n_ops)]
    for op in dma_ops:
        starts[op] = 0
    with pytest.raises(ValueError, match="over capacity"):
        assign_units(inst, [0] * inst.n_ops, starts, [s + 1 for s in starts])
