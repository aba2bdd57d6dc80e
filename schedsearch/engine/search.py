"""``solve``: from a problem and a target to a legal schedule with a short makespan.

First the checks, the indexed problem and the lower bound: refuse what cannot fit
(:func:`models.validate.validate_problem`: a buffer larger than its memory, an op whose
operands exceed it, a mode larger than the target) and derive every precedence the
accesses imply (:mod:`schedsearch.engine.hazards`; rule CYCLE if they contradict each
other). Then the stages (:mod:`schedsearch.engine.stages`), each starting from the
incumbent the previous ones left, run by one loop that gives each its share of the time
budget, takes back what it did not use, keeps the incumbent, honours a stop request and
reports progress:

1. the memory-aware list scheduler (:mod:`schedsearch.engine.portfolio`): a legal schedule
   in milliseconds, or the stall (the op that could not start); after a stall, on the
   solve's own budget, CP-SAT on the whole problem as a last resort when the problem is
   small (``meta.solver`` is then ``cp-sat`` even if nothing later improves its answer),
   else a clear error naming that op;
2. each task searched alone and the tasks put one after another (``tasks-in-sequence``,
   :mod:`schedsearch.engine.sequence`), so the answer is never worse than running the
   tasks in sequence with this search;
3. improvement within the time limit: the whole CP-SAT model first when the problem is
   small (:mod:`schedsearch.engine.whole_model`; it also proves a bound; on problems
   without buffers it searches the mirrored problem first), then, on problems without
   buffers, sampling with double justification (:mod:`schedsearch.engine.justify`), then
   large-neighbourhood search over time windows (:mod:`schedsearch.engine.lns`) unless
   optimality was proven;
4. the tasks in sequence once more, if they are still shorter;
5. optionally, peak memory at the best makespan (``secondary="peak-memory"``).

The time limit is kept twice (:mod:`schedsearch.engine.timebudget`): as a deterministic budget of
work (CP-SAT conflicts at a conservatively calibrated rate per second, model nodes
built), which normally ends the search, so the same seed and worker count give the same
schedule; and as a hard wall-clock deadline for everything after the input is read, which
cuts the search on a machine slower or busier than calibrated and then records
``meta.reproducible = false``. ``workers`` CP-SAT runs go side by side in threads (a
portfolio on one model, or several LNS windows at once).

Quality is reported against the best lower bound available: the largest of the cost
model's bound (:func:`schedsearch.engine.bounds.lower.lower_bound`), the longest chain of the
derived precedences, and CP-SAT's proven bound when the whole model was solved.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from models.errors import InputError
from models.evaluation import evaluate
from models.formats import Problem, Schedule, Target
from models.validate import validate_problem
from schedsearch.engine import interrupt
from schedsearch.engine.bounds.lower import energy_relaxation, lower_bound
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import tails
from schedsearch.engine.params import DEFAULT, SearchParams
from schedsearch.engine.portfolio import priced_modes
from schedsearch.engine.result import SolveStats, SolveStatus, refusal
from schedsearch.engine.sequence import TaskSolver
from schedsearch.engine.solution import to_schedule
from schedsearch.engine.stages import PIPELINE, SearchContext, SearchState, run_stages
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["solve", "solve_report", "Progress", "SolveReport", "SECONDARIES"]

SECONDARIES = ("peak-memory",)
@dataclass(frozen=True, slots=True)
class Progress:
    """One line of progress: the stage, best makespan so far, best lower bound, seconds."""

    stage: str
    makespan: int
    bound: int
    elapsed: float


@dataclass(frozen=True, slots=True)
class SolveReport:
    """The schedule, how the solve ended, and the figures a summary needs (from the one
    cost model)."""

    schedule: Schedule
    bound: int
    bound_parts: dict[str, int]
    ratio: float
    busy_share: dict[str, float]
    #: Per memory, the largest sum of sizes of the buffers live at one instant.
    peak_bytes: dict[str, int]
    #: Per memory, the highest address used (``offset + size``): what the peak-memory
    #: secondary minimises.
    extent_bytes: dict[str, int]
    status: SolveStatus
    stats: SolveStats


def solve(problem: Problem, target: Target, *, time_limit: float = 10.0, seed: int = 0,
          workers: int = 2, granularity: str = "tile", secondary: str | None = None,
          placement: bool = True, reproducible: bool = True,
          progress: Callable[[Progress], None] | None = None,
          validated: bool = False, wall_limit: float | None = None,
          params: SearchParams = DEFAULT) -> Schedule:
    """A legal schedule of ``problem`` on ``target`` with the shortest makespan found.

    Raises :class:`InputError` for a problem that cannot fit or whose dependencies form a
    cycle. ``granularity="task"`` puts a barrier between consecutive tasks. ``placement``
    lets LNS windows relax memory and have the placement engine assign addresses.
    ``reproducible`` stops the search by its deterministic work budget (same seed and
    workers, same schedule; often well before the limit); otherwise it searches until the
    time limit (or until the makespan meets the bound) and the answer may vary by run.
    ``validated``, ``wall_limit`` and ``params`` as in :func:`solve_report`.
    """
    return solve_report(problem, target, time_limit=time_limit, seed=seed, workers=workers,
                        granularity=granularity, secondary=secondary, placement=placement,
                        reproducible=reproducible, progress=progress,
                        validated=validated, wall_limit=wall_limit, params=params).schedule


def solve_report(problem: Problem, target: Target, *, time_limit: float = 10.0,
                 seed: int = 0, workers: int = 2, granularity: str = "tile",
                 secondary: str | None = None, placement: bool = True,
                 reproducible: bool = True,
                 progress: Callable[[Progress], None] | None = None,
                 source: str = "<problem>", started: float | None = None,
                 validated: bool = False, wall_limit: float | None = None,
                 params: SearchParams = DEFAULT) -> SolveReport:
    """:func:`solve`, with the lower bound and the cost model's figures of the result.

    ``started`` (a :func:`time.perf_counter` value, default now) is when the time limit
    began: a caller that tiled the problem first passes its own start. A problem that is
    well formed but gets no schedule raises :class:`~schedsearch.engine.result.NoSchedule`,
    saying whether that is proved; a stop request (:mod:`schedsearch.engine.interrupt`) ends the
    search with the best legal schedule so far (status INTERRUPTED), or raises
    :class:`~schedsearch.engine.interrupt.Interrupted` when there is none yet.

    ``validated`` says the caller already checked ``problem`` against ``target``
    (:func:`models.workload.load_problem_input` does): the check is then not repeated.
    The energy LP is solved once, for the bound and for the list scheduler's prices.
    ``wall_limit`` is the hard wall-clock limit: by default ``time_limit`` when the
    search uses the time, and only a far safety net when it is ``reproducible``
    (:data:`~schedsearch.engine.timebudget.WALL_SLACK` times the limit, plus
    :data:`~schedsearch.engine.timebudget.WALL_GRACE`), so that the work budget, which
    repeats, ends it on a loaded machine too. ``params`` holds every share and pass of the
    search (:mod:`schedsearch.engine.params`).
    """
    if secondary is not None and secondary not in SECONDARIES:
        raise InputError(f"secondary must be one of {SECONDARIES}, got {secondary!r}",
                         source="<options>", rule="OPTION")
    begin = time.perf_counter() if started is None else started
    try:
        if not validated:
            validate_problem(problem, target, source)
        inst = build_instance(problem, target)
        dag = build_dag(inst, granularity)
    except InputError as error:
        raise refusal(error.with_source(source)) from None
    relaxation = energy_relaxation(problem, target)
    priced = priced_modes(inst, relaxation)
    parts = dict(lower_bound(problem, target, relaxation=relaxation).parts)
    parts["dependency_chain"] = max(tails(inst, dag), default=0)
    bound = max(parts.values(), default=0)

    def emit(stage: str, makespan: int) -> None:
        if progress is not None:
            progress(Progress(stage, makespan, bound, time.perf_counter() - begin))

    ctx = SearchContext(inst, dag, params, emit, _task_solver(seed, workers, placement, params),
                        bound, priced=priced, source=source, seed=seed, workers=workers,
                        granularity=granularity, placement=placement,
                        reproducible=reproducible, secondary=secondary)
    budget = TimeBudget.start(time_limit, wall=wall_limit, begin=begin,
                              reproducible=reproducible)
    state = SearchState(bound)
    run_stages(PIPELINE, ctx, state, budget)
    return _report(ctx, state, parts, not budget.cut, time.perf_counter() - begin)


def _report(ctx: SearchContext, state: SearchState, parts: dict[str, int],
            reproducible: bool, wall_s: float) -> SolveReport:
    """The schedule of the incumbent, its status and figures, and the bound's parts
    (``parts``, to which CP-SAT's proven bound is added when the whole model ran)."""
    inst, solution = ctx.inst, state.incumbent
    if state.cpsat_bound is not None:
        parts["cpsat"] = state.cpsat_bound
    bound, makespan = state.bound, solution.makespan(inst)
    stats = SolveStats(
        solver=state.solver, bound=bound,
        gap=round((makespan - bound) / makespan, 6) if makespan else 0.0,
        wall_s=round(wall_s, 3), reproducible=reproducible, seed=ctx.seed,
        workers=ctx.workers, granularity=ctx.granularity, placement=ctx.placement,
        cpsat_status=state.cpsat_status, cpsat_bound=state.cpsat_bound,
        lns_windows=state.lns_windows, lns_accepted=state.lns_accepted,
        secondary=None if state.secondary is None else state.secondary.as_meta())
    status = (SolveStatus.INTERRUPTED if interrupt.requested()
              else SolveStatus.OPTIMAL if makespan <= bound or state.proven_optimal
              else SolveStatus.FEASIBLE)
    schedule = to_schedule(inst, solution, stats.as_meta(status))
    figures = evaluate(schedule)
    return SolveReport(schedule=schedule, bound=bound, bound_parts=parts,
                       ratio=makespan / bound if bound else 1.0,
                       busy_share=figures.busy_share, peak_bytes=figures.peak_bytes,
                       extent_bytes=figures.extent_bytes,
                       status=status, stats=stats)


def _task_solver(seed: int, workers: int, placement: bool, params: SearchParams
                 ) -> TaskSolver:
    """The search on one task alone, with the solve's seed, workers, placement and
    parameters."""
    def solve_task(problem: Problem, target: Target, seconds: float, wall: float,
                   reproducible: bool) -> Schedule:
        return solve_report(problem, target, time_limit=seconds, seed=seed, workers=workers,
                            placement=placement, reproducible=reproducible,
                            validated=True, wall_limit=wall, params=params).schedule
    return solve_task
