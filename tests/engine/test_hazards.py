"""Precedence derived from accesses: RAW, WAW/WAR ordering, DDR RAW, cycles, barriers."""

from __future__ import annotations

import pytest

from models.errors import InputError
from models.formats import Access, Buffer, Mode, Op, Problem, Task, Tensor
from schedsearch import solve
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from tests.engine.problems import compute, gemm_problem, target, two_task_problem, verify


def _edges(problem: Problem, granularity: str = "tile") -> set[tuple[str, str]]:
    inst = build_instance(problem, target())
    dag = build_dag(inst, granularity)
    return {(inst.op_names[p], inst.op_names[s]) for p, s, _ in dag.edges
            if p < dag.n_ops and s < dag.n_ops}


def test_reader_follows_the_writer_of_its_value() -> None:
    edges = _edges(gemm_problem(blocks=1, k_steps=2))
    assert ("g.ldA0.0", "g.mm0.0") in edges
    assert ("g.mm0.0", "g.mm0.1") in edges  # acc@1 written by mm0.0, read by mm0.1
    assert ("g.mm0.1", "g.st0") in edges


def test_reader_ends_before_the_next_writer_of_its_bytes() -> None:
    ops = {"w1": compute("t", [], [("x", "v1")]), "r1": compute("t", [("x", "v1")], []),
           "w2": compute("t", [("x", "v1")], [("x", "v2")]),
           "r2": compute("t", [("x", "v2")], [])}
    problem = Problem("war", {}, {"t": Task("k")}, {"x": Buffer("M", 64)}, ops)
    edges = _edges(problem)
    assert {("w1", "r1"), ("w1", "w2"), ("r1", "w2"), ("w2", "r2")} <= edges


def test_ddr_read_follows_the_write_of_an_intersecting_box() -> None:
    tensors = {"T": Tensor((8,), "i8", "temp")}
    ops = {"wr": Op("t", (Mode(5),), writes=(Access(tensor="T", box=((0, 4),)),)),
           "wr2": Op("t", (Mode(5),), writes=(Access(tensor="T", box=((4, 8),)),)),
           "rd": Op("t", (Mode(5),), reads=(Access(tensor="T", box=((2, 3),)),))}
    edges = _edges(Problem("ddr", tensors, {"t": Task("k")}, {}, ops))
    assert ("wr", "rd") in edges
    assert ("wr2", "rd") not in edges


def test_read_of_a_value_nobody_writes_is_refused() -> None:
    ops = {"r": compute("t", [("x", "ghost")], [])}
    problem = Problem("stale", {}, {"t": Task("k")}, {"x": Buffer("M", 64)}, ops)
    with pytest.raises(InputError) as error:
        _edges(problem)
    assert error.value.rule == "STALE_READ"


def test_contradictory_orderings_are_a_cycle_naming_the_ops() -> None:
    ops = {"a": compute("t", [], []), "b": compute("t", [], [])}
    problem = Problem("cyc", {}, {"t": Task("k")}, {}, ops, after=(("a", "b"), ("b", "a")))
    with pytest.raises(InputError) as error:
        _edges(problem)
    assert error.value.rule == "CYCLE"
    assert "a" in error.value.message and "b" in error.value.message


def test_task_granularity_adds_one_barrier_between_consecutive_tasks() -> None:
    problem = two_task_problem()
    inst = build_instance(problem, target())
    dag = build_dag(inst, "task")
    assert dag.n_nodes == dag.n_ops + 1
    assert dag.task_order == ("g", "h")
    barrier = dag.n_ops
    before = {p for p, _ in dag.preds[barrier]}
    after = {s for s, _ in dag.succs[barrier]}
    assert {inst.op_task[i] for i in before} == {"g"} and len(before) == 14
    assert {inst.op_task[i] for i in after} == {"h"} and len(after) == 8


def test_unknown_granularity_is_refused() -> None:
    with pytest.raises(InputError):
        build_dag(build_instance(gemm_problem(), target()), "op")


def _overwrites(n_tasks: int, overwrites: list[tuple[int, int, int]],
                after: tuple[tuple[int, int], ...] = ()) -> Problem:
    """Tasks t0, t1, ...; per overwrite ``(p, w, r)`` one buffer that task ``p`` writes a
    value into, task ``r`` reads it from and task ``w`` writes another (unread) value
    over: with barriers, ``w`` runs before ``p`` or after ``r``. ``after`` orders tasks
    through one op each."""
    ops = {f"t{k}.op": compute(f"t{k}", [], []) for k in range(n_tasks)}
    for i, (p, w, r) in enumerate(overwrites):
        ops[f"t{p}.put{i}"] = compute(f"t{p}", [], [(f"x{i}", "v")])
        ops[f"t{w}.over{i}"] = compute(f"t{w}", [], [(f"x{i}", "u")])
        ops[f"t{r}.get{i}"] = compute(f"t{r}", [(f"x{i}", "v")], [])
    return Problem("overwrites", {}, {f"t{k}": Task("k") for k in range(n_tasks)},
                   {f"x{i}": Buffer("M", 64) for i in range(len(overwrites))}, ops,
                   after=tuple((f"t{a}.op", f"t{b}.op") for a, b in after))


def _task_order(problem: Problem) -> tuple[str, ...]:
    return build_dag(build_instance(problem, target()), "task").task_order


def test_task_order_runs_an_overwrite_after_the_reader_of_the_value_it_clobbers() -> None:
    problem = _overwrites(3, [(0, 1, 2)])
    assert _task_order(problem) == ("t0", "t2", "t1")
    assert verify(solve(problem, target(), time_limit=1, granularity="task")) == []


def test_task_order_runs_an_overwrite_first_when_it_must_precede_the_reader() -> None:
    assert _task_order(_overwrites(3, [(0, 1, 2)], after=((1, 2),))) == ("t1", "t0", "t2")


def test_task_order_that_puts_an_overwrite_inside_a_values_life_is_a_cycle() -> None:
    with pytest.raises(InputError) as error:
        _task_order(_overwrites(3, [(0, 1, 2)], after=((0, 1), (1, 2))))
    assert error.value.rule == "CYCLE"
    assert "granularity=task" in error.value.message
    assert all(f"t{k}" in error.value.message for k in range(3))


def test_task_order_passes_over_a_ready_task_that_leads_to_a_dead_end() -> None:
    """Found by random planted instances, shrunk: t2 is ready first, but once it runs,
    t4 must follow t1 (its overwrite of t2's value for t1) and precede t3 (t4 -> t0 ->
    t6, and t4 may not fall between t3 and t6), while t3 precedes t1: no order is left.
    Starting with t3 works."""
    problem = _overwrites(7, [(3, 5, 1), (2, 6, 0), (3, 4, 6), (2, 4, 1)], after=((4, 0),))
    order = _task_order(problem)
    assert order[0] != "t2"
    assert verify(solve(problem, target(), time_limit=1, granularity="task")) == []


def test_task_granularity_orders_writers_within_a_task_against_a_later_reader() -> None:
    """t0 writes v and then u over it in problem order, t1 reads v: with barriers u must
    be written first, whatever the problem order says."""
    ops = {"t0.put": compute("t0", [], [("x", "v")]),
           "t0.over": compute("t0", [], [("x", "u")]),
           "t1.get": compute("t1", [("x", "v")], [])}
    problem = Problem("within", {}, {"t0": Task("k"), "t1": Task("k")},
                      {"x": Buffer("M", 64)}, ops)
    edges = _edges(problem, "task")
    assert ("t0.over", "t0.put") in edges and ("t0.put", "t1.get") in edges
    assert verify(solve(problem, target(), time_limit=1, granularity="task")) == []


def test_task_granularity_names_a_cycle_only_whole_tasks_have_and_suggests_tile() -> None:
    """t1.put writes v, t0.get reads it, t1.over overwrites it after reading it: whole
    tasks cannot fit t0.get between t1's two ops, but tiles can."""
    ops = {"t0.get": compute("t0", [("x", "v")], []),
           "t1.put": compute("t1", [], [("x", "v")]),
           "t1.over": compute("t1", [("x", "v")], [("x", "u")])}
    problem = Problem("whole", {}, {"t0": Task("k"), "t1": Task("k")},
                      {"x": Buffer("M", 64)}, ops)
    with pytest.raises(InputError) as error:
        _edges(problem, "task")
    message = error.value.message
    assert error.value.rule == "CYCLE" and "granularity=task" in message
    assert "tasks t1, t0 cannot each run whole" in message
    assert "value 'v' of buffer 'x'" in message and "--granularity tile" in message
    assert verify(solve(problem, target(), time_limit=1, granularity="tile")) == []


def test_task_granularity_does_not_suggest_tile_for_a_cycle_tiles_have_too() -> None:
    ops = {"a": compute("t0", [], []), "b": compute("t0", [], []),
           "c": compute("t1", [], [])}
    problem = Problem("cyc", {}, {"t0": Task("k"), "t1": Task("k")}, {}, ops,
                      after=(("a", "b"), ("b", "a")))
    with pytest.raises(InputError) as error:
        _edges(problem, "task")
    assert error.value.rule == "CYCLE" and "granularity=task" in error.value.message
    assert "tile" not in error.value.message
