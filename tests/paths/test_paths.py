"""The four execution paths: legality per the checker, accounting, and no regression."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from checker import verify
from models.cost import evaluate, overheads
from models.formats import Problem, Schedule, Target, schedule_to_dict
from schedsearch.engine.search import solve
from schedsearch.engine.slicing import cross_task_edges, restrict, task_order
from schedsearch.paths import (
    PATH_NAMES,
    Comparison,
    apportion,
    compare,
    speedup_bound,
)
from tests.paths.paths_workloads import OPTIONS

WORKLOADS = ("pair", "chain", "copies")


def _codes(schedule: Schedule) -> set[str]:
    return verify(schedule_to_dict(schedule)).codes()


@pytest.mark.parametrize("name", WORKLOADS)
def test_paths_come_in_order_and_are_legal_except_a_contended_bus(
        compared: dict[str, Comparison], name: str) -> None:
    comparison = compared[name]
    assert tuple(p.name for p in comparison.paths) == PATH_NAMES
    for path in comparison.paths:
        codes = _codes(path.schedule)
        assert path.legal == (not codes)
        assert set(path.violations) == codes
        if path.name == "concurrent":
            # Only the fluid model's stretched draws may break a rule, and it says so.
            assert codes <= {"BUDGET"}
            assert bool(codes) == ("exceeded the budget" in path.note)
        else:
            assert not codes, (path.name, codes)


@pytest.mark.parametrize("name", WORKLOADS)
def test_fused_paths_never_regress(compared: dict[str, Comparison], name: str) -> None:
    comparison = compared[name]
    separate, concurrent, barrier, interleaved = comparison.paths
    assert interleaved.makespan <= barrier.makespan
    assert barrier.device_makespan <= separate.device_makespan
    assert concurrent.device_makespan <= separate.device_makespan
    assert comparison.gain("fused-barrier", "fused-interleaved") <= \
        comparison.overlap_bound + 1e-9


@pytest.mark.parametrize("name", WORKLOADS)
def test_makespan_is_device_time_plus_listed_overheads(
        compared: dict[str, Comparison], name: str) -> None:
    comparison = compared[name]
    target = comparison.paths[0].schedule.target
    costs = overheads(target)
    tasks = len(comparison.paths[0].schedule.problem.tasks)
    for path in comparison.paths:
        assert path.evaluation == evaluate(path.schedule)
        assert path.device_makespan == path.schedule.makespan
        assert path.makespan == (path.device_makespan + path.launches * costs.launch_ns
                                 + path.events * costs.event_ns
                                 + path.barriers * costs.barrier_ns)
    separate, concurrent, barrier, interleaved = comparison.paths
    assert separate.launches == concurrent.launches == tasks
    assert (barrier.launches, barrier.barriers, barrier.events) == (1, tasks - 1, 0)
    assert interleaved.launches == 1


def test_separate_kernels_run_one_after_another(compared: dict[str, Comparison],
                                                chain: tuple[Problem, Target]) -> None:
    problem, target = chain
    schedule = compared["chain"].path("separate").schedule
    order = task_order(problem, target)
    assert order == ["r0", "g0"]
    spans = {t: (min(p.start for n, p in schedule.ops.items() if problem.ops[n].task == t),
                 max(p.end for n, p in schedule.ops.items() if problem.ops[n].task == t))
             for t in order}
    assert spans["r0"][1] <= spans["g0"][0]


def test_a_kernel_reads_an_earlier_kernels_temp_tensor_as_input(
        chain: tuple[Problem, Target]) -> None:
    problem, _ = chain
    assert problem.tensors["H"].role == "temp"
    later, modes = restrict(problem, "g0")
    assert later.tensors["H"].role == "input"
    assert set(later.ops) == {n for n, op in problem.ops.items() if op.task == "g0"}
    assert set(later.tasks) == {"g0"}
    assert all(a in later.ops and b in later.ops for a, b in later.after)
    assert all(m == list(range(len(problem.ops[n].modes))) for n, m in modes.items())
    earlier, _ = restrict(problem, "r0")
    assert earlier.tensors["H"].role == "temp"
    assert cross_task_edges(problem)


def test_a_lane_share_drops_the_modes_it_cannot_run(pair: tuple[Problem, Target]) -> None:
    problem, _ = pair
    sub, modes = restrict(problem, "r0", lanes={"HVX": 1, "DMA": 1})
    for name, op in sub.ops.items():
        assert all(mode.lanes.get("HVX", 0) <= 1 for mode in op.modes)
        assert [problem.ops[name].modes[i] for i in modes[name]] == list(op.modes)


def test_concurrent_kernels_hold_disjoint_units_and_memory(
        compared: dict[str, Comparison], copies: tuple[Problem, Target]) -> None:
    problem, _ = copies
    path = compared["copies"].path("concurrent")
    assert "c0 + c1" in path.note  # the two copies did run side by side
    held: dict[str, set[tuple[str, int]]] = {"c0": set(), "c1": set()}
    for name, p in path.schedule.ops.items():
        held[problem.ops[name].task] |= {(k, u) for k, units in p.units.items() for u in units}
    assert not held["c0"] & held["c1"]
    ranges = {t: [(b.offset, b.offset + problem.buffers[n].size)
                  for n, b in path.schedule.buffers.items()
                  if n.startswith(f"{t}.")] for t in held}
    assert all(hi0 <= lo1 or hi1 <= lo0
               for lo0, hi0 in ranges["c0"] for lo1, hi1 in ranges["c1"])


def test_contention_cost_is_contended_minus_uncontended(
        compared: dict[str, Comparison]) -> None:
    path = compared["copies"].path("concurrent")
    # One wave of two DMA-bound copies, each drawing 40 of the 60 bytes/ns budget.
    assert path.uncontended_makespan is not None
    assert compared["copies"].contention_cost == path.contention > 0
    assert path.device_makespan == path.uncontended_makespan + path.contention
    assert path.violations == ("BUDGET",)


def test_path_four_keeps_path_three_when_the_search_does_worse(
        pair: tuple[Problem, Target]) -> None:
    def slow_tiles(problem: Problem, target: Target, **options: Any) -> Schedule:
        schedule = solve(problem, target, **options)
        if options["granularity"] != "tile":
            return schedule
        late = {n: replace(p, start=p.start + 10**6, end=p.end + 10**6)
                for n, p in schedule.ops.items()}
        later = {n: replace(b, alloc=b.alloc + 10**6, free=b.free + 10**6)
                 for n, b in schedule.buffers.items()}
        return replace(schedule, ops=late, buffers=later, makespan=schedule.makespan + 10**6)

    comparison = compare(*pair, solver=slow_tiles, options=OPTIONS)
    barrier, interleaved = comparison.paths[2:]
    assert interleaved.schedule is barrier.schedule
    assert interleaved.makespan == barrier.makespan
    assert "slower than fused-barrier" in interleaved.note


@pytest.mark.parametrize(("share", "speedup"), [(0.08, 1.087), (0.40, 1.667), (0.0, 1.0)])
def test_overlap_gain_upper_bound(share: float, speedup: float) -> None:
    assert speedup_bound(share) == pytest.approx(speedup, abs=5e-4)


def test_overlap_bound_is_path_three_over_lower_bound_plus_a_launch(
        compared: dict[str, Comparison]) -> None:
    comparison = compared["pair"]
    best = comparison.lower_bound + comparison.launch_ns
    assert comparison.overlap_bound == pytest.approx(
        comparison.path("fused-barrier").makespan / best)


def test_apportion_gives_everyone_a_unit_then_follows_weights() -> None:
    assert apportion(4, {"a": 1.0, "b": 1.0}) == {"a": 2, "b": 2}
    assert apportion(4, {"a": 3.0, "b": 1.0}) == {"a": 3, "b": 1}
    assert apportion(2, {"a": 1.0, "b": 5.0, "c": 1.0}, must={"a"}) == \
        {"a": 1, "b": 1, "c": 0}
    assert apportion(1, {"a": 1.0, "b": 1.0}, must={"a", "b"}) is None
