"""Large-neighbourhood search: windows partition the nodes; steps keep legality."""

from __future__ import annotations

from typing import Any

import pytest

from schedsearch.engine.cpsat.variables import Incumbent, Status
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.lns import (
    EASY_SHARE,
    EASY_WINDOWS,
    FIRST_WINDOW,
    MAX_WINDOW,
    _Sweep,
    improve,
    window,
)
from schedsearch.engine.solution import to_schedule
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import gemm_problem, target, verify


def _setup():
    inst = build_instance(gemm_problem(blocks=6, k_steps=2, tile=1024),
                          target(capacity=6144))
    dag = build_dag(inst)
    return inst, dag, construct(inst, dag)


def test_window_frees_ranks_in_its_time_range_and_pins_what_came_before() -> None:
    inst, dag, solution = _setup()
    inc = Incumbent.of(inst, dag, solution)
    hood, region_end = window(inst, dag, inc, 10, 12)
    for v, status in enumerate(hood.status):
        if status == Status.FIXED:
            assert inc.starts[v] < hood.t0
        elif status == Status.FREE:
            assert hood.t0 <= inc.starts[v] and inc.ends[v] <= hood.t_end
        else:
            assert inc.starts[v] >= hood.t0
    assert hood.status.count(Status.FREE) >= 12
    assert region_end > hood.t_end


@pytest.mark.slow
def test_improve_is_never_worse_legal_and_reproducible() -> None:
    inst, dag, solution = _setup()
    first = improve(inst, dag, solution, TimeBudget.start(0.5, wall=60), seed=1, workers=2,
                    lower=0)
    again = improve(inst, dag, solution, TimeBudget.start(0.5, wall=60), seed=1, workers=2,
                    lower=0)
    assert first.solution.makespan(inst) <= solution.makespan(inst)
    assert first.windows >= 1
    assert first.solution == again.solution
    assert verify(to_schedule(inst, first.solution, {})) == []



def _sweep_sizes(sweep: _Sweep, sweeps: int, improving: bool) -> list[int]:
    """The window size at the start of each of ``sweeps`` sweeps."""
    sizes: list[int] = []
    while len(sizes) < sweeps:
        first, size = sweep.next()
        if first == 0:
            sizes.append(size)
        sweep.improved = sweep.improved or improving
    return sizes


def test_windows_double_after_a_fruitless_sweep_and_start_small_again_after_the_largest(
) -> None:
    doubling = [FIRST_WINDOW]
    while doubling[-1] < MAX_WINDOW:
        doubling.append(min(2 * doubling[-1], MAX_WINDOW))
    sizes = _sweep_sizes(_Sweep(1000, seed=0), len(doubling) + 2, improving=False)
    assert sizes == [*doubling, FIRST_WINDOW, 2 * FIRST_WINDOW]
    assert _sweep_sizes(_Sweep(1000, seed=0), 3, improving=True) == [FIRST_WINDOW] * 3


def test_a_round_of_small_windows_gets_less_cp_sat_work_than_one_of_large_windows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import schedsearch.engine.lns as lns

    inst, dag, start = _setup()
    works: list[float] = []
    real = lns.solve_each

    def solve_each(builts: Any, budget: Any, *, work: float, seeds: Any) -> Any:
        works.append(work)
        return real(builts, budget, work=work, seeds=seeds)

    monkeypatch.setattr(lns, "solve_each", solve_each)
    for first in (4, 8):
        monkeypatch.setattr(lns, "FIRST_WINDOW", first)
        works.clear()
        improve(inst, dag, start, TimeBudget.start(0.2), seed=0, workers=1, lower=0)
        assert works[0] == pytest.approx(first * lns.WINDOW_LIMIT_PER_OP)


def test_a_size_whose_windows_are_mostly_proven_doubles_where_the_sweep_stands() -> None:
    sweep = _Sweep(1000, seed=0)
    first, size = sweep.next()
    sweep.record(tried=EASY_WINDOWS, proven=EASY_WINDOWS)
    after, doubled = sweep.next()
    assert (size, doubled) == (FIRST_WINDOW, 2 * FIRST_WINDOW)
    assert after > first  # the sweep goes on from where it stood
    for _ in range(20):
        sweep.record(tried=EASY_WINDOWS, proven=EASY_WINDOWS)
    assert sweep.next()[1] == MAX_WINDOW


def test_a_size_whose_windows_run_to_their_cap_stays() -> None:
    sweep = _Sweep(1000, seed=0)
    sweep.next()
    hard = int(EASY_SHARE * EASY_WINDOWS) - 1
    for _ in range(10):
        sweep.record(tried=EASY_WINDOWS, proven=hard)
    assert sweep.next()[1] == FIRST_WINDOW
    fresh = _Sweep(1000, seed=0)  # too few windows of a size to judge it by
    fresh.record(tried=EASY_WINDOWS - 1, proven=EASY_WINDOWS - 1)
    assert fresh.next()[1] == FIRST_WINDOW


def test_the_accept_loop_grows_windows_that_cp_sat_proves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every window proven optimal and none improving: the windows grow within the first
    sweep, before any sweep could end fruitless."""
    import schedsearch.engine.lns as lns
    from schedsearch.engine.cpsat.model import Outcome

    inst = build_instance(gemm_problem(blocks=24, k_steps=2, tile=1024),
                          target(capacity=6144))
    dag = build_dag(inst)
    sizes: list[int] = []
    real_window = lns.window

    def window(inst: Any, dag: Any, inc: Any, first: int, size: int) -> Any:
        sizes.append(size)
        return real_window(inst, dag, inc, first, size)

    def solve_each(builts: Any, budget: Any, *, work: float, seeds: Any) -> Any:
        return [Outcome(status="OPTIMAL", solution=None, objective=None, bound=None,
                        wall_s=0.0, cut=False) for _ in builts]

    monkeypatch.setattr(lns, "window", window)
    monkeypatch.setattr(lns, "solve_each", solve_each)
    # A sweep opens with its tail round (none on a problem this small), which does not
    # count towards the sweep's proven windows.
    tails = [size for _, size in _Sweep(dag.n_nodes, seed=0).tails(workers=2)]
    lns.search_windows(inst, dag, construct(inst, dag), TimeBudget.start(60), seed=0,
                       workers=2, score=lambda s: s.makespan(inst),
                       model=lambda *_: None,
                       done=lambda _: len(sizes) >= len(tails) + EASY_WINDOWS + 2)
    assert dag.n_nodes > EASY_WINDOWS * FIRST_WINDOW  # one sweep is longer than that
    assert sizes == [*tails, *[FIRST_WINDOW] * EASY_WINDOWS, 2 * FIRST_WINDOW,
                     2 * FIRST_WINDOW]


def test_each_sweep_opens_with_the_tail_windows_and_their_larger_grant(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A round of tail windows (the last ranks of the start order, one size per
    worker) at the start and again whenever the sweep starts over; they are granted
    :data:`TAIL_WORK` (at most :data:`TAIL_SHARE` of the work left), the sweep's own
    windows their per-op share."""
    import schedsearch.engine.lns as lns
    from schedsearch.engine.cpsat.model import Outcome

    inst = build_instance(gemm_problem(blocks=96, k_steps=2, tile=1024),
                          target(capacity=6144))
    dag = build_dag(inst)
    rounds: list[tuple[list[tuple[int, int]], float]] = []
    windows: list[tuple[int, int]] = []
    real_window = lns.window

    def window(inst: Any, dag: Any, inc: Any, first: int, size: int) -> Any:
        windows.append((first, size))
        return real_window(inst, dag, inc, first, size)

    def solve_each(builts: Any, budget: Any, *, work: float, seeds: Any) -> Any:
        rounds.append((windows[-len(builts):], work))
        return [Outcome(status="FEASIBLE", solution=None, objective=None, bound=None,
                        wall_s=0.0, cut=False) for _ in builts]

    monkeypatch.setattr(lns, "window", window)
    monkeypatch.setattr(lns, "solve_each", solve_each)
    monkeypatch.setattr(lns, "IDLE_WINDOWS", 0)  # test_idle_windows.py: they come first
    n = dag.n_nodes
    assert n >= lns.TAIL_PART * max(lns.TAIL_SIZES[:2])
    lns.search_windows(inst, dag, construct(inst, dag), TimeBudget.start(60), seed=0,
                       workers=2, score=lambda s: s.makespan(inst),
                       model=lambda *_: None, done=lambda _: len(rounds) >= 200)
    tails = [(n - size, size) for size in sorted(lns.TAIL_SIZES[:2])]
    assert rounds[0] == (tails, lns.TAIL_WORK)
    later = [k for k, (found, _) in enumerate(rounds) if found == tails]
    assert len(later) >= 2  # the sweep started over at least once
    for k, (found, work) in enumerate(rounds):
        if k not in later:
            assert all(first < n - size // 2 for first, size in found)
            assert work == pytest.approx(lns.WINDOW_LIMIT_PER_OP * max(s for _, s in found))
    # A sweep starts over right after its round that reaches the end.
    for k in later[1:]:
        assert any(first + size >= n - size // 4 for first, size in rounds[k - 1][0])


def test_the_tail_round_keeps_to_problems_larger_than_its_windows() -> None:
    from schedsearch.engine.lns import TAIL_PART

    sweep = _Sweep(TAIL_PART * 48 - 1, seed=0)
    assert sweep.tails(workers=2) == []  # 48 and 64 ops: more than 1/TAIL_PART
    assert not sweep.tail_due
    n = TAIL_PART * 64
    assert _Sweep(n, seed=0).tails(workers=4) == [(n - s, s) for s in (32, 48, 64)]
