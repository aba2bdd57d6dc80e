"""The whole-problem CP-SAT model: the hint is feasible, the answer never worse."""

from __future__ import annotations

import pytest
from ortools.sat.python import cp_model

from schedsearch.engine.cpsat.model import Built, build, solve_built, solve_each, whole_problem
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.solution import to_schedule
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import gemm_problem, target, verify


def test_cpsat_improves_or_equals_the_warm_start_and_stays_legal() -> None:
    inst = build_instance(gemm_problem(blocks=2, k_steps=2, tile=1024),
                          target(capacity=4096))
    dag = build_dag(inst)
    warm = construct(inst, dag)
    inc = Incumbent.of(inst, dag, warm)
    built = build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan)
    outcome = solve_built(built, TimeBudget.start(30), work=0.5, seed=0, workers=2)
    assert outcome.solution is not None
    assert outcome.solution.makespan(inst) <= warm.makespan(inst)
    assert outcome.bound is not None and outcome.bound <= outcome.solution.makespan(inst)
    assert verify(to_schedule(inst, outcome.solution, {})) == []


def test_tiny_problem_is_solved_to_optimality() -> None:
    inst = build_instance(gemm_problem(blocks=1, k_steps=1), target(capacity=1 << 16))
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, construct(inst, dag))
    outcome = solve_built(build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan),
                          TimeBudget.start(30), work=1.0, seed=0, workers=1)
    assert outcome.status == "OPTIMAL"
    # ldA and ldB in parallel (fast + slow mode fit the budget), mm, store.
    assert outcome.objective == 20 + 20 + 10


def test_solve_each_hands_its_linearization_level_to_every_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    levels: list[int] = []
    real = cp_model.CpSolver.solve

    def solve(self: cp_model.CpSolver, *args, **kwargs):  # type: ignore[no-untyped-def]
        levels.append(self.parameters.linearization_level)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cp_model.CpSolver, "solve", solve)
    inst = build_instance(gemm_problem(blocks=1, k_steps=1), target(capacity=1 << 16))
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, construct(inst, dag))
    built = [build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan) for _ in (0, 1)]
    outcomes = solve_each(built, TimeBudget.start(30), work=1.0, seeds=[0, 1],
                          linearization=0)
    assert levels == [0, 0]
    assert [outcome.objective for outcome in outcomes] == [50, 50]
    solve_each(built[:1], TimeBudget.start(30), work=1.0, seeds=[0])
    assert levels[-1] == cp_model.CpSolver().parameters.linearization_level  # the default


@pytest.mark.slow
def test_a_two_member_portfolio_is_never_worse_than_its_first_member() -> None:
    """Member 0 of every portfolio is the same run, so adding workers can only help."""
    inst = build_instance(gemm_problem(blocks=3, k_steps=2, tile=1024), target(capacity=5120))
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, construct(inst, dag))
    objectives = []
    for workers in (1, 2):
        built = build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan)
        outcome = solve_built(built, TimeBudget.start(30), work=0.3, seed=5, workers=workers)
        assert outcome.solution is not None and not outcome.cut
        objectives.append(outcome.objective)
    assert objectives[1] <= objectives[0]


def test_the_relaxed_model_keeps_memory_as_a_cumulative_only() -> None:
    inst = build_instance(gemm_problem(blocks=2, k_steps=2, tile=1024), target(capacity=4096))
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, construct(inst, dag))
    exact = build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan)
    relaxed = build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan, offsets=False)
    def count(built, kind: str) -> int:
        return sum(getattr(c, f"has_{kind}")() for c in built.model.proto.constraints)

    assert count(exact, "no_overlap_2d") == 1 and count(relaxed, "no_overlap_2d") == 0
    assert count(relaxed, "cumulative") == count(exact, "cumulative") >= 1


def test_zero_duration_ops_and_barriers_give_a_valid_model() -> None:
    # Regression: a zero-duration op's end is its start variable and a barrier has one
    # variable for both; hinting it twice made CP-SAT reject every such model
    # (MODEL_INVALID), silently leaving the constructive schedule (found on PSPLIB).
    from models.formats import Mode, Op, Problem, Task
    from schedsearch.engine.search import solve

    ops = {"source": Op("a", (Mode(0),)), "work": Op("a", (Mode(5, {"DMA": 1}),)),
           "other": Op("b", (Mode(3, {"DMA": 1}),)), "sink": Op("b", (Mode(0),))}
    problem = Problem("zero", {}, {"a": Task("x"), "b": Task("y")}, {}, ops,
                      (("source", "work"), ("other", "sink")))
    for granularity in ("tile", "task"):
        schedule = solve(problem, target(), time_limit=2, granularity=granularity)
        assert schedule.meta is not None
        assert schedule.meta["status"] == "OPTIMAL", schedule.meta
        assert verify(schedule) == []


def _failing_first(monkeypatch: pytest.MonkeyPatch, failures: int) -> list[bool]:
    """CpSolver.solve raises OR-Tools' internal IndexError on its first ``failures``
    calls; the list records, per call, whether the model carried hints."""
    calls: list[bool] = []
    real = cp_model.CpSolver.solve

    def solve(self: cp_model.CpSolver, model: cp_model.CpModel, *args: object) -> object:
        calls.append(bool(model.proto.solution_hint.vars))
        if len(calls) <= failures:
            raise IndexError("absl::btree_map::at")
        return real(self, model, *args)

    monkeypatch.setattr(cp_model.CpSolver, "solve", solve)
    return calls


def _tiny_built() -> Built:
    inst = build_instance(gemm_problem(blocks=1, k_steps=1), target(capacity=1 << 16))
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, construct(inst, dag))
    return build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan)


def test_an_internal_solver_error_is_retried_without_hints(
        monkeypatch: pytest.MonkeyPatch) -> None:
    built = _tiny_built()
    calls = _failing_first(monkeypatch, 1)
    outcome = solve_built(built, TimeBudget.start(30), work=1.0, seed=0, workers=1)
    assert calls == [True, False]
    assert outcome.status == "OPTIMAL" and outcome.objective == 20 + 20 + 10


def test_an_internal_solver_error_twice_is_no_solution_not_a_traceback(
        monkeypatch: pytest.MonkeyPatch) -> None:
    built = _tiny_built()
    _failing_first(monkeypatch, 2)
    outcome = solve_built(built, TimeBudget.start(30), work=1.0, seed=0, workers=1)
    assert outcome.solution is None and outcome.status == "SOLVER_ERROR"


def test_a_run_asked_to_keep_its_answers_returns_the_earlier_ones_too() -> None:
    """From a serial incumbent (every op after the last), CP-SAT improves in steps; with
    ``keep`` the outcome carries the earlier answers, oldest first, each no shorter than
    the next and than the final one."""
    from schedsearch.engine.cpsat.model import KEPT_SOLUTIONS
    from schedsearch.engine.solution import Solution

    inst = build_instance(gemm_problem(blocks=2, k_steps=2, tile=1024), target(capacity=4096))
    dag = build_dag(inst)
    starts, now = [0] * inst.n_ops, 0
    for v in dag.topo:
        if v < inst.n_ops:
            starts[v], now = now, now + inst.modes[v][0].duration + 1
    serial = Solution((0,) * inst.n_ops, tuple(starts), (0,) * inst.n_buffers)
    inc = Incumbent.of(inst, dag, serial)
    built = build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan, offsets=False)
    kept = solve_built(built, TimeBudget.start(30), work=0.5, seed=0, workers=1, keep=True)
    plain = solve_built(built, TimeBudget.start(30), work=0.5, seed=0, workers=1)
    assert kept.solution == plain.solution and not plain.earlier
    assert 0 < len(kept.earlier) <= KEPT_SOLUTIONS
    spans = [answer.makespan(inst) for answer in (*kept.earlier, kept.solution)]
    assert spans == sorted(spans, reverse=True)
