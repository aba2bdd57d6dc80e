"""The memory-aware list scheduler: legal on tight memories, never deadlocked, clear
errors when nothing fits."""

from __future__ import annotations

import pytest

from models.errors import InputError
from models.formats import Buffer, Problem, Task
from schedsearch.constructive import _Pass, breadth_order, construct, depth_order, tails
from schedsearch.hazards import build_dag
from schedsearch.instance import build_instance
from schedsearch.solution import Solution, to_schedule
from tests.search.problems import compute, gemm_problem, target, verify


def _construct(problem: Problem, capacity: int, alignment: int = 64) -> tuple[Solution, list[str]]:
    inst = build_instance(problem, target(capacity=capacity, alignment=alignment))
    solution = construct(inst, build_dag(inst))
    return solution, verify(to_schedule(inst, solution, {}))


def test_roomy_memory_gives_a_legal_schedule() -> None:
    _, violations = _construct(gemm_problem(blocks=3, k_steps=2), capacity=1 << 20)
    assert violations == []


def test_memory_for_exactly_one_block_still_gives_a_legal_schedule() -> None:
    # 3 blocks x 2 steps: 12 operand tiles + 3 accumulators; memory holds 3 tiles.
    _, violations = _construct(gemm_problem(blocks=3, k_steps=2, tile=1024), capacity=3072)
    assert violations == []


def test_loading_in_critical_path_order_would_deadlock_but_construct_does_not() -> None:
    """With no guard and an unbounded window, every load is issued first (loads head the
    longest paths), memory fills with A/B tiles whose accumulator never fits, and the
    pass stalls; ``construct`` must still return a legal schedule (its later passes
    issue a depth-first sequence in order)."""
    problem = gemm_problem(blocks=3, k_steps=2, tile=1024)
    inst = build_instance(problem, target(capacity=4096))
    dag = build_dag(inst)
    tail = tails(inst, dag)
    unguarded = _Pass(inst, dag, breadth_order(inst, dag, tail), 10_000, False, tail).run()
    assert not isinstance(unguarded, Solution)
    in_order = _Pass(inst, dag, depth_order(dag, tail), 0, False, tail).run()
    assert isinstance(in_order, Solution)
    solution = construct(inst, dag)
    assert verify(to_schedule(inst, solution, {})) == []


def test_offsets_respect_the_memory_alignment() -> None:
    solution, violations = _construct(gemm_problem(blocks=2, k_steps=1, tile=100),
                                      capacity=1024, alignment=128)
    assert violations == []
    assert all(offset % 128 == 0 for offset in solution.offsets)


def test_an_op_whose_operands_cannot_fit_together_is_refused_naming_it() -> None:
    ops = {"w": compute("t", [], [("x", "1"), ("y", "1")])}
    problem = Problem("big", {}, {"t": Task("k")}, {"x": Buffer("M", 3000),
                                                     "y": Buffer("M", 3000)}, ops)
    from schedsearch.api import solve

    with pytest.raises(InputError) as error:
        solve(problem, target(capacity=4096), time_limit=1)
    assert error.value.rule == "FIT"
    assert "w" in error.value.path


def test_a_buffer_larger_than_its_memory_is_refused_naming_it() -> None:
    ops = {"w": compute("t", [], [("huge", "1")])}
    problem = Problem("big", {}, {"t": Task("k")}, {"huge": Buffer("M", 5000)}, ops)
    from schedsearch.api import solve

    with pytest.raises(InputError) as error:
        solve(problem, target(capacity=4096), time_limit=1)
    assert error.value.rule == "FIT"
    assert "huge" in error.value.path
