"""What a short limit cuts from ``mix`` (:mod:`schedsearch.mix.cuts`), and the work it
no longer repeats: decided on the grants' work (reproducible), so nothing here is timed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from checker import verify
from models.formats import schedule_to_dict
from models.mix import Mix, Request
from models.requests import mix_problem
from models.targets import load_target
from schedsearch.allotment import TAIL_SHARE, Allotment, Grant
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.plain import plain_list_schedule
from schedsearch.engine.slicing import restrict
from schedsearch.mix import figures
from schedsearch.mix.cuts import list_schedule_only, scoring_cost, search_cost
from schedsearch.mix.kernels import kernel_problems
from schedsearch.mix.policies import CHUNK_TOKENS, run_policies, total
from schedsearch.paths import SolveOptions
from tests.clock import listed

TARGET = load_target("hexagon-v75")
QWEN = "qwen2.5-0.5b"
MIX = Mix("t", TARGET.name, (Request("p0", QWEN, "prefill", 16, 0),
                             Request("d0", QWEN, "decode", 1, 16),
                             Request("d1", QWEN, "decode", 1, 16)))


def test_each_kernel_is_the_restriction_of_the_whole_problem() -> None:
    mp = mix_problem(MIX, TARGET, 8, 100_000)
    kernels = kernel_problems(mp)
    assert list(kernels) == list(mp.problem.tasks)
    for task, kernel in kernels.items():
        assert kernel == restrict(mp.problem, task)[0], task


def test_a_limit_too_short_for_a_search_gets_list_schedules_and_says_so() -> None:
    """At 0.05 s no grant pays for a search's fixed cost: the kernels and the fused
    problems get the list schedule alone (the search is never called), each policy's
    schedule is legal, ``searched`` still never loses to a kernel policy, and the notes
    say what was cut."""
    searched: list[str] = []

    def search(problem, target, grant):
        searched.append(problem.name)
        return listed(problem, target)

    runs = run_policies(mix_problem(MIX, TARGET, None, 100_000), TARGET, search,
                        SolveOptions(time_limit=0.05, reproducible=True), 100_000)
    assert searched == []
    for name in ("sequential", "chunked"):
        assert "list-scheduled only (the bound and the search skipped" in runs[name].note
    note = runs["searched"].note
    assert ("list schedule only" in note) or ("not built" in note)
    for run in runs.values():
        assert verify(schedule_to_dict(run.schedule)).legal, run.name
    assert total(runs["searched"]) <= min(total(runs["sequential"]), total(runs["chunked"]))


def test_a_limit_that_pays_for_the_searches_runs_them_and_notes_no_cut() -> None:
    searched: list[str] = []

    def search(problem, target, grant):
        assert grant.time_limit >= search_cost(problem)
        searched.append(problem.name)
        return listed(problem, target)

    runs = run_policies(mix_problem(MIX, TARGET, None, 100_000), TARGET, search,
                        SolveOptions(time_limit=1000.0, reproducible=True), 100_000)
    assert searched
    assert runs["sequential"].note == runs["chunked"].note == ""
    assert "list schedule only" not in runs["searched"].note


def test_the_list_schedule_alone_is_legal_and_never_worse_than_the_plain_one() -> None:
    kernel = kernel_problems(mix_problem(MIX, TARGET, None, 100_000))["p0-q_proj"]
    inst = build_instance(kernel, TARGET)
    plain = plain_list_schedule(inst, build_dag(inst, "tile")).solution
    assert plain is not None
    schedule = list_schedule_only(kernel, TARGET, Grant(1e-3, 1e-3), reproducible=True)
    assert verify(schedule_to_dict(schedule)).legal
    assert schedule.makespan <= plain.makespan(inst)


def test_a_schedule_two_policies_share_is_checked_once(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    runs = run_policies(mix_problem(MIX, TARGET, None, 100_000), TARGET,
                        lambda problem, target, grant: listed(problem, target),
                        SolveOptions(time_limit=0.05), 100_000)
    runs["searched"] = replace(runs["sequential"], name="searched")
    checked: list[object] = []
    real = figures.check

    def counted(schedule):
        checked.append(schedule)
        return real(schedule)

    monkeypatch.setattr(figures, "check", counted)
    scored = figures.score_all(runs)
    assert len(checked) == 2
    assert scored["searched"].legal and scored["searched"].name == "searched"


def test_the_time_kept_for_scoring_is_at_least_what_the_checker_takes() -> None:
    """At 0.1 s a tenth of the limit is less than checking three schedules of the mix
    takes: the allotment keeps the checker's estimate back from the searches."""
    whole = mix_problem(MIX, TARGET, None, 100_000)
    chunked = mix_problem(MIX, TARGET, CHUNK_TOKENS, 100_000)
    allotment = Allotment.start(0.1, reproducible=True)
    run_policies(whole, TARGET, lambda problem, target, grant: listed(problem, target),
                 SolveOptions(time_limit=0.1), 100_000, allotment=allotment)
    kept = scoring_cost(2 * len(whole.problem.ops) + len(chunked.problem.ops))
    assert kept > TAIL_SHARE * 0.1
    assert allotment.tail == kept
