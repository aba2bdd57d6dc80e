"""One time limit for a whole study (``compare``, ``chain``, ``whatif``): every solve is
granted its part of what is left of the study's one budget as it begins.

Nothing here is timed: a fake clock stands in for :func:`time.perf_counter`, and each
solve "takes" the seconds the test says by moving it, so the grants are checked against
what was left at the moment each solve began, at any speed of the machine.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from models.formats import Problem, Schedule, Target
from schedsearch.allotment import MIN_SECONDS, TAIL_SHARE, Allotment
from schedsearch.engine.search import solve
from schedsearch.paths import (
    BARRIER_SHARE,
    INTERLEAVED_SHARE,
    SolveOptions,
    compare,
    kernel_solves,
    path_weights,
)
from tests.clock import FakeClock, listed


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(time, "perf_counter", fake)
    return fake


class Recorder:
    """A solver that records what each solve was granted and how much of the study's
    budget was left when it began, then "takes" ``cost`` seconds of the fake clock."""

    def __init__(self, clock: FakeClock, options: SolveOptions, whole: Problem,
                 cost: float) -> None:
        assert options.allotment is not None
        self.clock, self.allotment, self.whole, self.cost = (clock, options.allotment, whole,
                                                             cost)
        self.calls: list[dict[str, Any]] = []

    def __call__(self, problem: Problem, target: Target, **options: Any) -> Schedule:
        self.calls.append({**options, "left": self.allotment.time_budget.wall_left(),
                           "whole": problem is self.whole})
        self.clock.now += self.cost
        return listed(problem, target, options["granularity"])


def _options(limit: float, reproducible: bool) -> SolveOptions:
    return SolveOptions(time_limit=limit, seed=0, workers=1, reproducible=reproducible,
                        allotment=Allotment.start(limit, reproducible=reproducible))


def test_each_solve_gets_at_most_what_is_left_less_the_tail(
        pair: tuple[Problem, Target], clock: FakeClock) -> None:
    """Solves that overrun (each "takes" a third of the limit) leave the later ones less;
    none is granted more wall time than was left less the tail, and the last ones,
    with nothing left, still get the least grant (their list schedule)."""
    problem, target = pair
    limit = 1.0
    options = _options(limit, reproducible=False)
    recorder = Recorder(clock, options, problem, cost=limit / 3)
    compare(problem, target, solver=recorder, options=options)
    assert len(recorder.calls) == kernel_solves(problem, target) + 2
    for call in recorder.calls:
        assert call["wall_limit"] >= MIN_SECONDS
        assert call["wall_limit"] <= max(MIN_SECONDS, call["left"] - TAIL_SHARE * limit)
        assert call["time_limit"] == call["wall_limit"]  # using the time: wall is the limit
    assert recorder.calls[-1]["wall_limit"] == MIN_SECONDS  # the clock ran out before it


def test_a_later_solve_gets_what_the_earlier_ones_left(
        pair: tuple[Problem, Target], clock: FakeClock) -> None:
    """With solves that take no time, the first is granted its planned share of the
    wall time (less the tail), and the last, path 4's, all that the others left."""
    problem, target = pair
    limit = 1.2
    options = _options(limit, reproducible=False)
    recorder = Recorder(clock, options, problem, cost=0.0)
    compare(problem, target, solver=recorder, options=options)
    usable = (1 - TAIL_SHARE) * limit
    weights = path_weights(kernel_solves(problem, target))
    first, last = recorder.calls[0], recorder.calls[-1]
    assert first["wall_limit"] == pytest.approx(usable / weights.total)
    assert last["whole"] and last["granularity"] == "tile"
    assert last["wall_limit"] == pytest.approx(usable)


@pytest.mark.parametrize("cost", [0.0, 0.5])
def test_reproducible_work_shares_do_not_depend_on_the_clock(
        pair: tuple[Problem, Target], clock: FakeClock, cost: float) -> None:
    """The work granted is the same whether the solves took no time or ran past the
    whole limit: the shares of the limit, so ``--reproducible`` repeats."""
    problem, target = pair
    limit = 0.6
    options = _options(limit, reproducible=True)
    recorder = Recorder(clock, options, problem, cost=cost)
    compare(problem, target, solver=recorder, options=options)
    given = [call["time_limit"] for call in recorder.calls]
    fused = {call["granularity"]: call["time_limit"] for call in recorder.calls
             if call["whole"]}
    assert sum(given) == pytest.approx(limit)
    assert fused["tile"] == pytest.approx(INTERLEAVED_SHARE * limit)
    assert fused["task"] == pytest.approx(BARRIER_SHARE * limit)


def test_without_an_allotment_each_solve_gets_the_whole_limit(
        pair: tuple[Problem, Target]) -> None:
    problem, target = pair
    given: list[float] = []

    def recording(sub: Problem, on: Target, **options: Any) -> Schedule:
        given.append(options["time_limit"])
        assert "wall_limit" not in options
        return listed(sub, on, options["granularity"])

    compare(problem, target, solver=recording,
            options=SolveOptions(time_limit=0.6, seed=0, workers=1))
    assert given and set(given) == {0.6}


def test_whatif_allots_its_limit_evenly(pair: tuple[Problem, Target],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from schedsearch import idealise

    problem, target = pair
    given: list[float] = []
    real = idealise.solve_report

    def recording(sub: Problem, on: Target, **options: Any) -> Any:
        given.append(options["time_limit"])
        return real(sub, on, **options)

    monkeypatch.setattr(idealise, "solve_report", recording)
    idealise.whatif(problem, target, options=_options(0.6, reproducible=True))
    assert len(given) > 2 and sum(given) == pytest.approx(0.6)
    assert max(given) == pytest.approx(min(given))


def test_chain_allots_its_limit_evenly(monkeypatch: pytest.MonkeyPatch) -> None:
    from models.targets import load_target
    from models.workload import load_workload
    from schedsearch.chains import paths as chains
    from schedsearch.engine import search

    given: list[float] = []

    def recording(sub: Problem, on: Target, **options: Any) -> Schedule:
        given.append(options["time_limit"])
        return solve(sub, on, **options)

    monkeypatch.setattr(chains, "solve", recording)
    monkeypatch.setattr(search, "solve", recording)  # the kernels' solver, looked up late
    workload = load_workload("rmsnorm-gemm-chain-v75")
    edges = chains.chain_edges(workload)
    chains.chain_paths(workload, load_target(workload.target),
                       options=_options(1.2, reproducible=True))
    assert len(given) == len(edges) * chains.solves_per_edge()
    assert sum(given) == pytest.approx(1.2)
    assert max(given) == pytest.approx(min(given))
