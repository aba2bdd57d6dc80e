"""``windows``: exact on hand-made heads and tails, and never above the optimum (CP-SAT)
on small random problems."""

from __future__ import annotations

import math

from hypothesis import given, settings

from models.formats import Mode, Op, Problem, Target, Task
from schedsearch.engine.bounds.lower import energy_relaxation, lower_bound
from schedsearch.engine.bounds.windows import window_part
from schedsearch.idealise import bottleneck
from tests.engine.bounds.test_lower import optimum
from tests.engine.bounds.test_phases import (
    TARGET as PHASE_TARGET,
)
from tests.engine.bounds.test_phases import (
    dataflow_problems,
    phased_problems,
    with_forced_edges,
)
from tests.fuzz._budget import examples

TARGET = Target("t", lanes={"DMA": 2, "HMX": 1}, budgets={"BW": 60}, memories={})
FAST = Mode(100, {"DMA": 1}, {"BW": 40})
SLOW = Mode(180, {"DMA": 1}, {"BW": 20})


def problem_of(ops: dict[str, tuple[Mode, ...]], after: tuple = ()) -> Problem:
    return Problem("p", {}, {"t": Task("x")}, {},
                   {name: Op("t", modes) for name, modes in ops.items()}, after)


def windows(problem: Problem, target: Target = TARGET) -> int:
    relaxation = energy_relaxation(problem, target)
    assert relaxation is not None
    return window_part(problem, target, relaxation.prices)["windows"]


def loads_then(compute: int, modes: tuple[Mode, ...] = (FAST,), count: int = 3,
               before: int = 0) -> Problem:
    """``count`` loads, each after a matrix op of ``before`` (if any) and before a
    matrix op of ``compute``."""
    ops = {f"ld{i}": modes for i in range(count)}
    ops["mm"] = (Mode(compute, {"HMX": 1}),)
    after = tuple((f"ld{i}", "mm") for i in range(count))
    if before:
        ops["v"] = (Mode(before, {"HMX": 1}),)
        after += tuple(("v", f"ld{i}") for i in range(count))
    return problem_of(ops, after)


def test_loads_that_cannot_overlap_and_their_compute_after_them_are_exact() -> None:
    # three loads drawing 40 of 60 run one at a time (300), then the GEMM (50)
    p = loads_then(50)
    assert windows(p) == 350 == optimum(p, TARGET)
    parts = lower_bound(p, TARGET).parts
    assert parts["windows"] == 350
    # the other parts on paths alone see the loads one at a time (disjunctive:BW); the
    # GEMM's head sharpened by the loads' small problem (engine/bounds/ends.py) sees it too
    assert max(v for k, v in parts.items()
               if k != "windows" and not k.startswith(("head_tail:", "phases:"))) == 300
    assert parts["head_tail:HMX"] == 350


def test_whatif_names_one_resource_where_windows_binds() -> None:
    # windows combines every lane and budget, so whatif does not name it; the GEMM's
    # wait for the three loads, sharpened by their small problem (engine/bounds/ends.py),
    # is HMX's own part and reaches it, so whatif names HMX's wait, not the bus alone
    assert bottleneck(loads_then(50), TARGET) == "phases:HMX"
    assert lower_bound(loads_then(50), TARGET).parts["disjunctive:BW"] == 300


def test_a_wait_before_the_loads_is_a_head() -> None:
    p = loads_then(50, before=30)
    assert windows(p) == 380 == optimum(p, TARGET)


def test_one_mode_choice_holds_for_every_window() -> None:
    # two loads, fast or slow, between a 30 and a 50 tick op: in [30, C - 50] x fast
    # loads need 100x alone (two fast ones cannot overlap), (100x + 180(2 - x)) / 2 on
    # the queues; the two meet at x = 9/7, T = 900/7 (the bandwidth, 7200/60 + 20x/3,
    # is below). The optimum runs them side by side (one fast and one slow, 180).
    p = loads_then(50, modes=(FAST, SLOW), count=2, before=30)
    assert windows(p) == math.ceil(30 + 900 / 7 + 50) == 209
    assert optimum(p, TARGET) == 260


def test_prices_only_rank_thresholds() -> None:
    p = loads_then(50, before=30)
    assert window_part(p, TARGET, {})["windows"] == 380


def test_nothing_to_bound_gives_no_part() -> None:
    assert window_part(problem_of({"idle": (Mode(5),)}), TARGET, {}) == {}


def check(p: Problem) -> None:
    relaxation = energy_relaxation(p, PHASE_TARGET)
    if relaxation is None:
        return
    part = window_part(p, PHASE_TARGET, relaxation.prices)
    best = optimum(with_forced_edges(p), PHASE_TARGET)
    assert part.get("windows", 0) <= best, (part, best, p)
    if part:
        assert part["windows"] >= relaxation.bound()


@settings(max_examples=examples(1))
@given(dataflow_problems())
def test_the_part_never_exceeds_the_optimum(p: Problem) -> None:
    check(p)


@settings(max_examples=examples(1))
@given(phased_problems())
def test_the_part_never_exceeds_the_optimum_of_phased_work(p: Problem) -> None:
    check(p)
