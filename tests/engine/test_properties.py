"""Property: every schedule solve() returns for a random feasible problem is legal."""

from __future__ import annotations

from hypothesis import given, settings

from models.formats import Problem, Target
from schedsearch import solve
from tests.engine.problems import feasible_problems, verify
from tests.fuzz._budget import examples


@settings(max_examples=examples(0.6))
@given(feasible_problems())
def test_solve_returns_a_legal_schedule(case: tuple[Problem, Target]) -> None:
    problem, tgt = case
    schedule = solve(problem, tgt, time_limit=0.2, seed=0, workers=1)
    violations = verify(schedule)
    assert violations == [], (problem, schedule, violations)
