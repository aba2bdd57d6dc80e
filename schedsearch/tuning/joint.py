"""``tune``: choose tiles, vector units and buffer depths of every task jointly.

Why jointly: tasks that run together contend for on-chip memory, copy queues and DDR
bandwidth, so the configuration that is best for a pair is often not each task's best
alone (a GEMM's big tiles are fastest alone but leave no memory for its neighbour's
loads). So the tuner scores whole-workload configurations on the whole workload.

The pipeline, under one time limit:

1. the space (:mod:`schedsearch.tuning.space`): per task, the operator's candidate tile
   sizes, loop orders, row blocks, unit counts and buffer depths, default included;
2. screening (:mod:`schedsearch.tuning.screen`), ``SCREEN_SHARE`` of the time as a
   deterministic work budget: first each task alone (``SOLO_SHARE`` of it: each task's
   individual best, for comparison and as a second start), then a coordinate descent
   over the whole workload from the default configuration, then one from the
   combination of individual bests. Each configuration is tiled, bounded by the cost
   model and, unless the bound rules it out, scheduled by the constructive scheduler;
3. the full search (:func:`schedsearch.engine.search.solve`) on the finalists: the default
   configuration first, then the ``FINALISTS`` best screened ones, each with an equal
   share of the time left (computed from the work spent, so it too is deterministic).

One :class:`~schedsearch.engine.timebudget.TimeBudget` keeps the time of a tuning run,
counted from ``started`` (a command's own start, so its imports and reading count):
screening spends a portion of its work (and, using the time, at most ``SCREEN_SHARE``
of the wall time left), the finalists are granted what is left as each begins
(:class:`~schedsearch.allotment.Allotment`).

The answer is the finalist with the shortest legal schedule, the default winning ties,
so the tuned makespan is never worse than the default configuration's. A default that
does not fit (a block larger than the memory, say) is dropped, not fatal: the descent
then starts from the leanest configuration (every numeric parameter at its smallest
value), and only when that does not fit either is the workload refused. The same seed
and worker count give the same answer (``reproducible``: every finalist is searched on
its share of the work, with ``WALL_SLACK`` times that as its wall-clock net, whatever
the machine's load). Without ``reproducible`` the
finalists use the wall time instead, each at most its share of what is left; a finalist
after the default that finds the time limit passed is not searched, and its
constructive schedule (legal) stands in for it. ``TuneResult.skipped`` says whether
that happened.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from models.cost import cost_model
from models.errors import InputError
from models.formats import Problem, Schedule, Target
from models.workload import Workload, tile
from schedsearch.allotment import MIN_SECONDS, TAIL_SHARE, Allotment
from schedsearch.engine import interrupt
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.search import Progress, solve
from schedsearch.engine.solution import to_schedule
from schedsearch.engine.timebudget import WALL_SLACK, TimeBudget
from schedsearch.tuning.screen import (
    Estimate,
    OutOfBudget,
    Screen,
    descend,
    screening_budget,
)
from schedsearch.tuning.space import (
    Configuration,
    TaskConfig,
    TaskSpace,
    apply,
    as_dict,
    default_configuration,
    lean_configuration,
    solo,
    task_space,
)
from schedsearch.wording import counted

__all__ = ["tune", "TuneResult", "Candidate", "SCREEN_SHARE", "SOLO_SHARE",
           "DEFAULT_DESCENT_SHARE", "FINALISTS"]

#: Share of the time limit spent screening (as a work budget).
SCREEN_SHARE = 0.35
#: Share of the screening budget for the tasks alone (split evenly between them).
SOLO_SHARE = 0.25
#: Share of the rest of the screening budget for the descent from the default.
DEFAULT_DESCENT_SHARE = 0.6
#: Finalists besides the default configuration that get the full search.
FINALISTS = 2

Config = dict[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One screened configuration: its bound, constructive makespan and, for a finalist,
    the makespan of the full search (None otherwise)."""

    configuration: Config
    bound: int
    constructive: int
    makespan: int | None
    default: bool

    @property
    def best(self) -> int:
        """The shortest legal makespan known for this configuration."""
        return self.constructive if self.makespan is None else self.makespan

    def as_dict(self) -> dict[str, Any]:
        return {"configuration": self.configuration, "bound": self.bound,
                "constructive": self.constructive, "makespan": self.makespan,
                "default": self.default}


@dataclass(frozen=True, slots=True)
class TuneResult:
    """The chosen configuration and its schedule, the default's, and what was screened.

    ``candidates`` are sorted by :attr:`Candidate.best`, then constructive makespan, bound
    and screening order. ``individual`` combines each task's best configuration alone
    (None for a single task). ``skipped`` counts finalists left unsearched because the
    time limit had passed (never with ``reproducible``). ``default_makespan`` and
    ``default_schedule`` are None when the default configuration does not fit the target.
    """

    workload: str
    target: str
    chosen: Config
    makespan: int
    schedule: Schedule
    default: Config
    default_makespan: int | None
    default_schedule: Schedule | None
    individual: Config | None
    candidates: tuple[Candidate, ...]
    screened: int
    infeasible: int
    searched: int
    skipped: int
    wall_s: float

    def as_dict(self) -> dict[str, Any]:
        """The ``schedsearch tune --json`` document."""
        return {"chosen": self.chosen, "makespan": self.makespan,
                "default_makespan": self.default_makespan,
                "candidates": [c.as_dict() for c in self.candidates]}


def tune(workload: Workload, target: Target, *, time_limit: float = 10.0, seed: int = 0,
         workers: int = 2, finalists: int = FINALISTS, reproducible: bool = True,
         on_stage: Callable[[str, str], None] | None = None,
         progress: Callable[[Progress], None] | None = None,
         started: float | None = None) -> TuneResult:
    """The best configuration of ``workload`` on ``target`` found within ``time_limit``.

    ``on_stage(stage, note)`` hears when screening and each finalist's search begin,
    ``progress`` the finalists' searches (as :func:`schedsearch.engine.search.solve`'s);
    ``reproducible`` is passed on to each finalist's search. ``started`` (a
    :func:`time.perf_counter` value, default now) is when the limit began: a command
    passes its own start, so that its preparation counts too.

    Raises :class:`InputError` if neither the workload as given nor its leanest
    configuration can be tiled and scheduled on the target (the error is the one the
    workload as given gets, naming its task).
    """
    if time_limit <= 0:
        raise InputError("time_limit must be positive", source="<options>", rule="OPTION")
    begin = time.perf_counter() if started is None else started
    model = cost_model(target)
    spaces = tuple(task_space(task, model) for task in workload.tasks)
    default = default_configuration(spaces)
    if on_stage is not None:
        on_stage("screening", counted(len(workload.tasks), "task"))
    # Work is counted in both modes: it sets the shares (``reproducible`` decides only
    # whether the finalists' searches stop by it or use the wall time).
    time_budget = TimeBudget(work=time_limit, deadline=begin + time_limit,
                        reproducible=reproducible)
    joint, individual = _screen(workload, target, spaces, time_budget)
    ranked = joint.ranked()
    start = joint.seen.get(default)
    finals = ([start] if start is not None else []) + [
        e for e in ranked if e.configuration != default][:finalists + (start is None)]
    results = _search(workload, target, finals, time_budget, seed, workers, on_stage, progress)
    winner = min(range(len(finals)), key=lambda i: (results[i][0].makespan, i))
    searched = {e.configuration: s.makespan
                for e, (s, full) in zip(finals, results, strict=True) if full}
    candidates = [Candidate(as_dict(spaces, e.configuration), e.bound, e.rank[0],
                            searched.get(e.configuration), e.configuration == default)
                  for e in ranked]
    candidates.sort(key=lambda c: (c.best, c.constructive, c.bound))
    default_schedule = results[0][0] if start is not None else None
    return TuneResult(
        workload=workload.name, target=target.name,
        chosen=as_dict(spaces, finals[winner].configuration),
        makespan=results[winner][0].makespan, schedule=results[winner][0],
        default=as_dict(spaces, default),
        default_makespan=None if default_schedule is None else default_schedule.makespan,
        default_schedule=default_schedule,
        individual=None if individual is None else as_dict(spaces, individual),
        candidates=tuple(candidates), screened=len(joint.seen),
        infeasible=sum(e is None for e in joint.seen.values()),
        searched=len(searched), skipped=len(finals) - len(searched),
        wall_s=round(time.perf_counter() - begin, 3))


def _screen(workload: Workload, target: Target, spaces: tuple[TaskSpace, ...],
            time_budget: TimeBudget) -> tuple[Screen, Configuration | None]:
    """Screen ``SCREEN_SHARE`` of ``time_budget``'s time as work (see the module docstring,
    and :func:`screening_budget` for its wall-clock net), charged to ``time_budget``: the
    workload's screen and the combination of individual bests (None for one task)."""
    screening = screening_budget(SCREEN_SHARE * time_budget.work)
    if not time_budget.reproducible:  # the wall time is the limit: screening gets its share
        screening.deadline = min(screening.deadline, time_budget.share(SCREEN_SHARE).deadline)
    default = default_configuration(spaces)
    joint = Screen(workload, target, screening)
    try:
        start = _start(joint, spaces, default)
    except OutOfBudget:  # the start overdraws: only a stop request ends it
        raise interrupt.Interrupted from None
    individual = None
    if len(spaces) > 1:
        each = screening.left * SOLO_SHARE / len(spaces)
        individual = tuple(_alone(workload, target, spaces, i, screening, each)
                           for i in range(len(spaces)))
        with contextlib.suppress(OutOfBudget):  # screened before any descent: it competes
            joint.estimate(individual, force=True)
    _descend_on(joint, spaces, start, screening, screening.left * DEFAULT_DESCENT_SHARE)
    if individual is not None:
        _descend_on(joint, spaces, individual, screening, screening.left)
    time_budget.charge(screening.spent)
    return joint, individual


def _descend_on(joint: Screen, spaces: tuple[TaskSpace, ...], start: Configuration,
                screening: TimeBudget, work: float) -> None:
    """The descent from ``start`` on a portion of ``work`` of the screening budget."""
    joint.time_budget = screening.portion(work)
    descend(joint, spaces, start)
    screening.absorb(joint.time_budget)
    joint.time_budget = screening


def _start(joint: Screen, spaces: tuple[TaskSpace, ...], default: Configuration
           ) -> Configuration:
    """Where the descent starts: the default configuration, or the leanest one when the
    default does not fit; InputError (the workload as given's) when neither does."""
    if joint.estimate(default, force=True, overdraw=True) is not None:
        return default
    lean = lean_configuration(spaces)
    if joint.estimate(lean, force=True, overdraw=True) is not None:
        return lean
    tile(joint.workload, joint.target)  # raises the InputError that names the task
    raise InputError("no memory-feasible schedule of the workload as given, nor of its "
                     "leanest configuration", source=joint.workload.source, rule="FIT")


def _alone(workload: Workload, target: Target, spaces: tuple[TaskSpace, ...], index: int,
           screening: TimeBudget, work: float) -> TaskConfig:
    """Task ``index``'s best configuration when it runs by itself (its own descent, on a
    portion of ``work`` of the screening budget)."""
    space = spaces[index]
    portion = screening.portion(work)
    best = descend(Screen(solo(workload, index), target, portion), (space,), (space.default,))
    screening.absorb(portion)
    return space.default if best is None else best.configuration[0]


def _search(workload: Workload, target: Target, chosen: list[Estimate],
            time_budget: TimeBudget, seed: int, workers: int,
            on_stage: Callable[[str, str], None] | None,
            progress: Callable[[Progress], None] | None) -> list[tuple[Schedule, bool]]:
    """Per finalist, its schedule and whether the full search produced it: each is
    granted an equal part of what ``time_budget`` has left as it begins
    (:class:`~schedsearch.allotment.Allotment`): of the work with ``reproducible``
    (``WALL_SLACK`` times that as its wall-clock net), else of the wall time, less
    :data:`~schedsearch.allotment.TAIL_SHARE` of the limit kept for checking and output.
    The default, first, is always searched; see the module docstring for the others
    without ``reproducible``."""
    tail = 0.0 if time_budget.reproducible else TAIL_SHARE * time_budget.work
    allotment = Allotment(time_budget, tail=tail, planned=len(chosen))
    results: list[tuple[Schedule, bool]] = []
    for i, estimate in enumerate(chosen):
        problem = tile(apply(workload, estimate.configuration), target)
        grant = allotment.grant()
        if not time_budget.reproducible and i and grant.wall_limit <= MIN_SECONDS:
            results.append((_constructive_schedule(problem, target, grant.time_limit), False))
            continue
        if on_stage is not None:
            on_stage(f"finalist {i + 1}/{len(chosen)}", counted(len(problem.ops), "op"))
        wall = WALL_SLACK * grant.time_limit if time_budget.reproducible else grant.wall_limit
        schedule = solve(problem, target, time_limit=grant.time_limit, seed=seed,
                         workers=workers, reproducible=time_budget.reproducible, progress=progress,
                         validated=True, wall_limit=wall)  # tile() refuses what cannot run
        results.append((schedule, True))
    return results


def _constructive_schedule(problem: Problem, target: Target, seconds: float) -> Schedule:
    """The list scheduler's legal schedule, for a finalist the guard left unsearched; if
    every pass stalls, the exact last resort gets ``seconds`` (the finalist's share of
    the time), not an allowance of its own."""
    inst = build_instance(problem, target)
    solution = construct(inst, build_dag(inst, "tile"), budget=TimeBudget.start(seconds))
    return to_schedule(inst, solution, {"solver": "constructive", "status": "FEASIBLE"})
