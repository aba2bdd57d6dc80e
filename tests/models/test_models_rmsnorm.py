"""The RMSNorm tiling: row blocks, the weight loaded once, one- and two-unit modes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled


@pytest.mark.parametrize("target", ["hexagon-v75", "ascend-910b-core"])
def test_divisible_shape_is_well_tiled(target: str) -> None:
    problem = one_task("rmsnorm", target, "r0", rows=128, cols=256, block_rows=32)
    assert_well_tiled(problem)
    assert sorted(problem.ops) == sorted(
        ["r0.ldW"] + [f"r0.{op}.b{i}" for op in ("ldX", "norm", "st") for i in range(4)])


@given(rows=st.integers(1, 200), cols=st.integers(1, 300), block=st.integers(1, 80))
def test_any_shape_gives_edge_blocks(rows: int, cols: int, block: int) -> None:
    problem = one_task("rmsnorm", rows=rows, cols=cols, block_rows=block)
    assert_well_tiled(problem)
    assert len([n for n in problem.ops if ".norm." in n]) == -(-rows // block)


def test_weight_is_loaded_once_and_read_by_every_block() -> None:
    problem = one_task("rmsnorm", "hexagon-v75", "r0", rows=100, cols=64, block_rows=40)
    assert problem.tensors["r0.W"].shape == (64,)
    readers = [n for n, op in problem.ops.items() if any(a.buffer == "r0.W" for a in op.reads)]
    assert readers == ["r0.norm.b0", "r0.norm.b1", "r0.norm.b2"]
    assert problem.ops["r0.norm.b2"].space == ((80, 100), (0, 64))


def test_two_vector_units_finish_sooner() -> None:
    problem = one_task("rmsnorm", rows=64, cols=1024, block_rows=64)
    one, two = problem.ops["t0.norm.b0"].modes
    assert (one.lanes, two.lanes) == ({"HVX": 1}, {"HVX": 2})
    assert two.duration < one.duration < 2 * two.duration


def test_eps_is_kept_in_the_task_params() -> None:
    problem = one_task("rmsnorm", rows=8, cols=8, eps=1e-5)
    assert problem.tasks["t0"].params["eps"] == 1e-5


def test_the_weight_and_the_output_may_have_their_own_types() -> None:
    # an f32 norm (a TorchScript residual) reading an f16 weight, its result cast to f16
    problem = one_task("rmsnorm", "hexagon-v75", "r0", rows=64, cols=128, dtype="f32",
                       weight_dtype="f16", to="f16")
    assert_well_tiled(problem)
    types = {name: t.dtype for name, t in problem.tensors.items()}
    assert types == {"r0.X": "f32", "r0.W": "f16", "r0.Y": "f16"}
    plain = one_task("rmsnorm", "hexagon-v75", "r0", rows=64, cols=128, dtype="f32")
    assert problem.buffers["r0.W"].size * 2 == plain.buffers["r0.W"].size
