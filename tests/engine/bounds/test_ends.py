"""Sharpened heads and tails (:mod:`schedsearch.engine.bounds.ends`): exact on a hand
case where the forced path lets two transfers share the bus, and never above the
optimum on small random problems."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from models.formats import Mode, Op, Problem
from schedsearch.engine.bounds.ends import sharpened_order
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.bounds.phases import forced_order, op_tables, phase_parts
from tests.engine.bounds.test_lower import optimum
from tests.engine.bounds.test_phases import (
    TARGET,
    buf,
    dataflow_problems,
    phased_problems,
    problem,
    with_forced_edges,
)
from tests.fuzz._budget import examples


def load(name: str) -> Op:
    """A transfer that takes 40 of the 60 units of bandwidth for 100 ticks: two cannot
    run side by side."""
    return Op("t", (Mode(100, {"DMA": 1}, {"BW": 40}),), writes=(buf(name, name.upper()),))


def two_loads_then_a_gemm_then_two_stores() -> Problem:
    """Two loads, a GEMM that needs both, two stores of its result: the paths say 100
    before the GEMM and 100 after it; the bus says 200 each."""
    gemm = Op("t", (Mode(50, {"HMX": 1}),), reads=(buf("a", "A"), buf("b", "B")),
              writes=(buf("c", "C"),))
    store = Op("t", (Mode(100, {"DMA": 1}, {"BW": 40}),), reads=(buf("c", "C"),))
    return problem({"la": load("a"), "lb": load("b"), "mm": gemm, "s1": store,
                    "s2": store})


def test_ancestors_and_descendants_that_share_the_bus_raise_the_head_and_tail() -> None:
    p = two_loads_then_a_gemm_then_two_stores()
    tables = op_tables(p, TARGET)
    order = forced_order(p, tables.duration)
    assert order is not None
    sharp = sharpened_order(p, TARGET, tables, order)
    mm = list(p.ops).index("mm")
    assert (order.head[mm], order.tail[mm]) == (100, 100)
    assert (sharp.head[mm], sharp.tail[mm]) == (200, 200)
    assert phase_parts(p, TARGET, forced=(tables, sharp))["head_tail:HMX"] == 450
    assert lower_bound(p, TARGET).value == optimum(with_forced_edges(p), TARGET) == 450


def _sharpened_parts(p: Problem) -> dict[str, int]:
    tables = op_tables(p, TARGET)
    order = forced_order(p, tables.duration)
    if order is None:
        return {}
    return phase_parts(p, TARGET, forced=(tables, sharpened_order(p, TARGET, tables, order)))


@settings(max_examples=examples(2))
@given(st.one_of(dataflow_problems(), phased_problems()))
def test_sharpened_parts_never_exceed_the_optimum(p: Problem) -> None:
    parts = _sharpened_parts(p)
    best = optimum(with_forced_edges(p), TARGET)
    assert max(parts.values(), default=0) <= best, (parts, best, p)
