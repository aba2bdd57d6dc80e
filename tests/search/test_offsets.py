"""The placement engine inside the search: addresses for fixed times, or a refusal."""

from __future__ import annotations

from schedsearch.budget import Budget
from schedsearch.constructive import construct
from schedsearch.cpsat.model import build, solve_built, whole_problem
from schedsearch.cpsat.variables import Incumbent
from schedsearch.hazards import build_dag
from schedsearch.instance import build_instance
from schedsearch.lns import improve
from schedsearch.offsets import place_offsets
from schedsearch.solution import Solution, to_schedule
from tests.search.problems import gemm_problem, target, verify


def test_a_relaxed_answer_placed_by_the_engine_is_legal() -> None:
    inst = build_instance(gemm_problem(blocks=3, k_steps=2, tile=1024), target(capacity=6144))
    dag = build_dag(inst)
    warm = construct(inst, dag)
    inc = Incumbent.of(inst, dag, warm)
    built = build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan, offsets=False)
    outcome = solve_built(built, Budget.start(30), work=0.5, seed=0, workers=1)
    assert outcome.solution is not None
    placed = place_offsets(inst, outcome.solution, warm, Budget.start(30), seed=0)
    assert placed is not None
    assert placed.starts == outcome.solution.starts
    assert verify(to_schedule(inst, placed, {})) == []


def test_times_whose_buffers_cannot_fit_are_refused() -> None:
    """Start every op at once: all 15 tiles live together in room for 4."""
    inst = build_instance(gemm_problem(blocks=3, k_steps=2, tile=1024), target(capacity=4096))
    warm = construct(inst, build_dag(inst))
    crowded = Solution(warm.modes, (0,) * inst.n_ops, warm.offsets)
    assert place_offsets(inst, crowded, warm, Budget.start(30), seed=0) is None


def test_lns_with_the_engine_is_legal_and_reproducible() -> None:
    inst = build_instance(gemm_problem(blocks=6, k_steps=2, tile=1024), target(capacity=6144))
    dag = build_dag(inst)
    warm = construct(inst, dag)
    runs = [improve(inst, dag, warm, Budget.start(0.5, wall=60), seed=2, workers=2, lower=0,
                    placement=True) for _ in range(2)]
    assert runs[0].solution == runs[1].solution
    assert runs[0].solution.makespan(inst) <= warm.makespan(inst)
    assert verify(to_schedule(inst, runs[0].solution, {})) == []
