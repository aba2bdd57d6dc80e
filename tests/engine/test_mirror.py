"""Time reversal of memory-free problems (schedsearch.engine.mirror).

The independent checker judges a mirrored schedule against the problem with every
``after`` edge reversed, built from scratch: so the mirror is checked by the problem's
own rules, not by the code that mirrors.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.formats import Problem
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.justify import justified
from schedsearch.engine.mirror import mirrored, mirrored_dag
from schedsearch.engine.solution import to_schedule
from tests.engine.problems import gemm_problem, target, verify
from tests.engine.test_justify import random_rcpsp, setup, work
from tests.fuzz._budget import examples


def reversed_problem(problem: Problem) -> Problem:
    return replace(problem, after=tuple((b, a) for a, b in problem.after))


@pytest.mark.slow
@given(seed=st.integers(0, 10_000))
@settings(max_examples=examples(1.0), deadline=None)
def test_a_schedule_run_backwards_is_legal_for_the_problem_with_reversed_dependencies(
        seed: int) -> None:
    problem, tgt = random_rcpsp(seed)
    inst, dag = setup(problem, tgt)
    forward = justified(inst, dag, work(0.05), seed)
    assert forward is not None
    backward_inst = build_instance(reversed_problem(problem), tgt)
    assert mirrored_dag(dag).edges == build_dag(backward_inst).edges
    backward = mirrored(inst, forward)
    assert verify(to_schedule(backward_inst, backward, {})) == []
    assert backward.makespan(inst) == forward.makespan(inst) - min(forward.starts)
    assert min(backward.starts) == 0
    assert mirrored(inst, backward) == replace(
        forward, starts=tuple(s - min(forward.starts) for s in forward.starts))


def test_the_mirrored_dag_swaps_predecessors_and_successors_and_keeps_lags() -> None:
    problem, tgt = random_rcpsp(11, n=10)
    inst, dag = setup(problem, tgt, "task")
    flipped = mirrored_dag(dag)
    assert flipped.preds == dag.succs and flipped.succs == dag.preds
    assert sorted((s, p, lag) for p, s, lag in flipped.edges) == sorted(dag.edges)
    position = {v: k for k, v in enumerate(flipped.topo)}
    assert all(position[p] < position[s] for p, s, _ in flipped.edges)
    assert mirrored_dag(flipped) == dag


def test_a_problem_with_buffers_is_not_mirrored() -> None:
    inst = build_instance(gemm_problem(), target())
    with pytest.raises(ValueError, match="buffers"):
        mirrored(inst, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("reproducible", [True, False])
def test_a_reproducible_mirrored_run_gets_a_share_of_the_work_and_the_stages_deadline(
        monkeypatch: pytest.MonkeyPatch, reproducible: bool) -> None:
    """With a reproducible budget the work ends the mirrored run, so its wall-clock net is
    the whole stage's (a share of it cut runs on a loaded machine, which then did not
    repeat); a budget that uses its time shares the wall clock as before."""
    from schedsearch.engine import whole_model as module
    from schedsearch.engine.portfolio import list_schedule
    from schedsearch.engine.timebudget import TimeBudget

    problem, tgt = random_rcpsp(5, n=12)
    inst, dag = setup(problem, tgt)
    start = list_schedule(inst, dag, TimeBudget.start(5.0))
    given: list[tuple[float, float]] = []

    def whole_model(inst_, dag_, solution, solver, bound, budget, *rest):  # type: ignore[no-untyped-def]
        given.append((budget.work, budget.deadline))
        return solution, {"solver": solver, "status": "FEASIBLE"}, None

    monkeypatch.setattr(module, "whole_model", whole_model)
    stage = TimeBudget.start(4.0, wall=100.0, reproducible=reproducible)
    module.whole_model_both_ways(inst, dag, start, "constructive", 3, stage, 0, 2,
                                 lambda *_: None, 0.5)
    (work, deadline), _ = given
    if reproducible:
        assert work == pytest.approx(2.0) and deadline == pytest.approx(stage.deadline, abs=1.0)
    else:
        assert deadline < stage.deadline - 40.0  # about half of the wall time left
