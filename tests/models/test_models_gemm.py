"""The GEMM tiling: partition, outputs, value order, edge tiles, operand reuse by order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.formats import Problem
from models.ops import gemm
from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled


def gemm_problem(target: str = "hexagon-v75", **params: object) -> Problem:
    return one_task("gemm", target, "g0", **params)


def ops_named(problem, prefix: str) -> list[str]:
    return [name for name in problem.ops if name.startswith(prefix)]


@pytest.mark.parametrize("target", ["hexagon-v75", "ascend-910b-core"])
@pytest.mark.parametrize("order", gemm.ORDERS)
def test_divisible_shape_is_well_tiled(target: str, order: str) -> None:
    problem = gemm_problem(target, M=256, N=256, K=256, order=order)
    assert_well_tiled(problem)
    assert len(ops_named(problem, "g0.mm.")) == 2 * 2 * 2
    assert len(ops_named(problem, "g0.st.")) == 4


@given(M=st.integers(1, 300), N=st.integers(1, 300), K=st.integers(1, 300),
       bm=st.integers(1, 160), order=st.sampled_from(gemm.ORDERS))
def test_any_shape_gives_edge_tiles_not_errors(M: int, N: int, K: int, bm: int,
                                               order: str) -> None:
    assert_well_tiled(gemm_problem(M=M, N=N, K=K, bm=bm, bn=96, bk=64, order=order))


def test_edge_tiles_pad_buffers_to_the_matrix_tile() -> None:
    problem = gemm_problem(M=130, N=128, K=128, bm=128)
    # rows 128..130 form an edge block: its A block is padded to 32 rows of 128 columns
    assert problem.ops["g0.mm.m1.n0.k0"].space == ((128, 130), (0, 128), (0, 128))
    assert problem.buffers["g0.A.m1.k0"].size == 32 * 128 * 2
    assert problem.buffers["g0.acc.m1.n0"].size == 32 * 128 * 4
    assert problem.buffers["g0.C.m1.n0"].size == 2 * 128 * 2  # the output is exact
    read = problem.ops["g0.ldA.m1.k0"].reads[0]
    assert read.box == ((128, 130), (0, 128))


def test_block_sizes_round_up_to_the_tile() -> None:
    problem = gemm_problem(M=128, N=128, K=128, bm=40, bn=40, bk=40)  # -> 64
    assert problem.ops["g0.mm.m0.n0.k0"].space == ((0, 64), (0, 64), (0, 64))
    ascend = gemm_problem("ascend-910b-core", M=128, N=128, K=128, bm=40, bn=40, bk=40)
    assert ascend.ops["g0.mm.m0.n0.k0"].space == ((0, 48), (0, 48), (0, 48))


@pytest.mark.parametrize(("order", "a_loads", "b_loads"),
                         [("mnk", 4 * 2, 4 * 2 * 3), ("nmk", 3 * 4 * 2, 2 * 3),
                          ("kmn", 4 * 2, 2 * 3)])
def test_order_decides_which_loads_are_shared(order: str, a_loads: int, b_loads: int) -> None:
    problem = gemm_problem(M=512, N=384, K=256, order=order)  # 4 x 3 blocks, K in 2
    assert len(ops_named(problem, "g0.ldA.")) == a_loads
    assert len(ops_named(problem, "g0.ldB.")) == b_loads
    first_a = "g0.A.m0.k0.n0" if order == "nmk" else "g0.A.m0.k0"
    readers = [op for op in problem.ops.values()
               if any(a.buffer == first_a for a in op.reads)]
    assert len(readers) == (1 if order == "nmk" else 3)


def test_accumulator_chain_over_k() -> None:
    problem = gemm_problem(M=128, N=128, K=384)
    values = [problem.ops[f"g0.mm.m0.n0.k{k}"].writes[0].value for k in range(3)]
    assert values == ["acc(m0,n0)@k0", "acc(m0,n0)@k1", "acc(m0,n0)@k2"]
    assert ("g0.mm.m0.n0.k1", "g0.mm.m0.n0.k2") in problem.after
    assert problem.ops["g0.cvt.m0.n0"].reads[0].value == "acc(m0,n0)@k2"


def test_engines_come_from_the_target() -> None:
    hexagon = gemm_problem(M=128, N=128, K=128)
    assert hexagon.ops["g0.mm.m0.n0.k0"].modes[0].lanes == {"HMX": 1}
    assert hexagon.ops["g0.ldA.m0.k0"].modes[0].budgets == {"DDR_BW": 40}
    ascend = gemm_problem("ascend-910b-core", M=128, N=128, K=128)
    assert ascend.ops["g0.ldA.m0.k0"].modes[0].lanes == {"MTE2": 1}
    assert ascend.ops["g0.st.m0.n0"].modes[0].lanes == {"MTE3": 1}
    assert ascend.buffers["g0.A.m0.k0"].memory == "L1"
    assert ascend.buffers["g0.C.m0.n0"].memory == "UB"
