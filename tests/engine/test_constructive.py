"""The memory-aware list scheduler: legal on tight memories, never deadlocked, clear
errors when nothing fits."""

from __future__ import annotations

import time

import pytest

from models.errors import InputError
from models.formats import Access, Buffer, Mode, Op, Problem, Task
from schedsearch.engine import fallback
from schedsearch.engine.fallback import construct, exact_fallback
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import breadth_order, depth_order, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import list_schedule
from schedsearch.engine.serial import SerialPass, Stall
from schedsearch.engine.solution import Solution, to_schedule
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import compute, gemm_problem, packing_problem, target, verify


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
    unguarded = SerialPass(inst, dag, breadth_order(inst, dag, tail), tail,
                           PassSpec(ModePolicy.ALL, OpOrder.BREADTH, 10_000, guarded=False)).run()
    assert not isinstance(unguarded, Solution)
    in_order = SerialPass(inst, dag, depth_order(dag, tail), tail,
                          PassSpec(ModePolicy.ALL, OpOrder.DEPTH, 0, guarded=False)).run()
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
    from schedsearch.engine.search import solve

    with pytest.raises(InputError) as error:
        solve(problem, target(capacity=4096), time_limit=1)
    assert error.value.rule == "FIT"
    assert "w" in error.value.path


def test_a_buffer_larger_than_its_memory_is_refused_naming_it() -> None:
    ops = {"w": compute("t", [], [("huge", "1")])}
    problem = Problem("big", {}, {"t": Task("k")}, {"huge": Buffer("M", 5000)}, ops)
    from schedsearch.engine.search import solve

    with pytest.raises(InputError) as error:
        solve(problem, target(capacity=4096), time_limit=1)
    assert error.value.rule == "FIT"
    assert "huge" in error.value.path


def test_a_packing_every_greedy_pass_misses_is_found_by_the_exact_last_resort() -> None:
    inst = build_instance(packing_problem(), target(capacity=7, alignment=2))
    assert isinstance(list_schedule(inst, build_dag(inst)), Stall)
    solution = construct(inst, build_dag(inst), budget=TimeBudget.start(10))
    assert verify(to_schedule(inst, solution, {})) == []
    assert solution.offsets[inst.buffer_index["x"]] == 4


def test_without_a_budget_a_stall_is_the_answer_and_no_exact_search_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*_: object) -> Solution:
        raise AssertionError("the exact search ran without a budget")

    monkeypatch.setattr(fallback, "exact_fallback", never)
    inst = build_instance(packing_problem(), target(capacity=7, alignment=2))
    with pytest.raises(InputError) as error:
        construct(inst, build_dag(inst))
    assert error.value.rule == "FIT" and "no time was given" in error.value.message


def _crossed_lifetimes() -> Problem:
    """``x`` lives from ``p`` to ``r``, ``y`` from ``q`` to ``s``; ``q`` before ``r`` and
    ``p`` before ``s`` make the two lifetimes overlap in every schedule: 4 bytes at once."""
    ops = {"p": compute("t", [], [("x", "x1")]), "q": compute("t", [], [("y", "y1")]),
           "r": compute("t", [("x", "x1")], []), "s": compute("t", [("y", "y1")], [])}
    return Problem("crossed", {}, {"t": Task("k")}, {"x": Buffer("M", 2), "y": Buffer("M", 2)},
                   ops, (("q", "r"), ("p", "s")))


def test_the_last_resort_proves_a_problem_infeasible() -> None:
    inst = build_instance(_crossed_lifetimes(), target(capacity=3, alignment=1))
    with pytest.raises(InputError) as error:
        construct(inst, build_dag(inst), budget=TimeBudget.start(10))
    assert error.value.rule == "FIT"
    assert "CP-SAT proved that no schedule" in error.value.message


def test_the_last_resort_is_not_tried_above_the_size_limit() -> None:
    inst = build_instance(_crossed_lifetimes(), target(capacity=3, alignment=1))
    dag = build_dag(inst)
    stall = list_schedule(inst, dag)
    assert isinstance(stall, Stall)
    with pytest.raises(InputError) as error:
        exact_fallback(inst, dag, stall, "<problem>", TimeBudget.start(10), 0, 1, max_ops=3)
    assert error.value.rule == "FIT" and "not tried above 3 ops" in error.value.message


def test_the_last_resort_out_of_time_says_so_and_marks_the_cut() -> None:
    """Past the deadline CP-SAT gets a millisecond: not enough to read 28 ops' model."""
    inst = build_instance(gemm_problem(blocks=4, k_steps=2), target(capacity=6144))
    budget = TimeBudget(work=0.0, deadline=time.perf_counter() - 1)
    with pytest.raises(InputError) as error:
        exact_fallback(inst, build_dag(inst), Stall(0, inst.op_names[0], "resources"),
                       "<problem>", budget, 0, 1)
    assert error.value.rule == "FIT" and "ran out of time" in error.value.message
    assert budget.cut


def test_the_last_resort_keeps_the_tick_zero_duration_writers_need() -> None:
    """Two instantaneous writes of one buffer must end at different times (lag 1): the
    durations sum to 0, the safe horizon is 1, and the last resort finds that schedule."""
    writer = [Op("t", (Mode(0),), writes=(Access(buffer="x", value=v),)) for v in "12"]
    problem = Problem("zero", {}, {"t": Task("k")}, {"x": Buffer("M", 1)},
                      {"w1": writer[0], "w2": writer[1]})
    inst = build_instance(problem, target(capacity=1, alignment=1))
    found = exact_fallback(inst, build_dag(inst), Stall(0, "w1", "resources"), "<problem>",
                           TimeBudget.start(5), 0, 1)
    assert found.makespan(inst) == 1
    assert verify(to_schedule(inst, found, {})) == []
