"""solve(): legal on every bundled example, reproducible, task barriers, cost-model agreement."""

from __future__ import annotations

import pytest

from models.evaluation import evaluate
from models.workload import example_names, load_problem_input
from schedsearch import solve
from schedsearch.api import Progress, solve_report
from tests.search.problems import gemm_problem, target, two_task_problem, verify


@pytest.mark.parametrize("name", example_names())
def test_every_bundled_example_solves_legally(name: str) -> None:
    problem, tgt = load_problem_input(name, None)
    schedule = solve(problem, tgt, time_limit=1, seed=0, workers=2)
    assert verify(schedule) == []


def test_same_seed_and_workers_give_the_same_schedule() -> None:
    problem, tgt = load_problem_input("rmsnorm-gemm-chain-v75", None)
    first = solve(problem, tgt, time_limit=1, seed=3, workers=2)
    second = solve(problem, tgt, time_limit=1, seed=3, workers=2)
    assert first.ops == second.ops
    assert first.buffers == second.buffers
    assert first.makespan == second.makespan


def test_task_granularity_never_overlaps_two_tasks() -> None:
    schedule = solve(two_task_problem(), target(capacity=8192), time_limit=1,
                     granularity="task")
    assert verify(schedule) == []
    spans = {}
    for name, placement in schedule.ops.items():
        task = schedule.problem.ops[name].task
        lo, hi = spans.get(task, (placement.start, placement.end))
        spans[task] = (min(lo, placement.start), max(hi, placement.end))
    (a_lo, a_hi), (b_lo, b_hi) = sorted(spans.values())
    assert a_hi <= b_lo


def test_reported_figures_equal_the_cost_model_and_progress_is_called() -> None:
    seen: list[Progress] = []
    report = solve_report(gemm_problem(), target(capacity=8192), time_limit=1,
                          progress=seen.append)
    figures = evaluate(report.schedule)
    assert figures.makespan == report.schedule.makespan
    assert report.peak_bytes == figures.peak_bytes
    assert seen and seen[0].stage == "constructive"
    assert seen[-1].makespan >= report.schedule.makespan
    meta = report.schedule.meta or {}
    assert meta["bound"] == report.bound <= report.schedule.makespan
    assert meta["seed"] == 0 and meta["workers"] == 2 and meta["granularity"] == "tile"


def test_peak_memory_secondary_keeps_the_makespan_and_never_raises_the_peak() -> None:
    problem, tgt = gemm_problem(blocks=2, k_steps=1), target(capacity=1 << 16)
    plain = solve(problem, tgt, time_limit=1)
    lean = solve(problem, tgt, time_limit=1, secondary="peak-memory")
    assert verify(lean) == []
    assert lean.makespan <= plain.makespan
    top = max(b.offset + problem.buffers[n].size for n, b in lean.buffers.items())
    assert top <= max(b.offset + problem.buffers[n].size for n, b in plain.buffers.items())
