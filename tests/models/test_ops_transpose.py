"""Transpose: N-D views of 2-D storage, DMA gathers or vector shuffles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.errors import InputError
from models.ops import transpose
from models.ops.views import stored_boxes
from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled


@st.composite
def views(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...], int]:
    """A shape, a box inside it, and a row length that divides its element count."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    box = []
    for extent in shape:
        lo = draw(st.integers(0, extent - 1))
        box.append((lo, draw(st.integers(lo + 1, extent))))
    total = math.prod(shape)
    cols = draw(st.sampled_from([d for d in range(1, total + 1) if total % d == 0]))
    return shape, tuple(box), cols


@given(views())
def test_stored_boxes_hold_exactly_the_view_box(case) -> None:
    shape, box, cols = case
    flat = np.arange(math.prod(shape))
    wanted = np.sort(flat.reshape(shape)[tuple(slice(lo, hi) for lo, hi in box)].ravel())
    stored = flat.reshape(-1, cols)
    got = np.concatenate([stored[r0:r1, c0:c1].ravel()
                          for (r0, r1), (c0, c1) in stored_boxes(shape, box, cols)])
    assert np.array_equal(np.sort(got), wanted)  # each element once, nothing else


def test_a_head_slice_is_one_box() -> None:
    assert stored_boxes((128, 32, 64), ((0, 128), (3, 4), (0, 64)), 2048) == [
        ((0, 128), (192, 256))]


def test_heads_to_front_is_a_dma_gather_without_compute() -> None:
    problem = one_task("transpose", shape="128,32,64", perm="1,0,2", x_cols=2048, block=1)
    assert_well_tiled(problem)
    assert problem.tensors["t0.X"].shape == (128, 2048)
    assert problem.tensors["t0.Y"].shape == (32 * 128, 64)
    load = problem.ops["t0.ldX.b3"]
    assert [a.box for a in load.reads] == [((0, 128), (192, 256))]
    assert load.space == ((3, 4), (0, 128), (0, 64))
    assert [a.box for a in problem.ops["t0.st.b3"].writes] == [((384, 512), (0, 64))]
    assert all(mode.lanes == {"DMA": 1} for op in problem.ops.values() for mode in op.modes)


def test_moving_the_last_dimension_needs_a_vector_shuffle() -> None:
    problem = one_task("transpose", shape="8,128,64", perm="0,2,1", block=2)
    assert_well_tiled(problem)
    assert problem.tensors["t0.Y"].shape == (8 * 64, 128)
    assert sorted(n for n in problem.ops if ".tr." in n) == [f"t0.tr.b{i}" for i in range(4)]
    assert problem.ops["t0.tr.b0"].modes[0].lanes == {"HVX": 1}


@given(shape=st.lists(st.integers(1, 6), min_size=2, max_size=4), data=st.data())
def test_any_permutation_is_well_tiled(shape: list[int], data: st.DataObject) -> None:
    perm = data.draw(st.permutations(range(len(shape))))
    block = data.draw(st.integers(0, 3))
    params = {"shape": ",".join(map(str, shape)), "perm": ",".join(map(str, perm)),
              "block": block, "dtype": "f16"}
    problem = one_task("transpose", **params)
    assert_well_tiled(problem)
    full = {**problem.tasks["t0"].params}
    assert len(problem.ops) == transpose.op_count(full, None)


@pytest.mark.parametrize(("params", "rule"), [
    ({"shape": "4,4", "perm": "0,0"}, "FORMAT"),
    ({"shape": "4,x", "perm": "1,0"}, "FORMAT"),
    ({"shape": "4,6", "perm": "1,0", "x_cols": 5}, "SHAPE"),
])
def test_bad_layouts_are_refused(params: dict[str, object], rule: str) -> None:
    with pytest.raises(InputError) as caught:
        one_task("transpose", **params)
    assert caught.value.rule == rule
