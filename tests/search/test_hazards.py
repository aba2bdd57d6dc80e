"""Precedence derived from accesses: RAW, WAW/WAR ordering, DDR RAW, cycles, barriers."""

from __future__ import annotations

import pytest

from models.errors import InputError
from models.formats import Access, Buffer, Mode, Op, Problem, Task, Tensor
from schedsearch.hazards import build_dag
from schedsearch.instance import build_instance
from tests.search.problems import compute, gemm_problem, target, two_task_problem


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
