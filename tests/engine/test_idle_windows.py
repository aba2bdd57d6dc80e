"""LNS windows where the busiest resource idles most
(:func:`schedsearch.engine.lns.idle_windows`), tried first where there are buffers."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.bench_memory import tight_problem
from schedsearch.engine import lns
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.lns import idle_windows, improve
from schedsearch.engine.portfolio import list_schedule
from schedsearch.engine.solution import Solution, to_schedule
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import verify


def _wide_pair(ops: int):
    problem, tgt = tight_problem("pair-wide", ops)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    start = list_schedule(inst, dag)
    assert isinstance(start, Solution)
    return inst, dag, start


def _bus_idle(inst, inc: Incumbent, first: int, size: int) -> int:
    """Independently, ns by ns: the DDR bandwidth left unused between the starts of
    ranks ``first`` and ``first + size`` (the wide pair's busiest resource)."""
    use = np.zeros(inc.makespan + 1, dtype=np.int64)
    for v in range(inst.n_ops):
        draw = dict(inst.modes[v][inc.solution.modes[v]].budgets).get("DDR_BW", 0)
        use[inc.starts[v]:inc.ends[v]] += draw
    ranked = sorted(range(inst.n_ops), key=lambda v: (inc.starts[v], v))
    begin, end = inc.starts[ranked[first]], inc.starts[ranked[first + size]]
    return int(np.maximum(0, 60 - use[begin:end]).sum())


def test_the_idlest_windows_come_first_and_apart() -> None:
    inst, dag, start = _wide_pair(150)
    inc = Incumbent.of(inst, dag, start)
    size = 12
    chosen = idle_windows(inst, inc, size, count=6)
    assert chosen and all(width == size for _, width in chosen)
    firsts = [first for first, _ in chosen]
    assert all(abs(a - b) >= size for a in firsts for b in firsts if a != b)
    idle = [_bus_idle(inst, inc, first, size) for first in firsts]
    assert idle == sorted(idle, reverse=True)
    candidates = range(0, inst.n_ops - size, size // 4)
    assert idle[0] == max(_bus_idle(inst, inc, first, size) for first in candidates)


def test_no_windows_when_none_are_asked_for_or_the_problem_is_one_window() -> None:
    inst, dag, start = _wide_pair(150)
    inc = Incumbent.of(inst, dag, start)
    assert idle_windows(inst, inc, 12, count=0) == []
    assert idle_windows(inst, inc, inst.n_ops) == []


def test_idle_windows_first_help_the_tight_wide_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same work budget from the same start, with and without them: the norm
    computes that leave the bus idle are where a window pays."""
    inst, dag, start = _wide_pair(600)
    found = {}
    default = lns.IDLE_WINDOWS
    for count in (0, default):
        monkeypatch.setattr(lns, "IDLE_WINDOWS", count)
        result = improve(inst, dag, start, TimeBudget.start(1.5, wall=120), seed=0,
                         workers=2, lower=0)
        assert verify(to_schedule(inst, result.solution, {})) == []
        found[count] = result.solution.makespan(inst)
    assert found[default] < found[0] <= start.makespan(inst)


def test_a_fruitless_round_of_idle_windows_hands_over_to_the_sweep(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where there are buffers the first round is the idlest windows; when it improves
    nothing, the sweep goes on as without them (its tail round first)."""
    from schedsearch.engine.cpsat.model import Outcome

    inst, dag, start = _wide_pair(600)
    rounds: list[list[tuple[int, int]]] = []
    planned: list[tuple[int, int]] = []
    real_window = lns.window

    def window(inst, dag, inc, first: int, size: int):
        planned.append((first, size))
        return real_window(inst, dag, inc, first, size)

    def solve_each(builts, budget, *, work: float, seeds):
        rounds.append(planned[-len(builts):])
        return [Outcome(status="FEASIBLE", solution=None, objective=None, bound=None,
                        wall_s=0.0, cut=False) for _ in builts]

    monkeypatch.setattr(lns, "window", window)
    monkeypatch.setattr(lns, "solve_each", solve_each)
    lns.search_windows(inst, dag, start, TimeBudget.start(60), seed=0, workers=2,
                       score=lambda s: s.makespan(inst), model=lambda *_: None,
                       done=lambda _: len(rounds) >= 3)
    inc = Incumbent.of(inst, dag, start)
    assert rounds[0] == idle_windows(inst, inc, lns.FIRST_WINDOW)[:lns.FOCUS_ROUND]
    n = dag.n_nodes
    assert rounds[1] == [(n - size, size) for size in sorted(lns.TAIL_SIZES[:2])]
