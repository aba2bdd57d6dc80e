"""An LNS window's answer repeated where the incumbent looks the same
(:mod:`schedsearch.engine.repeat`)."""

from __future__ import annotations

import pytest

from benchmarks.bench_memory import tight_problem
from models.formats import Buffer, Problem, Task
from schedsearch.engine.cpsat.model import build, solve_built
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.lns import improve, window
from schedsearch.engine.merge import WindowAnswer, merge_windows
from schedsearch.engine.portfolio import list_schedule
from schedsearch.engine.repeat import CONTEXT, Lookalikes, op_kinds
from schedsearch.engine.solution import Solution, to_schedule
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import compute, lns_either_way, load, target, verify

N, PERIOD, GAP = 200, 10, 5


def _chain() -> tuple[Problem, Solution]:
    """``N`` ops of 10 ns one after another; the incumbent waits ``GAP`` before every
    op ``i`` with ``i % PERIOD == 4``."""
    ops = {f"o{i}": compute("t", [], [], duration=10) for i in range(N)}
    problem = Problem(name="chain", tensors={}, tasks={"t": Task("chain")}, buffers={},
                      ops=ops, after=tuple((f"o{i}", f"o{i + 1}") for i in range(N - 1)))
    starts, now = [], 0
    for i in range(N):
        now += GAP if i % PERIOD == 4 else 0
        starts.append(now)
        now += 10
    return problem, Solution((0,) * N, tuple(starts), ())


def test_ops_of_one_task_with_the_same_modes_and_buffers_are_one_kind() -> None:
    ops = {"a": load("t", "A", "x", "a"), "b": load("t", "B", "x", "b"),
           "c": load("t", "C", "x", "c"), "d": load("u", "D", "x", "d")}
    buffers = {"A": Buffer("M", 64), "B": Buffer("M", 64), "C": Buffer("M", 128),
               "D": Buffer("M", 64)}
    problem = Problem(name="kinds", tensors={}, tasks={"t": Task("x"), "u": Task("x")},
                      buffers=buffers, ops=ops)
    kinds = op_kinds(build_instance(problem, target()))
    assert kinds[0] == kinds[1] and len(set(kinds)) == 3  # c: larger buffer, d: other task


def test_one_answer_closes_every_gap_that_looks_the_same() -> None:
    problem, incumbent = _chain()
    inst = build_instance(problem, target())
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, incumbent)
    hood, region_end = window(inst, dag, inc, 22, 4)  # ranks 22-25 hold op 24's gap
    outcome = solve_built(build(inst, dag, inc, hood, 0, region_end), TimeBudget.start(30),
                          work=0.5, seed=0, workers=1)
    assert outcome.solution is not None
    answer = WindowAnswer(22, 4, outcome.solution)
    assert answer.solution.makespan(inst) == incumbent.makespan(inst) - GAP
    copies = Lookalikes(inst, inc, op_kinds(inst)).copies(answer, [answer])
    firsts = [copy.first for copy in copies]
    # every later window at the same phase, one window and its context apart, none
    # within CONTEXT ranks of either end
    assert firsts == [52, 82, 112, 142, 172]
    assert all(f >= CONTEXT and f + 4 + CONTEXT <= N for f in firsts)
    merged = merge_windows(inst, dag, inc, [answer, *copies])
    assert merged is not None
    assert merged.makespan(inst) == incumbent.makespan(inst) - GAP * (1 + len(copies))
    assert verify(to_schedule(inst, merged, {})) == []


def test_a_window_that_looks_like_no_other_has_no_copies() -> None:
    problem, incumbent = _chain()
    inst = build_instance(problem, target())
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, incumbent)
    lookalikes = Lookalikes(inst, inc, op_kinds(inst))
    answer = WindowAnswer(2, 4, incumbent)  # within CONTEXT of the start: no context
    assert lookalikes.copies(answer, [answer]) == []
    odd = list(incumbent.starts)
    odd[100:] = [s + 1 for s in odd[100:]]  # one extra tick before op 100
    inc = Incumbent.of(inst, dag, Solution(incumbent.modes, tuple(odd), ()))
    answer = WindowAnswer(92, 4, inc.solution)  # its context holds the odd gap
    assert Lookalikes(inst, inc, op_kinds(inst)).copies(answer, [answer]) == []
    answer = WindowAnswer(22, 4, inc.solution)  # copies everywhere but near it
    firsts = [c.first for c in Lookalikes(inst, inc, op_kinds(inst)).copies(answer, [answer])]
    # none whose ranks (context too) hold both op 99 and op 100, the odd gap between
    assert firsts and all(not (f - CONTEXT <= 99 and f + 4 + CONTEXT > 100) for f in firsts)


def test_lns_repeats_what_it_accepts_on_the_tight_wide_pair(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same work budget from the same start, with and without copies: with them
    more windows are accepted than were solved, and the schedule ends sooner."""
    (alone, alone_makespan), (copied, makespan) = lns_either_way(
        monkeypatch, "op_kinds", lambda _: [], 600, 1.0).values()
    assert alone.accepted <= alone.windows
    assert copied.accepted > copied.windows
    assert makespan < alone_makespan


def test_lns_with_copies_repeats_for_a_seed() -> None:
    """Copies and merges depend on the incumbent and the answers only, never on a clock:
    the same seed and work budget give the same schedule."""
    problem, tgt = tight_problem("pair-wide", 600)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    start = list_schedule(inst, dag)
    assert isinstance(start, Solution)
    runs = [improve(inst, dag, start, TimeBudget.start(0.6, wall=120), seed=1, workers=2,
                    lower=0) for _ in range(2)]
    assert runs[0].accepted > runs[0].windows  # copies were kept
    assert runs[0].solution == runs[1].solution
