"""Large-neighbourhood search: windows partition the nodes; steps keep legality."""

from __future__ import annotations

from typing import Any

import pytest

from schedsearch.engine.cpsat.variables import Incumbent, Status
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.lns import FIRST_WINDOW, MAX_WINDOW, _Sweep, improve, window
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
