"""Merging the answers of several LNS windows solved from one incumbent."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.formats import Problem, Target, Task
from schedsearch import solve
from schedsearch.engine.cpsat.model import build, solve_built
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.lns import window
from schedsearch.engine.merge import WindowAnswer, keeps_times, merge_windows
from schedsearch.engine.solution import Solution, to_schedule
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import (
    compute,
    feasible_problems,
    lns_either_way,
    target,
    verify,
)
from tests.fuzz._budget import examples

GAPS = {4: 5, 13: 7}  # op index -> idle time left before it in the incumbent


def _chain(n: int = 20) -> tuple[Problem, Solution]:
    """``n`` ops of 10 ns one after another, and an incumbent that waits before ops 4 and
    13 (each gap can only close in a window that holds it)."""
    ops = {f"o{i}": compute("t", [], [], duration=10) for i in range(n)}
    problem = Problem(name="chain", tensors={}, tasks={"t": Task("chain")}, buffers={},
                      ops=ops, after=tuple((f"o{i}", f"o{i + 1}") for i in range(n - 1)))
    starts, now = [], 0
    for i in range(n):
        now += GAPS.get(i, 0)
        starts.append(now)
        now += 10
    return problem, Solution((0,) * n, tuple(starts), ())


def _answer(first: int, size: int) -> tuple[WindowAnswer, Solution, Incumbent]:
    problem, incumbent = _chain()
    inst = build_instance(problem, target())
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, incumbent)
    hood, region_end = window(inst, dag, inc, first, size)
    outcome = solve_built(build(inst, dag, inc, hood, 0, region_end), TimeBudget.start(30),
                          work=0.5, seed=0, workers=1)
    assert outcome.solution is not None
    return WindowAnswer(first, size, outcome.solution), incumbent, inc


def test_two_windows_apart_close_both_gaps() -> None:
    early, incumbent, inc = _answer(2, 4)
    late, _, _ = _answer(11, 4)
    problem, _ = _chain()
    inst = build_instance(problem, target())
    dag = build_dag(inst)
    alone = [answer.solution.makespan(inst) for answer in (early, late)]
    assert alone == [incumbent.makespan(inst) - 5, incumbent.makespan(inst) - 7]
    merged = merge_windows(inst, dag, inc, [late, early])  # any order
    assert merged is not None
    assert merged.makespan(inst) == incumbent.makespan(inst) - 12
    assert verify(to_schedule(inst, merged, {})) == []


def test_windows_whose_free_ops_meet_are_not_merged() -> None:
    early, _, inc = _answer(2, 4)
    overlapping, _, _ = _answer(4, 4)
    problem, _ = _chain()
    inst = build_instance(problem, target())
    assert merge_windows(inst, build_dag(inst), inc, [early, overlapping]) is None


def test_the_time_check_finds_a_broken_precedence_and_an_overfull_lane() -> None:
    problem, incumbent = _chain()
    inst = build_instance(problem, target())
    dag = build_dag(inst)
    assert keeps_times(inst, dag, incumbent)
    early = list(incumbent.starts)
    early[5] = early[4]  # o5 beside o4: breaks o4 -> o5 and needs two MX units of one
    assert not keeps_times(inst, dag, Solution(incumbent.modes, tuple(early), ()))
    free = build_dag(build_instance(Problem(name="free", tensors={},
                                            tasks={"t": Task("chain")}, buffers={},
                                            ops=problem.ops), target()))
    at_once = Solution(incumbent.modes, (0,) * inst.n_ops, ())
    assert not keeps_times(inst, free, at_once)  # 20 ops on the one MX unit
    assert keeps_times(inst, free, incumbent)


def test_a_round_keeps_every_idle_window_that_improves(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    """The same work budget from the same start, with and without merging, on the tight
    wide pair (where both idle windows of a round nearly always improve): merging keeps
    more windows than there were rounds, and ends shorter."""
    (alone, alone_makespan), (merged, makespan) = lns_either_way(
        monkeypatch, "merge_windows", lambda *_: None, 600, 1.5).values()
    assert alone.accepted <= alone.windows // 2
    assert merged.accepted > merged.windows // 2
    assert makespan < alone_makespan


#: The rules that look at addresses, which :func:`keeps_times` leaves to placement.
ADDRESS_RULES = {"MEM_RANGE", "ALIAS", "LIFETIME"}


@settings(max_examples=examples(0.5))
@given(feasible_problems(), st.lists(st.tuples(st.integers(0, 40), st.integers(-30, 30)),
                                     max_size=4))
def test_the_time_check_agrees_with_the_checker(case: tuple[Problem, Target],
                                                moves: list[tuple[int, int]]) -> None:
    """A legal schedule with a few ops moved: where :func:`keeps_times` accepts it, the
    independent checker finds nothing wrong but addresses; where the checker finds
    nothing wrong at all, :func:`keeps_times` accepts it."""
    problem, tgt = case
    schedule = solve(problem, tgt, time_limit=0.2, seed=0, workers=1)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    starts = [schedule.ops[name].start for name in inst.op_names]
    for op, delta in moves:
        starts[op % inst.n_ops] = max(0, starts[op % inst.n_ops] + delta)
    moved = Solution(tuple(schedule.ops[name].mode for name in inst.op_names), tuple(starts),
                     tuple(schedule.buffers[name].offset for name in inst.buffer_names))
    accepted = keeps_times(inst, dag, moved)
    try:
        codes = {line.split(":")[0] for line in verify(to_schedule(inst, moved, {}))}
    except ValueError:  # no unit assignment: a lane kind over its units
        assert not accepted
        return
    if accepted:
        assert codes <= ADDRESS_RULES, codes
    if not codes:
        assert accepted
