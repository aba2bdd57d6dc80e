"""Lower bounds: each part on hand-made cases, and never above the optimum (CP-SAT)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from models.errors import InputError
from models.formats import Mode, Op, Problem, Target, Task
from schedsearch.engine.bounds.lower import critical_path, lower_bound
from tests.fuzz._budget import examples

TARGET = Target("t", lanes={"DMA": 2, "HMX": 1}, budgets={"BW": 60}, memories={})


def problem_of(ops: dict[str, tuple[Mode, ...]], after: tuple = ()) -> Problem:
    return Problem("p", {}, {"t": Task("x")}, {},
                   {name: Op("t", modes) for name, modes in ops.items()}, after)


def test_two_queues_drawing_40_of_60_cannot_overlap() -> None:
    ops = {f"ld{i}": (Mode(100, {"DMA": 1}, {"BW": 40}),) for i in range(4)}
    bound = lower_bound(problem_of(ops), TARGET)
    assert bound.parts["lane:DMA"] == 200  # two queues would halve the work...
    assert bound.parts["budget:BW"] == 267  # ceil(4 * 100 * 40 / 60)
    assert bound.parts["disjunctive:BW"] == 400  # ...but the draws forbid any overlap
    assert bound.value == 400


def test_an_op_with_a_cheap_mode_leaves_the_disjunctive_chain() -> None:
    ops = {f"ld{i}": (Mode(100, {"DMA": 1}, {"BW": 40}), Mode(180, {"DMA": 1}, {"BW": 20}))
           for i in range(4)}
    bound = lower_bound(problem_of(ops), TARGET)
    assert bound.parts["disjunctive:BW"] == 0
    assert bound.parts["budget:BW"] == 240  # ceil(4 * min(4000, 3600) / 60)


def test_energy_weighs_queue_time_against_bandwidth() -> None:
    # x ops at full rate: queues need (100x + 180(4-x)) / 2, bandwidth (4000x + 3600(4-x))
    # / 60; the two meet at x = 18/7, T = 360 - 40 * 18/7 = 257.14..., rounded up.
    ops = {f"ld{i}": (Mode(100, {"DMA": 1}, {"BW": 40}), Mode(180, {"DMA": 1}, {"BW": 20}))
           for i in range(4)}
    bound = lower_bound(problem_of(ops), TARGET)
    assert bound.parts["energy"] == 258
    assert bound.value == 258  # above each of lane:DMA (200) and budget:BW (240)


def test_lane_work_takes_the_cheapest_mode_per_op() -> None:
    ops = {"v": (Mode(90, {"DMA": 1}), Mode(50, {"DMA": 2})), "w": (Mode(11, {"DMA": 1}),)}
    assert lower_bound(problem_of(ops), TARGET).parts["lane:DMA"] == 51  # ceil(101 / 2)
    assert lower_bound(problem_of(ops), TARGET).parts["disjunctive:DMA"] == 0


def test_critical_path_follows_after_edges_at_shortest_modes() -> None:
    ops = {"a": (Mode(5),), "b": (Mode(7), Mode(3)), "c": (Mode(4),), "d": (Mode(1),)}
    problem = problem_of(ops, (("a", "b"), ("b", "c"), ("a", "d")))
    assert critical_path(problem) == 12
    assert lower_bound(problem, TARGET).parts["critical_path"] == 12


def test_a_cycle_is_an_input_error() -> None:
    problem = problem_of({"a": (Mode(1),), "b": (Mode(1),)}, (("a", "b"), ("b", "a")))
    with pytest.raises(InputError) as caught:
        lower_bound(problem, TARGET)
    assert caught.value.rule == "CYCLE"


def test_empty_problem_has_bound_zero() -> None:
    assert lower_bound(problem_of({}), TARGET).value == 0


def optimum(problem: Problem, target: Target) -> int:
    """The exact minimum makespan by CP-SAT (lanes and budgets as cumulatives)."""
    model = cp_model.CpModel()
    horizon = sum(max(m.duration for m in op.modes) for op in problem.ops.values())
    starts, ends = {}, {}
    demands: dict[str, list[tuple[cp_model.IntervalVar, int]]] = {}
    for name, op in problem.ops.items():
        starts[name] = model.new_int_var(0, horizon, f"s{name}")
        ends[name] = model.new_int_var(0, horizon, f"e{name}")
        chosen = []
        for i, mode in enumerate(op.modes):
            on = model.new_bool_var(f"{name}{i}")
            chosen.append(on)
            interval = model.new_optional_interval_var(starts[name], mode.duration,
                                                       ends[name], on, f"i{name}{i}")
            for resource, amount in (*mode.lanes.items(), *mode.budgets.items()):
                demands.setdefault(resource, []).append((interval, amount))
        model.add_exactly_one(chosen)
    capacity = {**target.lanes, **target.budgets}
    for resource, items in demands.items():
        model.add_cumulative([i for i, _ in items], [d for _, d in items], capacity[resource])
    for pred, succ in problem.after:
        model.add(starts[succ] >= ends[pred])
    makespan = model.new_int_var(0, horizon, "makespan")
    model.add_max_equality(makespan, list(ends.values()))
    model.minimize(makespan)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(model) == cp_model.OPTIMAL
    return int(solver.objective_value)


@st.composite
def small_problems(draw: st.DrawFn) -> Problem:
    count = draw(st.integers(1, 6))
    ops = {}
    for i in range(count):
        modes = []
        for _ in range(draw(st.integers(1, 2))):
            lanes = draw(st.dictionaries(st.sampled_from(["DMA", "HMX"]),
                                         st.integers(1, 1), max_size=2))
            if "DMA" in lanes:
                lanes["DMA"] = draw(st.integers(1, 2))
            budgets = draw(st.dictionaries(st.just("BW"), st.integers(1, 60), max_size=1))
            modes.append(Mode(draw(st.integers(1, 20)), lanes, budgets))
        ops[f"o{i}"] = tuple(modes)
    edges = draw(st.lists(st.tuples(st.integers(0, count - 1), st.integers(0, count - 1))
                          .filter(lambda e: e[0] < e[1]), max_size=4))
    return problem_of(ops, tuple(dict.fromkeys((f"o{a}", f"o{b}") for a, b in edges)))


@pytest.mark.slow
@settings(max_examples=examples(1.6))
@given(small_problems())
def test_bound_never_exceeds_the_optimum(problem: Problem) -> None:
    bound = lower_bound(problem, TARGET)
    best = optimum(problem, TARGET)
    assert bound.value <= best, (bound.parts, best)


def test_a_mode_of_no_time_drawing_past_the_budget_bounds_nothing() -> None:
    # Regression: the energy LP left out a zero-duration mode drawing 99 of a budget of
    # 60 (an empty window draws nothing) and forced the op's 10-tick mode: energy 10 > 0.
    problem = problem_of({"a": (Mode(10, {"HMX": 1}), Mode(0, {}, {"BW": 99}))})
    assert optimum(problem, TARGET) == 0
    assert lower_bound(problem, TARGET).value == 0
