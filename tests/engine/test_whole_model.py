"""The whole model on memory-free problems with two workers or more: the portfolio's members
search the two directions side by side (``side_by_side`` in ``engine/whole_model.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from schedsearch.engine import whole_model as whole_model_module
from schedsearch.engine.cpsat.model import Outcome, portfolio_seeds
from schedsearch.engine.mirror import mirrored
from schedsearch.engine.params import DEFAULT
from schedsearch.engine.portfolio import list_schedule
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.test_justify import random_rcpsp, setup


def shortened(inst: Any, solution: Solution, by: int) -> Solution:
    """A stand-in answer: ``solution`` with every start moved ``by`` earlier, not before 0
    (so it mirrors back; legality does not matter to the logic under test)."""
    return Solution(modes=solution.modes, starts=tuple(max(0, s - by) for s in solution.starts),
                    offsets=solution.offsets)


def fake_runs(monkeypatch: pytest.MonkeyPatch, start: Solution,
              answers: dict[bool, tuple[str, int, int]]) -> list[dict[str, Any]]:
    """Replace ``solve_each``: each run answers by its direction (mirrored: hinted with
    other than ``start``) with ``(status, how much shorter than its hint, bound)``; the
    calls are recorded."""
    calls: list[dict[str, Any]] = []

    def solve_each(builts, budget, *, work, seeds, on_objective=None, linearization=None):  # type: ignore[no-untyped-def]
        calls.append({"hints": [b.inc.solution for b in builts], "seeds": seeds,
                      "work": work, "linearization": linearization})
        outcomes = []
        for built in builts:
            flip = built.inc.solution != start
            status, by, bound = answers[flip]
            answer = shortened(built.inst, built.inc.solution, by)
            outcomes.append(Outcome(status=status, solution=answer,
                                    objective=answer.makespan(built.inst), bound=bound,
                                    wall_s=0.0, cut=False))
        return outcomes

    monkeypatch.setattr(whole_model_module, "solve_each", solve_each)
    return calls


def run(monkeypatch: pytest.MonkeyPatch, answers: dict[bool, tuple[str, int, int]],
        workers: int = 2) -> tuple[Any, Solution, Solution, dict[str, Any], int | None,
                                   list[dict[str, Any]]]:
    problem, tgt = random_rcpsp(5, n=12)
    inst, dag = setup(problem, tgt)
    start = list_schedule(inst, dag, TimeBudget.start(5.0))
    calls = fake_runs(monkeypatch, start, answers)
    solution, meta, bound = whole_model_module.whole_model_both_ways(
        inst, dag, start, "constructive", 3, TimeBudget.start(5.0), 0, workers,
        lambda *_: None, DEFAULT.mirrored_share)
    return inst, start, solution, meta, bound, calls


def test_the_members_alternate_directions_from_the_mirrored_one_on_the_whole_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    inst, start, _, _, _, calls = run(monkeypatch, {True: ("FEASIBLE", 0, 5),
                                                    False: ("FEASIBLE", 0, 5)}, workers=3)
    (call,) = calls
    assert call["hints"] == [mirrored(inst, start), start, mirrored(inst, start)]
    assert call["seeds"] == portfolio_seeds(0, 3) and call["work"] == 5.0


def test_the_side_by_side_runs_search_without_the_lp_relaxation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    *_, calls = run(monkeypatch, {True: ("FEASIBLE", 0, 5), False: ("FEASIBLE", 0, 5)})
    assert [call["linearization"] for call in calls] == [0]


@pytest.mark.parametrize("shorter", [True, False])
def test_the_shorter_direction_wins_and_comes_back_forward(
        monkeypatch: pytest.MonkeyPatch, shorter: bool) -> None:
    """``shorter``: the mirrored run's answer is the shorter one."""
    answers = {shorter: ("FEASIBLE", 2, 4), not shorter: ("FEASIBLE", 1, 6)}
    inst, start, solution, meta, bound, _ = run(monkeypatch, answers)
    expected = shortened(inst, mirrored(inst, start), 2)
    assert solution == (mirrored(inst, expected) if shorter else shortened(inst, start, 2))
    assert solution.makespan(inst) == start.makespan(inst) - 2
    assert meta == {"solver": "cp-sat", "status": "FEASIBLE", "cpsat_status": "FEASIBLE"}
    assert bound == 6  # the better bound, whichever direction proved it


def test_a_tie_goes_to_the_mirrored_member(monkeypatch: pytest.MonkeyPatch) -> None:
    inst, start, solution, *_ = run(monkeypatch, {True: ("FEASIBLE", 1, 4),
                                                  False: ("FEASIBLE", 1, 4)})
    assert solution == mirrored(inst, shortened(inst, mirrored(inst, start), 1))


def test_a_proof_in_either_direction_holds_for_the_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, _, meta, _, _ = run(monkeypatch, {True: ("FEASIBLE", 1, 4),
                                            False: ("OPTIMAL", 1, 4)})
    assert meta["status"] == meta["cpsat_status"] == "OPTIMAL"


@pytest.mark.parametrize(("workers", "reproducible"), [(1, True), (2, False)])
def test_one_worker_or_a_timed_search_keeps_the_halves_one_after_another(
        monkeypatch: pytest.MonkeyPatch, workers: int, reproducible: bool) -> None:
    """The side-by-side portfolio needs two workers, and was measured only on a
    reproducible budget; otherwise the mirrored half runs, then the forward one."""
    problem, tgt = random_rcpsp(5, n=12)
    inst, dag = setup(problem, tgt)
    start = list_schedule(inst, dag, TimeBudget.start(5.0))
    calls = fake_runs(monkeypatch, start, {})
    seen: list[bool] = []

    def whole_model(inst_, dag_, solution, *rest):  # type: ignore[no-untyped-def]
        seen.append(dag_.edges != dag.edges)
        return solution, {"solver": "cp-sat", "status": "FEASIBLE"}, 5

    monkeypatch.setattr(whole_model_module, "whole_model", whole_model)
    budget = TimeBudget.start(5.0, reproducible=reproducible)
    whole_model_module.whole_model_both_ways(inst, dag, start, "constructive", 3, budget, 0,
                                             workers, lambda *_: None, DEFAULT.mirrored_share)
    assert seen == [True, False] and calls == []
