"""Softmax, LayerNorm and Cast: row-wise kinds on the vector engine."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.cost import cost_model
from models.errors import InputError
from models.targets import load_target
from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled


@pytest.mark.parametrize("kind", ["softmax", "layernorm", "cast"])
@given(rows=st.integers(1, 100), cols=st.integers(1, 200), block=st.integers(4, 64))
def test_any_shape_is_well_tiled(kind: str, rows: int, cols: int, block: int) -> None:
    extra = {"to": "f32"} if kind == "cast" else {}
    problem = one_task(kind, rows=rows, cols=cols, block_rows=block, **extra)
    assert_well_tiled(problem)
    compute = [op for op in problem.ops.values() if op.space is not None]
    assert len(compute) == -(-rows // block)
    assert all(m.lanes.keys() == {"HVX"} for op in compute for m in op.modes)


def test_softmax_blocks_hold_whole_rows_and_cost_more_than_a_copy_pass() -> None:
    problem = one_task("softmax", rows=64, cols=512, block_rows=32)
    op = problem.ops["t0.softmax.b1"]
    assert op.space == ((32, 64), (0, 512))
    cast = one_task("cast", rows=64, cols=512, block_rows=32, to="f16")
    assert op.modes[0].duration > cast.ops["t0.cast.b1"].modes[0].duration


def test_layernorm_loads_weight_and_bias_once_for_every_block() -> None:
    problem = one_task("layernorm", "hexagon-v75", "ln", rows=100, cols=64, block_rows=40)
    assert problem.tensors["ln.W"].shape == problem.tensors["ln.Bias"].shape == (64,)
    for buffer in ("ln.W", "ln.Bias"):
        readers = [n for n, op in problem.ops.items()
                   if any(a.buffer == buffer for a in op.reads)]
        assert readers == ["ln.norm.b0", "ln.norm.b1", "ln.norm.b2"]
    without = one_task("layernorm", "hexagon-v75", "ln", rows=100, cols=64, has_bias=0)
    assert "ln.Bias" not in without.tensors and "ln.ldBias" not in without.ops


def test_cast_writes_the_new_type_and_streams_the_wider_one() -> None:
    problem = one_task("cast", rows=32, cols=256, block_rows=32, dtype="f32", to="f16")
    assert problem.tensors["t0.X"].dtype == "f32" and problem.tensors["t0.Y"].dtype == "f16"
    assert problem.buffers["t0.X.b0"].size == 32 * 256 * 4
    assert problem.buffers["t0.Y.b0"].size == 32 * 256 * 2
    engine = cost_model(load_target("hexagon-v75")).vector
    one_unit = problem.ops["t0.cast.b0"].modes[0].duration
    assert one_unit == engine.latency_ns + 32 * 256 * 4 // 128


@pytest.mark.parametrize("kind", ["softmax", "layernorm", "cast"])
def test_a_type_the_vector_engine_lacks_is_refused(kind: str) -> None:
    extra = {"to": "f16"} if kind == "cast" else {}
    with pytest.raises(InputError) as caught:
        one_task(kind, rows=8, cols=8, dtype="bf16", **extra)
    assert caught.value.rule == "DTYPE" and "f16, f32, i8" in caught.value.message
    one_task(kind, "ascend-910b-core", rows=8, cols=8, dtype="bf16", **extra)  # has bf16
