"""Batched and transposed GEMM: batches stacked along rows, a shared weight, layouts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from models.cost import cost_model
from models.ops import gemm
from models.targets import load_target
from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled


def test_batches_stack_along_rows() -> None:
    problem = one_task("gemm", "hexagon-v75", "g", M=64, N=96, K=128, batch=3)
    assert_well_tiled(problem)
    shapes = {name: t.shape for name, t in problem.tensors.items()}
    assert shapes == {"g.A": (192, 128), "g.B": (384, 96), "g.C": (192, 96)}
    assert problem.ops["g.ldA.b2.m0.k0"].reads[0].box == ((128, 192), (0, 128))
    assert problem.ops["g.ldB.b2.k0.n0.b2.m0"].reads[0].box == ((256, 384), (0, 96))
    assert problem.ops["g.mm.b2.m0.n0.k0"].space == ((128, 192), (0, 96), (0, 128))


def test_a_shared_weight_is_loaded_once_for_every_batch() -> None:
    problem = one_task("gemm", "hexagon-v75", "g", M=64, N=128, K=128, batch=4, b_batch=0,
                       order="kmn")
    assert_well_tiled(problem)
    assert problem.tensors["g.B"].shape == (128, 128)
    assert [n for n in problem.ops if n.startswith("g.ldB")] == ["g.ldB.k0.n0"]
    readers = [n for n, op in problem.ops.items()
               if any(a.buffer == "g.B.k0.n0" for a in op.reads)]
    assert len(readers) == 4


def test_transposed_operands_read_the_transposed_box() -> None:
    problem = one_task("gemm", "hexagon-v75", "g", M=64, N=256, K=128, trans_a=1, trans_b=1,
                       bn=128)
    assert_well_tiled(problem)
    assert problem.tensors["g.A"].shape == (128, 64)
    assert problem.tensors["g.B"].shape == (256, 128)
    assert problem.ops["g.ldB.k0.n1.m0"].reads[0].box == ((128, 256), (0, 128))
    plain = one_task("gemm", "hexagon-v75", "g", M=64, N=256, K=128, bn=128)
    assert [op.modes for op in problem.ops.values()] == [op.modes for op in plain.ops.values()]


@given(M=st.integers(1, 70), N=st.integers(1, 70), K=st.integers(1, 70),
       batch=st.integers(1, 4), shared=st.booleans(), ta=st.booleans(), tb=st.booleans(),
       order=st.sampled_from(gemm.ORDERS))
def test_any_batched_shape_is_well_tiled(M: int, N: int, K: int, batch: int, shared: bool,
                                         ta: bool, tb: bool, order: str) -> None:
    problem = one_task("gemm", M=M, N=N, K=K, batch=batch, b_batch=int(not shared),
                       trans_a=int(ta), trans_b=int(tb), bm=32, bn=64, bk=32, order=order)
    assert_well_tiled(problem)
    model = cost_model(load_target("hexagon-v75"))
    assert len(problem.ops) == gemm.op_count(problem.tasks["t0"].params, model)
