"""GEMMs of quantised weights (``b_bits``): B streams at its stored width and is
dequantised on the vector engine after each load."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.cost import cost_model
from models.dtypes import DTYPE_BYTES
from models.errors import InputError
from models.formats import Problem
from models.ops import gemm
from models.targets import load_target
from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled

SHAPE = {"M": 64, "N": 256, "K": 512, "bn": 128, "bk": 256, "trans_b": 1}


def _b_load_bytes(problem: Problem) -> list[int]:
    """The DDR bytes of each load of B: its stored box times the stored element size."""
    elem = DTYPE_BYTES[problem.tensors["g.B"].dtype]
    return [math.prod(hi - lo for lo, hi in op.reads[0].box) * elem
            for name, op in problem.ops.items() if name.startswith("g.ldB")]


@pytest.mark.parametrize(("bits", "dtype", "stored_cols"), [(8, "i8", 512), (4, "u8", 256)])
def test_a_quantised_weight_streams_at_its_stored_width(bits: int, dtype: str,
                                                         stored_cols: int) -> None:
    problem = one_task("gemm", "hexagon-v75", "g", **SHAPE, b_bits=bits)
    plain = one_task("gemm", "hexagon-v75", "g", **SHAPE)
    assert_well_tiled(problem)
    b = problem.tensors["g.B"]
    assert (b.shape, b.dtype) == ((256, stored_cols), dtype)
    # each block moves its elements at bits / 8 bytes: 1/4 (int4) or 1/2 (int8) of f16's
    quantised, wide = _b_load_bytes(problem), _b_load_bytes(plain)
    assert [q * 16 // bits for q in quantised] == wide
    dequantise = [name for name in problem.ops if name.startswith("g.dqB")]
    assert len(dequantise) == len(quantised) and dequantise
    lanes = {lane for name in dequantise for mode in problem.ops[name].modes
             for lane in mode.lanes}
    assert lanes == {"HVX"}


def test_int4_needs_the_transposed_packing() -> None:
    with pytest.raises(InputError, match="trans_b must be 1"):
        one_task("gemm", "hexagon-v75", "g", M=64, N=64, K=64, b_bits=4)
    with pytest.raises(InputError, match="b_bits must be 0, 4 or 8"):
        one_task("gemm", "hexagon-v75", "g", M=64, N=64, K=64, b_bits=2)


@given(M=st.integers(1, 70), N=st.integers(1, 70), K=st.integers(1, 35),
       bits=st.sampled_from((4, 8)), order=st.sampled_from(gemm.ORDERS))
def test_any_quantised_shape_is_well_tiled(M: int, N: int, K: int, bits: int,
                                           order: str) -> None:
    problem = one_task("gemm", M=M, N=N, K=2 * K, trans_b=1, b_bits=bits, bm=32, bn=64,
                       bk=32, order=order)
    assert_well_tiled(problem)
    model = cost_model(load_target("hexagon-v75"))
    assert len(problem.ops) == gemm.op_count(problem.tasks["t0"].params, model)
