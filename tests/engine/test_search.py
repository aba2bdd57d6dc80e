"""solve(): legal on every bundled example, reproducible, task barriers, cost-model agreement."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from models.evaluation import evaluate
from models.files import write_json_atomic
from models.formats import Problem, Schedule, Target, read_schedule, schedule_to_dict
from models.targets import load_target
from models.workload import example_names, load_problem_input, load_workload, scaled, tile
from schedsearch import solve
from schedsearch.engine import interrupt
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.params import DEFAULT
from schedsearch.engine.search import Progress, solve_report
from schedsearch.engine.solution import Solution, to_schedule
from schedsearch.engine.stages import (
    PIPELINE,
    Found,
    Improvement,
    Justify,
    SearchContext,
    SearchState,
    Stage,
    WholeModel,
    run_stages,
)
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import (
    gemm_problem,
    packing_problem,
    target,
    two_task_problem,
    verify,
)


def scaled_problem(name: str, factor: float) -> Problem:
    workload = load_workload(name)
    return tile(scaled(workload, factor), load_target(workload.target))


@pytest.mark.parametrize("name", example_names())
def test_every_bundled_example_solves_legally(name: str) -> None:
    problem, tgt = load_problem_input(name, None)
    schedule = solve(problem, tgt, time_limit=1, seed=0, workers=2)
    assert verify(schedule) == []


@pytest.mark.parametrize("workers", [1, 2])
def test_same_seed_and_workers_give_the_same_schedule(workers: int) -> None:
    """A small problem under a generous limit: the work budget ends every stage long
    before the deadline, even on a loaded machine, so both runs must match exactly."""
    problem, tgt = gemm_problem(blocks=4, k_steps=2), target(capacity=6144)
    first = solve(problem, tgt, time_limit=20, seed=3, workers=workers)
    second = solve(problem, tgt, time_limit=20, seed=3, workers=workers)
    assert (first.meta or {})["reproducible"] and (second.meta or {})["reproducible"]
    assert first.ops == second.ops
    assert first.buffers == second.buffers
    assert first.makespan == second.makespan


def test_a_search_cut_by_its_deadline_still_answers_legally(monkeypatch) -> None:
    """About 500 ops on a clock that runs far faster than the work (a machine far busier
    than calibrated, past even the reproducible mode's far net): the wall-clock deadline,
    not the work, ends the search; the answer
    is still legal and says it may not repeat. (How close to its limit a solve ends in
    real seconds is measured by ``benchmarks/bench_limits.py``, not timed here.)"""
    problem, tgt = load_problem_input("gemm-rmsnorm-copy-v75", None)
    big = scaled_problem("gemm-rmsnorm-copy-v75", 4.0)
    assert len(big.ops) > 3 * len(problem.ops)
    ticks = itertools.count()
    base = time.perf_counter()
    monkeypatch.setattr(time, "perf_counter", lambda: base + 0.5 * next(ticks))
    report = solve_report(big, tgt, time_limit=1.5, seed=0, workers=2, reproducible=True)
    monkeypatch.undo()
    assert not report.stats.reproducible
    assert verify(report.schedule) == []


def test_task_granularity_never_overlaps_two_tasks() -> None:
    schedule = solve(two_task_problem(), target(capacity=8192), time_limit=1,
                     granularity="task")
    assert verify(schedule) == []
    spans = {}
    for name, placement in schedule.ops.items():
        task = schedule.problem.ops[name].task
        lo, hi = spans.get(task, (placement.start, placement.end))
        spans[task] = (min(lo, placement.start), max(hi, placement.end))
    (a_lo, a_hi), (b_lo, b_hi) = sorted(spans.values())
    assert a_hi <= b_lo


def test_the_search_figures_agree_with_the_cost_model_on_the_written_file(
        tmp_path: Path) -> None:
    """What the search says it found (its progress, its secondary's own sum of highest
    addresses, the report) against ``evaluate`` of the schedule read back from its file."""
    seen: list[Progress] = []
    report = solve_report(gemm_problem(), target(capacity=8192), time_limit=1,
                          secondary="peak-memory", progress=seen.append)
    path = tmp_path / "schedule.json"
    write_json_atomic(path, schedule_to_dict(report.schedule))
    written = read_schedule(path)
    figures = evaluate(written)
    assert verify(written) == []
    assert figures.makespan == written.makespan == report.schedule.makespan
    assert report.peak_bytes == figures.peak_bytes
    assert report.extent_bytes == figures.extent_bytes
    assert report.busy_share == figures.busy_share
    secondary = (written.meta or {})["secondary"]
    assert secondary["extent_bytes"] == sum(figures.extent_bytes.values())
    assert all(report.peak_bytes[m] <= report.extent_bytes[m] for m in report.peak_bytes)
    assert seen and seen[0].stage == "constructive"
    assert seen[-1].makespan >= report.schedule.makespan
    meta = report.schedule.meta or {}
    assert meta["bound"] == report.bound <= report.schedule.makespan
    assert meta["seed"] == 0 and meta["workers"] == 2 and meta["granularity"] == "tile"


def test_peak_memory_secondary_keeps_the_makespan_and_never_raises_the_peak() -> None:
    problem, tgt = gemm_problem(blocks=2, k_steps=1), target(capacity=1 << 16)
    plain = solve(problem, tgt, time_limit=1)
    lean = solve(problem, tgt, time_limit=1, secondary="peak-memory")
    assert verify(lean) == []
    assert lean.makespan <= plain.makespan
    top = max(b.offset + problem.buffers[n].size for n, b in lean.buffers.items())
    assert top <= max(b.offset + problem.buffers[n].size for n, b in plain.buffers.items())


@pytest.mark.parametrize("workers", [1, 2])
def test_an_answer_only_cp_sat_finds_is_legal_reproducible_and_labelled(workers: int) -> None:
    """Every list-scheduling pass stalls on this packing; the constructive's last resort
    (CP-SAT, stopped at its first solution) hands the pipeline a legal schedule, the
    whole model then proves it optimal, and the schedule says which solver found it."""
    tgt = target(capacity=7, alignment=2)
    first = solve(packing_problem(), tgt, time_limit=5, seed=1, workers=workers)
    second = solve(packing_problem(), tgt, time_limit=5, seed=1, workers=workers)
    assert verify(first) == []
    meta = first.meta or {}
    assert meta["solver"] == "cp-sat" and meta["status"] == "OPTIMAL" and meta["reproducible"]
    assert first.ops == second.ops and first.buffers == second.buffers


def test_the_whole_model_places_the_best_answer_that_has_addresses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A relaxed run's last answer may have no addresses where an earlier one has: the
    answers are tried from the last back, and the first the engine places is taken."""
    from schedsearch.engine import whole_model as whole_model_module

    answers = [Solution((0,), (k,), (0,)) for k in (3, 2, 1)]
    unplaceable = {answers[2].starts}
    monkeypatch.setattr(whole_model_module, "place_offsets", lambda inst, answer, *_: None
                        if answer.starts in unplaceable else answer)
    budget = TimeBudget.start(1)
    assert whole_model_module.placed_answer(None, answers, answers[0], budget, 0) == answers[1]  # type: ignore[arg-type]
    unplaceable |= {answer.starts for answer in answers}
    assert whole_model_module.placed_answer(None, answers, answers[0], budget, 0) is None  # type: ignore[arg-type]


def context(problem: Problem, tgt: Target, **options: Any) -> SearchContext:
    """The search's context for ``problem``, as ``solve_report`` makes it, without
    progress and, unless ``solve_task`` is given, without searching tasks alone."""
    inst = build_instance(problem, tgt)

    def no_task(*_: object) -> Schedule:
        raise AssertionError("no task is searched alone here")

    return SearchContext(inst, build_dag(inst), options.pop("params", DEFAULT),
                         lambda *_: None, options.pop("solve_task", no_task), bound=0,
                         **options)


@dataclass(frozen=True)
class Recording(Stage):
    """``inner``, recording the makespan of what it found, or None."""

    inner: Stage
    found: list[int | None]

    def applies(self, ctx: SearchContext, state: SearchState) -> bool:
        return self.inner.applies(ctx, state)

    def share(self, ctx: SearchContext) -> float:
        return self.inner.share(ctx)

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget) -> Found | None:
        answer = self.inner.run(ctx, state, budget)
        self.found.append(None if answer is None else answer.solution.makespan(ctx.inst))
        return answer


def test_memory_free_problems_get_justified_sampling_and_never_lose_to_it() -> None:
    """Justified sampling runs where there are no buffers and CP-SAT proved nothing; the
    solve keeps its answer only when shorter (the whole pipeline, with no whole model
    first so that nothing proves optimality before it)."""
    from tests.engine.test_justify import random_rcpsp

    found: list[int | None] = []
    ctx = context(*random_rcpsp(3, n=20), params=replace(DEFAULT, whole_model_max_ops=0))
    pipeline = tuple(Improvement(tuple(Recording(inner, found) if isinstance(inner, Justify)
                                       else inner for inner in stage.stages))
                     if isinstance(stage, Improvement) else stage for stage in PIPELINE)
    state = SearchState(ctx.bound)
    run_stages(pipeline, ctx, state, TimeBudget.start(1.0))
    (made,) = found
    assert made is not None and state.incumbent.makespan(ctx.inst) <= made
    assert verify(to_schedule(ctx.inst, state.incumbent, {})) == []
    assert not Justify().applies(context(gemm_problem(), target()), state)  # buffers
    state.cpsat_status = "OPTIMAL"
    assert not Justify().applies(ctx, state)


def test_the_timed_whole_model_gets_less_of_the_budget_where_there_are_buffers() -> None:
    """Using the whole limit, LNS gains more per second than the whole model where memory
    binds, so problems with buffers give the whole model a smaller share; a reproducible
    search gives it the same share either way."""
    from tests.engine.test_justify import random_rcpsp

    stage = WholeModel()
    buffers, none = (gemm_problem(), target()), random_rcpsp(3, n=12)
    assert stage.share(context(*buffers, reproducible=False)) == \
        DEFAULT.whole_model_share_timed_memory
    assert stage.share(context(*none, reproducible=False)) == DEFAULT.whole_model_share_timed
    assert DEFAULT.whole_model_share_timed_memory < DEFAULT.whole_model_share_timed
    assert stage.share(context(*buffers)) == stage.share(context(*none)) == \
        DEFAULT.whole_model_share


def test_the_whole_model_improves_problems_with_buffers_only_while_they_are_small() -> None:
    """Above ``whole_model_max_ops_memory`` ops LNS gets the whole model's time where
    there are buffers; problems without buffers keep it up to ``whole_model_max_ops``."""
    from tests.engine.test_justify import random_rcpsp

    stage = WholeModel()
    state = SearchState(0, Solution((), (), ()), "constructive")
    buffers, none = (gemm_problem(), target()), random_rcpsp(3, n=20)
    ops = len(buffers[0].ops)
    assert ops > 10
    for limit, applies in ((ops, True), (ops - 1, False)):
        params = replace(DEFAULT, whole_model_max_ops_memory=limit)
        assert stage.applies(context(*buffers, params=params), state) == applies
        assert stage.applies(context(*none, params=params), state)  # whole_model_max_ops
    assert DEFAULT.whole_model_max_ops_memory < DEFAULT.whole_model_max_ops


@dataclass(frozen=True)
class Scripted(Stage):
    """A stage that spends ``work`` of its part and answers ``answer`` (a makespan)."""

    fraction: float
    work: float
    answer: int | None
    ties: bool = False
    always: bool = False
    given: list[float] = field(default_factory=list)

    def share(self, ctx: SearchContext) -> float:
        return self.fraction

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget) -> Found | None:
        self.given.append(budget.left)
        budget.charge(self.work)
        if self.answer is None:
            return None
        return Found(Solution((0,), (self.answer,), ()), f"scripted-{self.answer}")


def test_the_loop_shares_the_budget_keeps_the_incumbent_and_stops_on_request() -> None:
    """Each stage gets its share of the work left (what an earlier one did not use
    included), a longer answer never replaces the incumbent and an equal one only for a
    stage that ties; after a stop request only the stages marked ``always`` run."""
    from tests.engine.test_justify import random_rcpsp

    ctx = context(*random_rcpsp(0, n=1))
    first, half, longer, tie, nothing = (Scripted(1.0, 2.0, 5), Scripted(0.5, 1.0, 4),
                                         Scripted(0.5, 0.0, 6), Scripted(1.0, 1.0, 4, True),
                                         Scripted(1.0, 0.0, None))
    state, budget = SearchState(0), TimeBudget.start(10.0, wall=600.0)
    run_stages((first, half, longer, tie, nothing), ctx, state, budget)
    assert (first.given, half.given, longer.given, tie.given, nothing.given) == \
        ([10.0], [4.0], [3.5], [7.0], [6.0])
    assert budget.spent == 4.0 and state.solver == "scripted-4" and state.lns_windows == 0
    assert state.incumbent.starts == (4,)
    stopped, final = Scripted(1.0, 0.0, 3), Scripted(0.0, 0.0, 2, always=True)
    interrupt.request()
    try:
        run_stages((stopped, final), ctx, state, budget)
    finally:
        interrupt.reset()
    assert stopped.given == [] and final.given == [0.0] and state.solver == "scripted-2"


@pytest.mark.parametrize("mirrored_proves", [True, False])
def test_a_memory_free_whole_model_searches_the_mirrored_problem_then_the_forward_one(
        monkeypatch: pytest.MonkeyPatch, mirrored_proves: bool) -> None:
    """The mirrored run gets ``mirrored_share`` of the whole model's time and goes first; its
    answer comes back forward and starts the forward run, which is skipped once optimality is
    proven; the better of the two bounds is kept."""
    from schedsearch.engine import whole_model as whole_model_module
    from schedsearch.engine.mirror import mirrored
    from schedsearch.engine.portfolio import list_schedule
    from tests.engine.test_justify import random_rcpsp, setup

    problem, tgt = random_rcpsp(5, n=12)
    inst, dag = setup(problem, tgt)
    start = list_schedule(inst, dag, TimeBudget.start(5.0))
    calls: list[tuple[bool, Solution, int]] = []

    def whole_model(inst_, dag_, solution, solver, bound, budget, *rest):  # type: ignore[no-untyped-def]
        flipped = dag_.edges != dag.edges
        calls.append((flipped, solution, bound))
        status = "OPTIMAL" if flipped and mirrored_proves else "FEASIBLE"
        return solution, {"solver": "cp-sat", "status": status}, 7 if flipped else 5

    monkeypatch.setattr(whole_model_module, "whole_model", whole_model)
    solution, meta, bound = whole_model_module.whole_model_both_ways(
        inst, dag, start, "constructive", 3, TimeBudget.start(5.0), 0, 1, lambda *_: None,
        DEFAULT.mirrored_share)
    assert [flipped for flipped, _, _ in calls] == ([True] if mirrored_proves
                                                    else [True, False])
    assert calls[0][1] == mirrored(inst, start) and calls[0][2] == 3
    assert bound == 7 and meta["status"] == ("OPTIMAL" if mirrored_proves else "FEASIBLE")
    if not mirrored_proves:
        assert calls[1][1] == mirrored(inst, mirrored(inst, start)) and calls[1][2] == 7
    assert solution.makespan(inst) <= start.makespan(inst)
