"""Requests as decoder layers: the bundled layers' tasks, prefixed; prefills in chunks."""

from __future__ import annotations

from collections import Counter

import pytest

from models.examples.decoders import MODELS, layer
from models.mix import Mix, Request
from models.requests import mix_problem, parts
from models.targets import load_target
from models.workload import tile, workload_from_dict

TARGET = load_target("hexagon-v75")
QWEN = next(m for m in MODELS if m.name == "qwen2.5-0.5b")


def _bundled_ops(phase: str, tokens: int, past: int) -> Counter:
    """Ops per (unprefixed) task of the bundled layer of this shape."""
    problem = tile(workload_from_dict(layer(QWEN, phase, tokens, past)), TARGET)
    return Counter(op.task for op in problem.ops.values())


def _mix(*requests: Request) -> Mix:
    return Mix("m", TARGET.name, requests)


PREFILL = Request("p0", QWEN.name, "prefill", 160, 0)
DECODE = Request("d0", QWEN.name, "decode", 1, 256)


def test_each_request_is_the_bundled_layer_of_its_shape_with_names_prefixed() -> None:
    mp = mix_problem(_mix(PREFILL, DECODE), TARGET)
    for request, phase, tokens, past in (("p0", "prefill", 160, 0), ("d0", "decode", 1, 256)):
        counts = Counter(mp.problem.ops[name].task.removeprefix(f"{request}-")
                         for name in mp.ops_of(request))
        assert counts == _bundled_ops(phase, tokens, past)
    assert len(mp.problem.ops) == len(mp.ops_of("p0")) + len(mp.ops_of("d0"))
    assert all(name.startswith(("p0-", "d0-")) for name in mp.problem.tensors)
    assert mp.request_of["d0-attn"] == "d0"


def test_requests_of_the_same_shape_share_nothing() -> None:
    twin = Request("d1", QWEN.name, "decode", 1, 256)
    mp = mix_problem(_mix(DECODE, twin), TARGET)
    tensors = {r: {a.tensor for n in mp.ops_of(r) for op in [mp.problem.ops[n]]
                   for a in (*op.reads, *op.writes) if a.tensor} for r in ("d0", "d1")}
    assert tensors["d0"] and not tensors["d0"] & tensors["d1"]
    request = {name: mp.request_of[op.task] for name, op in mp.problem.ops.items()}
    assert all(request[a] == request[b] for a, b in mp.problem.after)


def test_a_prefill_in_chunks_is_layers_attending_to_the_tokens_before() -> None:
    assert [(p.prefix, p.tokens, p.past) for p in parts(PREFILL, 64)] == \
        [("p0-c0", 64, 0), ("p0-c1", 64, 64), ("p0-c2", 32, 128)]
    assert [(p.prefix, p.tokens) for p in parts(PREFILL, 160)] == [("p0", 160)]
    assert [(p.prefix, p.past) for p in parts(DECODE, 64)] == [("d0", 256)]
    assert mix_problem(_mix(PREFILL, DECODE), TARGET, chunk=160).chunk is None


def test_chunks_are_the_bundled_layers_and_their_attention_follows_earlier_k_and_v() -> None:
    mp = mix_problem(_mix(PREFILL, DECODE), TARGET, chunk=64)
    ops = mp.problem.ops
    for part in mp.parts[:3]:
        counts = Counter(ops[n].task.removeprefix(f"{part.prefix}-") for n in ops
                         if mp.part_of[ops[n].task] == part)
        assert counts == _bundled_ops("prefill", part.tokens, part.past)
    part = {name: mp.part_of[op.task] for name, op in ops.items()}
    chunk_edges = [(a, b) for a, b in mp.problem.after if part[a] != part[b]]
    pairs = {(ops[a].task, ops[b].task) for a, b in chunk_edges}
    # chunk c's attention after the K and V projections of every earlier chunk, nothing else
    assert pairs == {(f"p0-c{j}-{proj}", f"p0-c{c}-attn")
                     for c in (1, 2) for j in range(c) for proj in ("k_proj", "v_proj")}
    for a, b in chunk_edges:
        stored = next(w.tensor for w in ops[a].writes if w.tensor)
        read = next(r for r in ops[b].reads if r.tensor and r.tensor.endswith("_cache"))
        assert stored.split("-")[-1] == read.tensor.split("-")[-1][0]  # k -> k_cache


def test_a_chunk_of_zero_tokens_is_refused() -> None:
    from models.errors import InputError

    with pytest.raises(InputError, match="at least one token"):
        mix_problem(_mix(PREFILL), TARGET, chunk=0)
