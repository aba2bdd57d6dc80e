"""Attention: per-head scores, softmax and product, KV heads shared by their group."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.errors import InputError
from models.ops import attention
from tests.models.ops_helpers import one_task
from tests.models.tiling_checks import assert_well_tiled


def test_grouped_query_heads_share_their_kv_blocks() -> None:
    problem = one_task("attention", "hexagon-v75", "a", heads=4, kv_heads=2, head_dim=64,
                       q_len=96, block_q=64, block_kv=64)
    assert_well_tiled(problem)
    assert problem.tensors["a.Q"].shape == problem.tensors["a.O"].shape == (96, 256)
    assert problem.tensors["a.K"].shape == (96, 128)
    # K and V: 2 KV heads x 2 key blocks, loaded once each
    assert len([n for n in problem.ops if n.startswith(("a.ldK", "a.ldV"))]) == 2 * 2 * 2
    assert problem.ops["a.ldK.g1.j0"].reads[0].box == ((0, 64), (64, 128))
    # heads 2 and 3 use KV head 1
    for head in (2, 3):
        reads = problem.ops[f"a.mm.qk.h{head}.q0.j1.k0"].reads
        assert reads[1].buffer == "a.K.g1.j1"
    # the softmax of a query block reads every key block's scores
    softmax = problem.ops["a.softmax.h3.q1"]
    assert [r.buffer for r in softmax.reads] == ["a.acc.qk.h3.q1.j0", "a.acc.qk.h3.q1.j1"]
    assert softmax.space == ((3 * 96 + 64, 3 * 96 + 96), (0, 96))
    assert problem.ops["a.st.pv.h3.q1"].writes[0].box == ((64, 96), (192, 256))


def test_decode_reads_the_cache_from_ddr_then_the_new_token() -> None:
    problem = one_task("attention", "hexagon-v75", "a", heads=2, kv_heads=1, head_dim=64,
                       q_len=1, past=512)
    assert_well_tiled(problem)
    assert problem.tensors["a.Kcache"].shape == (512, 64)
    assert problem.tensors["a.Kcache"].role == "input"
    keys = [problem.ops[f"a.ldK.g0.j{j}"].reads[0] for j in range(5)]
    assert [(r.tensor, r.box[0]) for r in keys] == [
        ("a.Kcache", (0, 128)), ("a.Kcache", (128, 256)), ("a.Kcache", (256, 384)),
        ("a.Kcache", (384, 512)), ("a.K", (0, 1))]
    assert problem.tasks["a"].space == ((0, 2), (0, 513))
    # the product accumulates over the five key blocks in one chain
    chain = [problem.ops[f"a.mm.pv.h1.q0.k{j}"].writes[0].value for j in range(5)]
    assert chain == [f"acc(pv,h1,q0)@k{j}" for j in range(5)]


@given(heads=st.sampled_from([1, 2, 4, 6]), group=st.sampled_from([1, 2]),
       q_len=st.integers(1, 70), past=st.integers(0, 100), bq=st.integers(16, 64),
       bkv=st.integers(32, 96))
def test_any_shape_is_well_tiled(heads: int, group: int, q_len: int, past: int, bq: int,
                                 bkv: int) -> None:
    kv = max(1, heads // group)
    problem = one_task("attention", heads=heads, kv_heads=kv, head_dim=32, q_len=q_len,
                       past=past, block_q=bq, block_kv=bkv)
    assert_well_tiled(problem)
    assert len(problem.ops) == attention.op_count(problem.tasks["t0"].params, None)


@pytest.mark.parametrize(("params", "rule"), [
    ({"heads": 6, "kv_heads": 4}, "SHAPE"),
    ({"heads": 2, "kv_heads": 1, "dtype": "f32"}, "DTYPE"),
    ({"heads": 2, "kv_heads": 1, "causal": 2}, "FORMAT"),
])
def test_refusals(params: dict[str, object], rule: str) -> None:
    with pytest.raises(InputError) as caught:
        one_task("attention", head_dim=64, q_len=8, **params)
    assert caught.value.rule == rule


def test_soft_capping_lengthens_only_the_softmax() -> None:
    shape = {"heads": 2, "kv_heads": 1, "head_dim": 64, "q_len": 64}
    plain = one_task("attention", "hexagon-v75", "a", **shape)
    capped = one_task("attention", "hexagon-v75", "a", **shape, softcap=50.0)
    assert_well_tiled(capped)
    assert plain.ops.keys() == capped.ops.keys()
    for name, op in capped.ops.items():
        slower = [c.duration > p.duration for c, p in zip(op.modes, plain.ops[name].modes,
                                                          strict=True)]
        assert all(slower) if ".softmax." in name else not any(slower)
