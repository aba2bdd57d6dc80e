"""The columns' vector tests (:mod:`checker.columns`) only decide where the exact Python
passes need not run: with every test forced to "unclear", each rule must report exactly
the same violations, in the same order, on random schedules; and on a legal pipelined
schedule the tests must clear everything (else they would save nothing)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import checker
from benchmarks.bench_checker import synthetic_schedule
from checker.columns import columns
from checker.load import build_model
from checker.program import _Program, verify_program
from checker.rules import memory, program_orders, values
from checker.rules.program_graph import Graph
from tests.fuzz.strategies import legal_schedules
from tests.program.byte_split import byte_split_schedules
from tests.program.programs import lowered, mutated

BUFFERS = ("b0", "b1", "b2")
SIZE = 8


@st.composite
def access(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {"buffer": draw(st.sampled_from(BUFFERS))}
    if draw(st.booleans()):
        lo = draw(st.integers(0, SIZE - 1))
        out["bytes"] = [lo, draw(st.integers(lo + 1, SIZE))]
    value = draw(st.sampled_from(["x", "y", None]))
    if value is not None:
        out["value"] = value
    return out


@st.composite
def schedules(draw: st.DrawFn) -> dict[str, Any]:
    """Ops on three buffers, often one after another (so that buffers qualify for the
    vector tests), sometimes overlapping, zero-length or inverted, on two DMA units."""
    ops, placed = {}, {}
    clock = 0
    for i in range(draw(st.integers(0, 8))):
        clock += draw(st.integers(-3, 4))
        start = max(clock, 0) if draw(st.integers(0, 9)) else clock
        end = start + draw(st.sampled_from([0, 1, 2, 3, -1]))
        ops[f"op{i}"] = {"task": "t", "modes": [{"duration": 0, "lanes": {"DMA": 1}}],
                         "reads": draw(st.lists(access(), max_size=2)),
                         "writes": draw(st.lists(access(), max_size=2))}
        placed[f"op{i}"] = {"mode": 0, "start": start, "end": end,
                            "units": {"DMA": [draw(st.sampled_from([0, 1, 0, 2]))]}}
    places = {b: {"offset": 0 if k < 2 else SIZE,
                  "alloc": draw(st.sampled_from([0, 0, 2])),
                  "free": draw(st.sampled_from([40, 40, 5]))} for k, b in enumerate(BUFFERS)}
    return {
        "format": "npu-schedule/1",
        "target": {"format": "npu-target/1", "name": "t", "lanes": {"DMA": 2},
                   "memories": {"M": {"capacity_bytes": 4 * SIZE}}},
        "problem": {"format": "npu-problem/1", "name": "p", "tasks": {"t": {"kind": "x"}},
                    "buffers": {b: {"memory": "M", "size": SIZE} for b in BUFFERS},
                    "ops": ops},
        "ops": placed, "buffers": places,
        "makespan": max((p["end"] for p in placed.values()), default=0),
    }


def _everything_unclear(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(values, "_fresh", lambda c: np.zeros(len(c.buffers), dtype=bool))
    monkeypatch.setattr(values, "_racing", lambda c: np.ones(len(c.buffers), dtype=bool))
    monkeypatch.setattr(values, "_any_twice", lambda c: True)
    monkeypatch.setattr(memory, "_within_lifetimes", lambda m: False)
    monkeypatch.setattr(memory, "_no_alias", lambda m: False)
    monkeypatch.setattr(program_orders, "_ordered_buffers",
                        lambda c, graph, nodes: np.zeros(len(c.buffers), dtype=bool))


@settings(deadline=None)
@given(doc=schedules())
def test_the_vector_tests_change_no_report(doc: dict[str, Any]) -> None:
    fast = checker.verify(doc).violations
    with pytest.MonkeyPatch.context() as monkeypatch:
        _everything_unclear(monkeypatch)
        slow = checker.verify(doc).violations
    assert fast == slow


@settings(deadline=None)
@given(data=st.data(), schedule=st.one_of(legal_schedules(), byte_split_schedules()))
def test_the_vector_tests_change_no_program_report(data: st.DataObject,
                                                   schedule: dict[str, Any]) -> None:
    doc = lowered(schedule)
    if data.draw(st.booleans(), label="mutated"):
        doc, _ = data.draw(mutated(doc))
    fast = verify_program(doc).violations
    with pytest.MonkeyPatch.context() as monkeypatch:
        _everything_unclear(monkeypatch)
        slow = verify_program(doc).violations
    assert fast == slow


def test_a_legal_pipeline_is_cleared_by_the_vector_tests() -> None:
    model, _ = build_model(synthetic_schedule(400))
    c = columns(model)
    assert values._fresh(c).all()
    assert not values._racing(c).any()
    assert not values._any_twice(c)
    assert memory._within_lifetimes(model)
    assert memory._no_alias(model)


def test_a_stale_read_is_left_to_the_exact_pass() -> None:
    doc = synthetic_schedule(40)
    doc["problem"]["ops"]["st3"]["reads"][0]["value"] = "P3"  # vec3 wrote Q3 there
    model, _ = build_model(doc)
    fresh = values._fresh(columns(model))
    assert fresh.tolist().count(False) == 1
    assert checker.verify(doc).codes() == {"STALE_READ"}


def test_a_lowered_pipeline_is_cleared_and_a_dropped_wait_is_not() -> None:
    doc = lowered(synthetic_schedule(40))
    model, _ = build_model(doc["schedule"])
    program = _Program(doc, model)
    graph = Graph(len(program.names), list(program.queues.values()), program.waits)
    c = columns(model)
    nodes = np.array([program.index[name] for name in c.names])
    assert program_orders._ordered_buffers(c, graph, nodes).all()
    reader = next(op for op, preds in doc["waits"].items() if op.startswith("st") and preds)
    doc["waits"][reader] = []  # st waits for vec, whose value it reads
    program = _Program(doc, model)
    graph = Graph(len(program.names), list(program.queues.values()), program.waits)
    assert not program_orders._ordered_buffers(c, graph, nodes).all()
    assert "ORDER_RAW" in verify_program(doc).codes()
