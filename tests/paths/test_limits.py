"""``compare(whole_limit=True)``: the time limit is the comparison's, shared among its
solves, so the solves' limits add up to it (each solve had the whole limit)."""

from __future__ import annotations

from typing import Any

import pytest

from models.formats import Problem, Schedule, Target
from schedsearch.engine.search import solve
from schedsearch.paths import (
    BARRIER_SHARE,
    INTERLEAVED_SHARE,
    SolveOptions,
    compare,
    kernel_solves,
)


@pytest.mark.parametrize("whole_limit", [True, False])
def test_the_solves_share_the_whole_limit(pair: tuple[Problem, Target],
                                          whole_limit: bool) -> None:
    problem, target = pair
    given: list[tuple[str, float]] = []

    def recording(sub: Problem, on: Target, **options: Any) -> Schedule:
        given.append((options["granularity"] if sub is problem else "kernel",
                      options["time_limit"]))
        return solve(sub, on, **options)

    limit = 0.6
    compare(problem, target, solver=recording, whole_limit=whole_limit,
            options=SolveOptions(time_limit=limit, seed=0, workers=1))
    kernels = [seconds for kind, seconds in given if kind == "kernel"]
    assert len(kernels) == kernel_solves(problem, target) and len(given) == len(kernels) + 2
    if not whole_limit:
        assert {seconds for _, seconds in given} == {limit}
        return
    assert sum(seconds for _, seconds in given) == pytest.approx(limit)
    assert dict(given)["tile"] == pytest.approx(INTERLEAVED_SHARE * limit)
    assert dict(given)["task"] == pytest.approx(BARRIER_SHARE * limit)


def test_whatif_shares_its_whole_limit_evenly(pair: tuple[Problem, Target],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from schedsearch import idealise

    problem, target = pair
    given: list[float] = []

    def recording(sub: Problem, on: Target, **options: Any) -> Schedule:
        given.append(options["time_limit"])
        return solve(sub, on, **options)

    monkeypatch.setattr(idealise, "solve", recording)
    idealise.whatif(problem, target, whole_limit=True,
                    options=SolveOptions(time_limit=0.6, seed=0, workers=1))
    assert len(given) > 2 and sum(given) == pytest.approx(0.6)
    assert len(set(given)) == 1


def test_chain_shares_its_whole_limit_evenly(monkeypatch: pytest.MonkeyPatch) -> None:
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
    chains.chain_paths(workload, load_target(workload.target), whole_limit=True,
                       options=SolveOptions(time_limit=1.2, seed=0, workers=1,
                                            reproducible=True))
    assert len(given) == len(edges) * chains.solves_per_edge()
    assert sum(given) == pytest.approx(1.2) and len(set(given)) == 1
