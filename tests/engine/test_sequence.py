"""The tasks one after another as a candidate: optional, so a task that fails alone, an
interrupt or too little time give no candidate, never an error."""

from __future__ import annotations

import time

import pytest

from models.errors import InputError
from models.formats import Problem, Schedule, Target
from schedsearch.engine import interrupt
from schedsearch.engine.instance import build_instance
from schedsearch.engine.result import NoSchedule, SolveStatus
from schedsearch.engine.search import solve_report
from schedsearch.engine.sequence import TaskSolver, kernels_in_sequence
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import gemm_problem, target, two_task_problem


def _failing_on(task: str, error: Exception) -> TaskSolver:
    def solve_task(sub: Problem, t: Target, seconds: float, wall: float,
                   reproducible: bool) -> Schedule:
        if task in sub.tasks:
            raise error
        return solve_report(sub, t, time_limit=seconds, workers=1).schedule
    return solve_task


@pytest.mark.parametrize("error", [
    NoSchedule(SolveStatus.NO_SOLUTION_IN_TIME, InputError("no time", rule="FIT")),
    interrupt.Interrupted()])
def test_a_task_that_gets_no_schedule_alone_gives_no_candidate(error: Exception) -> None:
    inst = build_instance(two_task_problem(), target(capacity=4096))
    assert kernels_in_sequence(inst, TimeBudget.start(2.0), _failing_on("h", error)) is None


def test_one_task_or_a_spent_budget_gives_no_candidate() -> None:
    single = build_instance(gemm_problem(blocks=2, k_steps=1), target(capacity=4096))
    never = _failing_on("nothing", RuntimeError("not called"))
    assert kernels_in_sequence(single, TimeBudget.start(2.0), never) is None
    spent = TimeBudget.start(1.0)
    spent.charge(2.0)
    two = build_instance(two_task_problem(), target(capacity=4096))
    assert kernels_in_sequence(two, spent, never) is None



@pytest.mark.parametrize("reproducible", [True, False])
def test_a_task_gets_its_share_of_the_ops_but_at_least_the_least_time(
        reproducible: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sliver of a second is too little for CP-SAT to prove even a tiny optimum, and a
    task that overruns its share must not leave the next one nothing. The clock stands
    still, so the wall time left is the limit however busy the machine is."""
    from schedsearch.engine.sequence import MIN_TASK_SECONDS

    still = time.perf_counter()
    monkeypatch.setattr(time, "perf_counter", lambda: still)

    given: list[float] = []

    def solve_task(sub: Problem, t: Target, seconds: float, wall: float,
                   repro: bool) -> Schedule:
        given.append(seconds)
        return solve_report(sub, t, time_limit=0.2, workers=1).schedule

    inst = build_instance(two_task_problem(), target(capacity=4096))
    first = inst.op_task[0]  # the producer, solved first
    share = inst.op_task.count(first) / inst.n_ops
    for limit, expected in ((20 * MIN_TASK_SECONDS, 20 * MIN_TASK_SECONDS * share),
                            (2.5 * MIN_TASK_SECONDS, 1.5 * MIN_TASK_SECONDS),  # kept
                            (1.2 * MIN_TASK_SECONDS, MIN_TASK_SECONDS),
                            (0.5 * MIN_TASK_SECONDS, 0.5 * MIN_TASK_SECONDS)):
        assert 1.2 * share < 1 and 2.5 * share > 2.5 - 1  # what the middle limits test
        given.clear()
        kernels_in_sequence(inst, TimeBudget.start(limit, reproducible=reproducible), solve_task)
        assert given[0] == pytest.approx(expected, rel=0.05)


@pytest.mark.parametrize("reproducible", [True, False])
def test_a_task_alone_gets_the_wall_clock_net_of_the_whole_budget_when_reproducible(
        reproducible: bool) -> None:
    """Reproducible, a task stops by its work: its deadline is what is left of the
    budget's own net, not its nominal seconds (which a loaded machine overran)."""
    walls: list[tuple[float, float]] = []

    def solve_task(sub: Problem, t: Target, seconds: float, wall: float,
                   repro: bool) -> Schedule:
        walls.append((seconds, wall))
        return solve_report(sub, t, time_limit=seconds, wall_limit=wall, workers=1,
                            reproducible=repro).schedule

    inst = build_instance(two_task_problem(), target(capacity=4096))
    budget = TimeBudget.start(1.0, wall=100.0, reproducible=reproducible)
    kernels_in_sequence(inst, budget, solve_task)
    seconds, wall = walls[0]
    if reproducible:
        assert 90.0 < wall <= 100.0
    else:
        assert wall == seconds
