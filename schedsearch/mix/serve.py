"""A mix served by the three policies: schedules, figures, and the ``--json`` document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.formats import Problem, Schedule, Target
from models.mix import Mix
from models.requests import mix_problem
from models.workload import MAX_OPS
from schedsearch.allotment import Grant
from schedsearch.mix.figures import PolicyFigures, score_all
from schedsearch.mix.policies import (
    MAKESPAN,
    Goal,
    ObjectiveSearch,
    PolicyRun,
    Search,
    run_policies,
)
from schedsearch.paths import DEFAULT_OPTIONS, SolveOptions

__all__ = ["MixReport", "serve"]


@dataclass(frozen=True, slots=True)
class MixReport:
    """Each policy's run and figures, in :data:`~schedsearch.mix.policies.POLICIES` order."""

    runs: dict[str, PolicyRun]
    figures: dict[str, PolicyFigures]

    def as_dict(self) -> dict[str, Any]:
        """``{"policies": {NAME: P}}``, ``P`` as :meth:`PolicyFigures.as_dict`."""
        return {"policies": {name: f.as_dict() for name, f in self.figures.items()}}


def _engine_search(options: SolveOptions) -> Search:
    def search(problem: Problem, target: Target, grant: Grant) -> Schedule:
        # imported at the first search: with CP-SAT (and pandas) 0.2 s of CPU that a
        # short limit, whose problems get list schedules only, need not pay
        from schedsearch.engine.search import solve

        return solve(problem, target, time_limit=grant.time_limit,
                     wall_limit=grant.wall_limit, seed=options.seed,
                     workers=options.workers, reproducible=options.reproducible,
                     validated=False)

    return search


def _engine_objective_search(options: SolveOptions) -> ObjectiveSearch:
    from schedsearch.engine.deadlines import ObjectiveAnswer, Objectives, search_objectives

    def search(problem: Problem, target: Target, objectives: Objectives,
               starts: dict[str, Schedule], grant: Grant) -> ObjectiveAnswer:
        return search_objectives(problem, target, objectives, starts=starts,
                                 time_limit=grant.time_limit, wall_limit=grant.wall_limit,
                                 seed=options.seed, workers=options.workers,
                                 reproducible=options.reproducible)

    return search


def serve(mix: Mix, target: Target, options: SolveOptions = DEFAULT_OPTIONS,
          max_ops: int = MAX_OPS, search: Search | None = None, goal: Goal = MAKESPAN,
          objective_search: ObjectiveSearch | None = None) -> MixReport:
    """Build the mix's problem on ``target``, run the three policies and score them;
    InputError if the mix cannot be tiled there; DeadlinesMissed
    (:mod:`schedsearch.engine.deadlines`) when ``goal``'s deadlines are hard and the
    searched policy misses some."""
    whole = mix_problem(mix, target, None, max_ops)
    runs = run_policies(whole, target, search or _engine_search(options), options, max_ops,
                        goal, objective_search or _engine_objective_search(options))
    return MixReport(runs, score_all(runs))
