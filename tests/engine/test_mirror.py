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
