"""``mix --time-limit`` is the budget of the whole command: every search the policies run
is granted its part of one allotment as it begins, so searches that take all they are
granted end within the limit less the tail kept for scoring, whatever came before them.

Nothing is timed: a fake clock stands in for :func:`time.perf_counter` and each search
"takes" its whole wall grant by moving it."""

from __future__ import annotations

import time

import pytest

from checker import verify
from models.formats import schedule_to_dict
from models.mix import Mix, Request
from models.requests import mix_problem
from models.targets import load_target
from schedsearch.allotment import MIN_SECONDS, TAIL_SHARE, Allotment
from schedsearch.engine.deadlines import search_objectives
from schedsearch.engine.timebudget import WALL_GRACE, WALL_SLACK
from schedsearch.mix.policies import KERNEL_SHARE, TIGHTENINGS, run_policies
from schedsearch.paths import SolveOptions
from tests.clock import FakeClock, listed

TARGET = load_target("hexagon-v75")
QWEN = "qwen2.5-0.5b"
MIX = Mix("t", TARGET.name, (Request("p0", QWEN, "prefill", 16, 0),
                             Request("d0", QWEN, "decode", 1, 16, deadline_ns=10**9),
                             Request("d1", QWEN, "decode", 1, 16)))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(time, "perf_counter", fake)
    return fake


@pytest.mark.parametrize("spent_before", [0.0, 0.5])
def test_searches_that_take_their_grants_end_within_the_limit_less_the_tail(
        clock: FakeClock, spent_before: float) -> None:
    """``spent_before``: the share of the limit the command had spent before its first
    search (imports, tiling): the searches share what is left. The limit is one whose
    every grant pays for a search (:mod:`schedsearch.mix.cuts`)."""
    limit = 100.0
    whole = mix_problem(MIX, TARGET, None, 100_000)
    allotment = Allotment.start(limit, reproducible=False)
    clock.now += spent_before * limit
    grants: list[float] = []

    def search(problem, target, grant):
        assert grant.time_limit == grant.wall_limit  # using the time: wall is the limit
        grants.append(grant.wall_limit)
        clock.now += grant.wall_limit
        return listed(problem, target)

    def objective_search(problem, target, objectives, starts, grant):
        grants.append(grant.wall_limit)
        clock.now += grant.wall_limit
        return search_objectives(problem, target, objectives, starts=starts,
                                 time_limit=0.01)

    began = clock.now - spent_before * limit
    run_policies(whole, TARGET, search, SolveOptions(time_limit=limit, reproducible=False),
                 100_000, objective_search=objective_search, allotment=allotment)
    assert len(grants) >= 14 + 14 + 2  # the distinct kernels, then the fused searches
    assert min(grants) >= MIN_SECONDS
    assert clock.now - began <= limit - TAIL_SHARE * limit + 1e-9
    # every search planned ran but the tightening rounds (no request was late here):
    # half of the fused share is the per-request search's, a third of it each round
    unused = (1 - KERNEL_SHARE) / 2 * TIGHTENINGS / (1 + TIGHTENINGS)
    assert sum(grants) == pytest.approx((1 - TAIL_SHARE - spent_before) * limit
                                        * (1 - unused))


def test_chunkings_not_yet_searched_are_skipped_once_the_time_is_spent(
        clock: FakeClock) -> None:
    """A search of the whole prefills that overruns (it "takes" the whole limit, whatever
    it was granted) spends the searches' wall time: the chunks of 64 are not searched,
    and the note says so. Reproducible, every chunking is searched, past the wall net
    too (the kernels then "take" the whole limit each)."""
    limit = 100.0  # every grant pays for a search (:mod:`schedsearch.mix.cuts`)
    mix = Mix("t", TARGET.name, (Request("p0", QWEN, "prefill", 80, 0),
                                 Request("d0", QWEN, "decode", 1, 16)))
    whole = mix_problem(mix, TARGET, None, 100_000)
    fused: list[int | None] = []
    kernel_cost, fused_cost = [0.0], [limit]

    def search(problem, target, grant):
        if len(problem.tasks) == 1:
            clock.now += kernel_cost[0]
        else:
            fused.append(len(problem.ops))
            clock.now += fused_cost[0]
        return listed(problem, target)

    runs = run_policies(whole, TARGET, search, SolveOptions(time_limit=limit,
                                                            reproducible=False),
                        100_000, allotment=Allotment.start(limit, reproducible=False))
    assert fused == [len(whole.problem.ops)]
    note = runs["searched"].note
    assert "not searched, the time limit being spent: prefill in chunks of 64" in note
    assert all(t.chunk is None or "kernels" in t.label or "policy" in t.label
               for t in runs["searched"].tried)
    fused.clear()
    clock.now, kernel_cost[0], fused_cost[0] = 1000.0, limit, 0.0
    run_policies(whole, TARGET, search, SolveOptions(time_limit=limit, reproducible=True),
                 100_000, allotment=Allotment.start(limit, reproducible=True, begin=1000.0))
    assert len(fused) == 2
    assert clock.now - 1000.0 > WALL_SLACK * limit + WALL_GRACE  # past the wall net


def test_a_fused_candidate_whose_grant_cannot_pay_for_its_list_schedule_is_not_built(
        clock: FakeClock) -> None:
    """Kernels that overrun (each "takes" a tenth of the limit) leave the fused searches
    no wall time: the whole prefills are not built either (their grant is below even the
    list schedule's cost), the note says so, and ``searched`` keeps a legal kernel
    schedule."""
    limit = 100.0
    mix = Mix("t", TARGET.name, (Request("p0", QWEN, "prefill", 80, 0),
                                 Request("d0", QWEN, "decode", 1, 16)))
    whole = mix_problem(mix, TARGET, None, 100_000)
    fused: list[int] = []

    def search(problem, target, grant):
        if len(problem.tasks) == 1:
            clock.now += limit / 10
        else:
            fused.append(len(problem.ops))
        return listed(problem, target)

    runs = run_policies(whole, TARGET, search, SolveOptions(time_limit=limit,
                                                            reproducible=False),
                        100_000, allotment=Allotment.start(limit, reproducible=False))
    assert fused == []
    note = runs["searched"].note
    assert ("not built, its part of the time limit not paying even for the list schedule: "
            "whole prefills") in note
    assert "not searched, the time limit being spent: prefill in chunks of 64" in note
    assert verify(schedule_to_dict(runs["searched"].schedule)).legal
