"""``solve``: from a problem and a target to a legal schedule with a short makespan.

The pipeline, each stage starting from the previous stage's legal answer:

1. refuse what cannot fit (:func:`models.validate.validate_problem`: a buffer larger than
   its memory, an op whose operands exceed it, a mode larger than the target) and derive
   every precedence the accesses imply (:mod:`schedsearch.engine.hazards`; rule CYCLE if they
   contradict each other);
2. the memory-aware list scheduler (:mod:`schedsearch.engine.portfolio`): a legal schedule in
   milliseconds, or the stall (the op that could not start); after a stall, decided
   here and on the solve's own budget, CP-SAT on the whole problem as a last resort when
   the problem is small (``meta.solver`` is then ``cp-sat`` even if nothing later
   improves its answer), else a clear error naming that op; beside it, each task
   searched alone and the tasks put one after another (``tasks-in-sequence``,
   :mod:`schedsearch.engine.sequence`), so the answer is never worse than running the tasks in
   sequence with this search;
3. improvement within the time limit: the whole CP-SAT model first when the problem is
   small (:mod:`schedsearch.engine.cpsat`; it also proves a bound; on problems without buffers
   it searches the mirrored problem first, :mod:`schedsearch.engine.mirror`), then, on problems
   without buffers, sampling with double justification (:mod:`schedsearch.engine.justify`), then
   large-neighbourhood search over time windows (:mod:`schedsearch.engine.lns`) unless
   optimality was proven; each keeps the incumbent, so the answer is never worse than
   the constructive one;
4. optionally, peak memory at the best makespan (``secondary="peak-memory"``).

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
from typing import Any

from models.errors import InputError
from models.evaluation import evaluate
from models.formats import Problem, Schedule, Target
from models.validate import validate_problem
from schedsearch.engine import interrupt
from schedsearch.engine.bounds.lower import energy_relaxation, lower_bound
from schedsearch.engine.cpsat.model import (
    build,
    solve_built,
    whole_problem,
)
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.fallback import exact_fallback
from schedsearch.engine.hazards import Dag, build_dag
from schedsearch.engine.instance import Instance, Resource, build_instance
from schedsearch.engine.justify import justified
from schedsearch.engine.lns import improve
from schedsearch.engine.orders import tails
from schedsearch.engine.params import DEFAULT, SearchParams
from schedsearch.engine.portfolio import list_schedule, priced_modes
from schedsearch.engine.result import SolveStats, SolveStatus, refusal
from schedsearch.engine.sequence import TaskSolver, kernels_in_sequence
from schedsearch.engine.serial import Stall
from schedsearch.engine.slicing import restrict
from schedsearch.engine.solution import Solution, extent_bytes, to_schedule
from schedsearch.engine.timebudget import TimeBudget
from schedsearch.engine.whole_model import relaxes_memory, whole_model, whole_model_both_ways

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

    budget = TimeBudget.start(time_limit, wall=wall_limit, begin=begin,
                              reproducible=reproducible)
    try:
        found = list_schedule(inst, dag, budget, priced=priced, portfolio=params.portfolio)
        solver = "constructive"
        if isinstance(found, Stall):  # the exact last resort, on the solve's own budget
            found, solver = exact_fallback(inst, dag, found, source, budget, seed, workers,
                                           max_ops=params.whole_model_max_ops), "cp-sat"
    except InputError as error:
        if interrupt.requested():
            raise interrupt.Interrupted() from None
        raise refusal(error) from None
    solution = found
    serial = None
    serial_budget = budget.share(params.serial_share)
    if not serial_budget.exhausted() and _serial_could_win(inst, solution.makespan(inst),
                                                           params.serial_check_max_ops):
        serial = kernels_in_sequence(inst, serial_budget,
                                     _task_solver(seed, workers, placement, params))
    budget.absorb(serial_budget)
    displaced = None  # the list schedule, when the tasks in sequence replace it as start
    if serial is not None and serial.makespan(inst) < solution.makespan(inst) and \
            _respects(inst, dag, serial):
        solution, displaced, serial, solver = serial, solution, None, "tasks-in-sequence"
    emit("constructive", solution.makespan(inst))
    search = budget.share(1 - params.secondary_share) if secondary is not None else budget
    meta: dict[str, Any] = {"solver": solver, "status": "FEASIBLE"}
    cpsat_bound = None
    if 0 < inst.n_ops <= params.whole_model_max_ops and not interrupt.requested():
        whole = search.share(params.whole_model_share if reproducible else
                             params.whole_model_share_timed_memory if inst.n_buffers else
                             params.whole_model_share_timed)
        if inst.n_buffers:
            solution, meta, cpsat_bound = whole_model(
                inst, dag, solution, meta["solver"], bound, whole, seed, workers,
                relaxes_memory(inst, placement), emit)
        else:
            solution, meta, cpsat_bound = whole_model_both_ways(
                inst, dag, solution, meta["solver"], bound, whole, seed, workers, emit,
                params.mirrored_share)
        search.absorb(whole)
    if not inst.n_buffers and inst.n_ops and meta["status"] != "OPTIMAL" and \
            not interrupt.requested():
        part = search.share(params.justify_share)
        found = justified(inst, dag, part, seed, priced=priced,
                          lower=max(bound, cpsat_bound or 0))
        search.absorb(part)
        if found is not None and found.makespan(inst) < solution.makespan(inst):
            solution, meta["solver"] = found, "justified"
            emit("justified", solution.makespan(inst))
    if inst.n_ops and meta["status"] != "OPTIMAL":
        solution = _lns(inst, dag, solution, displaced, search, seed, workers,
                        max(bound, cpsat_bound or 0), placement, meta, emit)
    if serial is not None and serial.makespan(inst) < solution.makespan(inst):
        solution, meta["solver"] = serial, "tasks-in-sequence"
    if cpsat_bound is not None:
        parts["cpsat"] = cpsat_bound
        bound = max(bound, cpsat_bound)
    if secondary == "peak-memory" and not interrupt.requested():
        budget.absorb(search)
        solution, meta["secondary"] = _peak_memory(inst, dag, solution, bound, budget, seed,
                                                   workers, params.whole_model_max_ops)
    makespan = solution.makespan(inst)
    stats = SolveStats(
        solver=meta["solver"], bound=bound,
        gap=round((makespan - bound) / makespan, 6) if makespan else 0.0,
        wall_s=round(time.perf_counter() - begin, 3), reproducible=not budget.cut,
        seed=seed, workers=workers, granularity=granularity, placement=placement,
        cpsat_status=meta.get("cpsat_status"), cpsat_bound=cpsat_bound,
        lns_windows=meta.get("lns_windows", 0), lns_accepted=meta.get("lns_accepted", 0),
        secondary=meta.get("secondary"))
    status = (SolveStatus.INTERRUPTED if interrupt.requested()
              else SolveStatus.OPTIMAL if makespan <= bound or meta["status"] == "OPTIMAL"
              else SolveStatus.FEASIBLE)
    schedule = to_schedule(inst, solution, stats.as_meta(status))
    figures = evaluate(schedule)
    return SolveReport(schedule=schedule, bound=bound, bound_parts=parts,
                       ratio=makespan / bound if bound else 1.0,
                       busy_share=figures.busy_share, peak_bytes=figures.peak_bytes,
                       extent_bytes=figures.extent_bytes,
                       status=status, stats=stats)


def _lns(inst: Instance, dag: Dag, solution: Solution, displaced: Solution | None,
         budget: TimeBudget, seed: int, workers: int, lower: int, placement: bool,
         meta: dict[str, Any], emit: Callable[[str, int], None]) -> Solution:
    """LNS from ``solution``; where the tasks in sequence ``displaced`` the list schedule
    as the start, from each for half the budget (the list schedule first), keeping the
    better. Why: windows move a few ops, so LNS from tasks run end to end rarely
    interleaves them; on the tight Ascend pair at 153 ops and 60 s the tasks in sequence
    (1.091 of the bound) beat the list schedule (1.125) and LNS from them reached 1.086,
    where at 10 s, from the list schedule, it had reached 1.052; from both, 1.038."""
    starts = [solution] if displaced is None else [displaced, solution]
    windows = accepted = 0

    def improved(makespan: int) -> None:  # progress reports the best of both runs only
        if makespan < solution.makespan(inst):
            emit("lns", makespan)

    for k, start in enumerate(starts):
        if interrupt.requested():
            break
        part = budget.share(1 / (len(starts) - k))
        result = improve(inst, dag, start, part, seed=seed, workers=workers, lower=lower,
                         placement=placement, on_improve=improved)
        budget.absorb(part)
        windows += result.windows
        accepted += result.accepted
        if result.accepted and result.solution.makespan(inst) <= solution.makespan(inst):
            solution, meta["solver"] = result.solution, "lns"
    meta["lns_windows"] = windows
    meta["lns_accepted"] = accepted
    return solution


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


def _serial_could_win(inst: Instance, makespan: int, check_max_ops: int) -> bool:
    """Whether the tasks one after another could end before ``makespan``: the sum of a
    lower bound of each task alone is below it. The bound is each task's lane and budget
    work (:func:`_work_bound`), and, on problems of at most ``check_max_ops``
    ops (:attr:`SearchParams.serial_check_max_ops`),
    :func:`schedsearch.engine.bounds.lower.lower_bound` of the problem its kernel solves. Where the
    candidate cannot win, searching it (a quarter of the time) cannot change the answer, and the
    later stages get that time (on the tight pairs and chain the tasks in sequence are 30-70 %
    longer than the list schedule)."""

    tasks = list(dict.fromkeys(inst.op_task))
    if len(tasks) < 2:
        return False
    if sum(_work_bound(inst, task) for task in tasks) >= makespan:
        return False
    if inst.n_ops > check_max_ops:
        return True
    total = 0
    for task in tasks:
        try:
            sub, _ = restrict(inst.problem, task)
            total += lower_bound(sub, inst.target).value
        except InputError:  # no kernel of its own: kernels_in_sequence says so
            return True
        if total >= makespan:
            return False
    return True


def _work_bound(inst: Instance, task: str) -> int:
    """A lower bound of ``task``'s makespan alone: on each lane kind and budget, the
    least work its ops put on it (each op at its cheapest mode there) over capacity."""
    work: dict[Resource, int] = {}
    for op in range(inst.n_ops):
        if inst.op_task[op] == task:
            for key, cost in inst.least_work(op).items():
                work[key] = work.get(key, 0) + cost
    capacity = inst.capacities()
    return max((-(-cost // capacity[key]) for key, cost in work.items() if capacity[key]),
               default=0)


def _respects(inst: Instance, dag: Dag, solution: Solution) -> bool:
    """Whether ``solution`` keeps every edge of ``dag`` (a schedule found on another
    precedence graph may order some writers differently: then only the final comparison
    may take it, not a search that starts from it)."""
    ends = solution.ends(inst)
    return all(solution.starts[s] >= ends[p] + lag for p, s, lag in dag.edges
               if p < dag.n_ops and s < dag.n_ops)


def _peak_memory(inst: Instance, dag: Any, solution: Solution, bound: int, budget: TimeBudget,
                 seed: int, workers: int, max_ops: int) -> tuple[Solution, dict[str, Any]]:
    """Minimise the highest address used per memory, keeping the makespan (not tried
    above ``max_ops`` ops)."""
    if inst.n_ops > max_ops:
        return solution, {"objective": "peak-memory", "status": "SKIPPED_TOO_LARGE"}
    inc = Incumbent.of(inst, dag, solution)
    built = build(inst, dag, inc, whole_problem(dag, inc), bound, region_end=inc.makespan,
                  peak_memory_at=inc.makespan)
    outcome = solve_built(built, budget, work=budget.left, seed=seed, workers=workers)
    before = sum(extent_bytes(inst, solution).values())
    after = sum(extent_bytes(inst, outcome.solution).values()) if outcome.solution else before
    if outcome.solution is None or after >= before:
        return solution, {"objective": "peak-memory", "status": outcome.status,
                          "extent_bytes": before}
    return outcome.solution, {"objective": "peak-memory", "status": outcome.status,
                              "extent_bytes": after}
