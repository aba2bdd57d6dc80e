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

The answer is the finalist with the shortest legal schedule, the default winning ties,
so the tuned makespan is never worse than the default configuration's. A default that
does not fit (a block larger than the memory, say) is dropped, not fatal: the descent
then starts from the leanest configuration (every numeric parameter at its smallest
value), and only when that does not fit either is the workload refused. The same seed
and worker count give the same answer, unless the wall-clock guard fires: a finalist
after the default whose search would, at the slowest rate seen so far in this run, end
past the time limit is not searched; its constructive schedule (legal) stands in for
it. ``TuneResult.skipped`` says whether that happened.
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
from schedsearch.engine import interrupt
from schedsearch.engine.budget import Budget
from schedsearch.engine.constructive import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.search import Progress, solve
from schedsearch.engine.solution import to_schedule
from schedsearch.tuning.screen import (
    UNITS_PER_SECOND,
    Estimate,
    OutOfBudget,
    Screen,
    ScreenBudget,
    descend,
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
    (None for a single task). ``skipped`` counts finalists the wall-clock guard left
    unsearched. ``default_makespan`` and ``default_schedule`` are None when the default
    configuration does not fit the target.
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
         progress: Callable[[Progress], None] | None = None) -> TuneResult:
    """The best configuration of ``workload`` on ``target`` found within ``time_limit``.

    ``on_stage(stage, note)`` hears when screening and each finalist's search begin,
    ``progress`` the finalists' searches (as :func:`schedsearch.engine.search.solve`'s);
    ``reproducible`` is passed on to each finalist's search.

    Raises :class:`InputError` if neither the workload as given nor its leanest
    configuration can be tiled and scheduled on the target (the error is the one the
    workload as given gets, naming its task).
    """
    if time_limit <= 0:
        raise InputError("time_limit must be positive", source="<options>", rule="OPTION")
    begin = time.perf_counter()
    model = cost_model(target)
    spaces = tuple(task_space(task, model) for task in workload.tasks)
    default = default_configuration(spaces)
    if on_stage is not None:
        on_stage("screening", f"{len(workload.tasks)} tasks")
    joint, individual, spent = _screen(workload, target, spaces, SCREEN_SHARE * time_limit)
    ranked = joint.ranked()
    start = joint.seen.get(default)
    finals = ([start] if start is not None else []) + [
        e for e in ranked if e.configuration != default][:finalists + (start is None)]
    results = _search(workload, target, finals, max(time_limit - spent, 0.0) / len(finals),
                      time_limit, begin, seed, workers, reproducible, on_stage, progress)
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
            seconds: float) -> tuple[Screen, Configuration | None, float]:
    """Screen ``seconds`` worth of work (see the module docstring): the workload's
    screen, the combination of individual bests (None for one task), seconds spent."""
    budget = ScreenBudget.of_seconds(seconds)
    granted = budget.units
    default = default_configuration(spaces)
    joint = Screen(workload, target, budget)
    try:
        start = _start(joint, spaces, default)
    except OutOfBudget:  # the start overdraws: only a stop request (or the net) ends it
        raise interrupt.Interrupted from None
    individual = None
    if len(spaces) > 1:
        each = budget.units * SOLO_SHARE / len(spaces)
        individual = tuple(_alone(workload, target, spaces, i, budget.portion(each))
                           for i in range(len(spaces)))
        with contextlib.suppress(OutOfBudget):  # screened before any descent: it competes
            joint.estimate(individual, force=True)
    joint.budget = budget.portion(budget.units * DEFAULT_DESCENT_SHARE)
    descend(joint, spaces, start)
    if individual is not None:
        joint.budget = budget.portion(budget.units)
        descend(joint, spaces, individual)
    return joint, individual, (granted - budget.units) / UNITS_PER_SECOND


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
           budget: ScreenBudget) -> TaskConfig:
    """Task ``index``'s best configuration when it runs by itself (its own descent)."""
    space = spaces[index]
    best = descend(Screen(solo(workload, index), target, budget), (space,), (space.default,))
    return space.default if best is None else best.configuration[0]


def _search(workload: Workload, target: Target, chosen: list[Estimate], share: float,
            time_limit: float, begin: float, seed: int, workers: int, reproducible: bool,
            on_stage: Callable[[str, str], None] | None,
            progress: Callable[[Progress], None] | None) -> list[tuple[Schedule, bool]]:
    """Per finalist, its schedule and whether the full search produced it (see the module
    docstring for the guard; the default, first, is always searched)."""
    results: list[tuple[Schedule, bool]] = []
    rate = 1.0
    for i, estimate in enumerate(chosen):
        problem = tile(apply(workload, estimate.configuration), target)
        elapsed = time.perf_counter() - begin
        if i and elapsed + share * rate > time_limit:
            results.append((_constructive_schedule(problem, target, share), False))
            continue
        started = time.perf_counter()
        if on_stage is not None:
            on_stage(f"finalist {i + 1}/{len(chosen)}", f"{len(problem.ops)} ops")
        schedule = solve(problem, target, time_limit=max(share, 1e-3), seed=seed,
                         workers=workers, reproducible=reproducible, progress=progress,
                         validated=True)  # tile() refuses a problem that cannot run
        rate = max(rate, (time.perf_counter() - started) / max(share, 1e-3))
        results.append((schedule, True))
    return results


def _constructive_schedule(problem: Problem, target: Target, seconds: float) -> Schedule:
    """The list scheduler's legal schedule, for a finalist the guard left unsearched; if
    every pass stalls, the exact last resort gets ``seconds`` (the finalist's share of
    the time), not an allowance of its own."""
    inst = build_instance(problem, target)
    solution = construct(inst, build_dag(inst, "tile"), budget=Budget.start(seconds))
    return to_schedule(inst, solution, {"solver": "constructive", "status": "FEASIBLE"})
