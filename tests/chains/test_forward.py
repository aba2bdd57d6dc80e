"""Path C's rewrite: the consumer reads the producer's buffers, no DDR round trip."""

from __future__ import annotations

from typing import Any

import pytest

from checker import verify
from models.formats import Problem, schedule_to_dict
from models.layouts import Layout, apply_layout
from schedsearch.chains.forward import NotForwardable, forward
from schedsearch.engine.search import solve
from tests.chains.conftest import CHAIN, OPTIONS, tiled


def _aligned(target: str = "hexagon-v75") -> dict[str, Any]:
    """CHAIN with 64-row GEMM blocks over 80 rows: two producer blocks, the second short."""
    norm, gemm = CHAIN["tasks"]
    return {**CHAIN, "target": target,
            "tasks": [{**norm, "rows": 80, "block_rows": 64},
                      {**gemm, "M": 80, "bm": 64, "bk": 64}]}


@pytest.fixture(scope="module")
def forwarded() -> tuple[Problem, Problem]:
    problem, target = tiled(_aligned())
    problem = apply_layout(problem, target, "H", Layout.TILED)
    return problem, forward(problem, target, "H")


def test_the_intermediate_never_reaches_ddr(forwarded: tuple[Problem, Problem]) -> None:
    _, after = forwarded
    assert "H" not in after.tensors
    assert not any(a.tensor == "H" for op in after.ops.values() for a in (*op.reads,
                                                                          *op.writes))
    assert not any(name.startswith("g0.A.") for name in after.buffers)


def test_each_matrix_op_waits_for_exactly_the_rows_it_reads(
        forwarded: tuple[Problem, Problem]) -> None:
    before, after = forwarded
    norm_rows = {name: op.space[0] for name, op in before.ops.items()
                 if name.startswith("r0.norm.") and op.space is not None}
    preds: dict[str, set[str]] = {}
    for a, b in after.after:
        preds.setdefault(b, set()).add(a)
    matrix_ops = [(n, op) for n, op in after.ops.items() if n.startswith("g0.mm.")]
    assert matrix_ops
    for name, op in matrix_ops:
        assert op.space is not None
        lo, hi = op.space[0]
        needed = {n for n, (rlo, rhi) in norm_rows.items() if rlo < hi and lo < rhi}
        assert needed and preds[name] & set(norm_rows) == needed, name
        assert all(r.buffer is not None for r in op.reads)


def test_producer_buffers_hold_whole_tiles(forwarded: tuple[Problem, Problem]) -> None:
    before, after = forwarded
    # the second block holds rows 64..80: 16 rows, padded to one 32-row tile band
    assert after.buffers["r0.Y.b0"].size == before.buffers["r0.Y.b0"].size == 64 * 128 * 2
    assert before.buffers["r0.Y.b1"].size == 16 * 128 * 2
    assert after.buffers["r0.Y.b1"].size == 32 * 128 * 2


def test_the_forwarded_schedule_passes_the_checker(
        forwarded: tuple[Problem, Problem]) -> None:
    _, after = forwarded
    _, target = tiled(_aligned())
    schedule = solve(after, target, time_limit=OPTIONS.time_limit, seed=OPTIONS.seed,
                     workers=OPTIONS.workers)
    assert verify(schedule_to_dict(schedule)).legal


def test_no_forwarding_between_two_memories() -> None:
    problem, target = tiled(_aligned("ascend-910b-core"))
    with pytest.raises(NotForwardable, match="UB"):
        forward(problem, target, "H")
