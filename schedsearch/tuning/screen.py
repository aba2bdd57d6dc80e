"""Cheap estimates of configurations, and the coordinate descent that ranks them.

The full search costs seconds per configuration; the joint space holds thousands. So
each configuration is first *screened*: tiled, bounded by the cost model
(:func:`schedsearch.engine.bounds.lower.lower_bound`) and, unless that bound already shows it
cannot beat the best constructive makespan seen so far, scheduled by the memory-aware list
scheduler (:func:`schedsearch.engine.fallback.construct`), which takes milliseconds and is
legal. A configuration that cannot fit (a tile larger than memory, no memory-feasible
order) is *infeasible* and dropped.

The budget is the search's own :class:`~schedsearch.engine.timebudget.TimeBudget`, spent
as work, not wall time, so that a seed gives the same answer on any machine: each screen
charges the ops of its tiled problem (plus ``STAGE_UNITS``) once for tiling and bounding
and once more for the list scheduler, at ``UNITS_PER_SECOND`` ops per calibrated second
(about 60 us per op and stage on a 2-core machine). Its wall-clock deadline, far beyond the work
(:func:`screening_budget`: the search's own far net), is only
a safety net for a slow or overloaded machine; running out of either raises
:class:`OutOfBudget`, which ends the descent between two screens.

The descent: from a start configuration, for each task and each of its parameters in
turn, screen every other value of that parameter with the rest fixed and move to the
best one if it beats the current configuration (constructive makespan, then bound);
repeat until a whole round moves nothing or the budget runs out. Screening whole
workloads, not tasks one by one, is what lets contention for memory, DMA queues and DDR
bandwidth between tasks steer the choice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from models.errors import InputError
from models.formats import Target
from models.workload import Workload, tile
from schedsearch.engine import interrupt
from schedsearch.engine.bounds.lower import energy_relaxation, lower_bound
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.portfolio import priced_modes
from schedsearch.engine.timebudget import TimeBudget
from schedsearch.tuning.space import Configuration, TaskSpace, apply, coordinates, neighbours

__all__ = ["UNITS_PER_SECOND", "STAGE_UNITS", "screening_budget",
           "OutOfBudget", "Estimate", "Screen", "descend"]

#: Ops x stages screened per calibrated second of work; see the module docstring.
UNITS_PER_SECOND = 16_000
#: What a stage costs beyond its ops (tiling, the bound's LP, building the instance), in
#: the same units: about 12 ms a stage on a 2-core machine, where a 9-op workload's
#: screen took 20-25 ms. Without it a small workload's screening spent almost no work
#: and ran until the wall-clock net stopped it, at a point that depends on the load.
STAGE_UNITS = 200
class OutOfBudget(Exception):
    """The screening budget is spent: the descent stops where it is."""


def screening_budget(seconds: float) -> TimeBudget:
    """``seconds`` of screening work, with the reproducible budget's far wall-clock net
    (:data:`~schedsearch.engine.timebudget.WALL_SLACK`); portions of it
    (:meth:`TimeBudget.portion`) go to each descent."""
    return TimeBudget.start(seconds, reproducible=True)


@dataclass(frozen=True, slots=True)
class Estimate:
    """What screening found: the bound and, unless pruned by it, the constructive makespan.

    ``order`` is the position in which the configuration was first screened; it breaks
    ties deterministically (earlier wins, and the default is screened first).
    """

    configuration: Configuration
    ops: int
    bound: int
    constructive: int | None
    order: int

    @property
    def rank(self) -> tuple[int, int, int]:
        assert self.constructive is not None
        return (self.constructive, self.bound, self.order)


@dataclass
class Screen:
    """Memoised screening of one workload's configurations against a shared budget."""

    workload: Workload
    target: Target
    time_budget: TimeBudget
    #: configuration -> its estimate, or None when it is infeasible
    seen: dict[Configuration, Estimate | None] = field(default_factory=dict)
    best: int | None = None

    def estimate(self, configuration: Configuration, *, force: bool = False,
                 overdraw: bool = False) -> Estimate | None:
        """The estimate of ``configuration`` (None if infeasible); raises OutOfBudget.

        ``force`` schedules it even if its bound cannot beat the best seen (a start);
        ``overdraw`` screens it even if that takes more than the budget has left (the
        tuning's starting point, without which nothing can be compared).
        """
        if configuration in self.seen:
            known = self.seen[configuration]
            if known is None or known.constructive is not None or not force:
                return known
            order = known.order
        else:
            order = len(self.seen)
        self._charge(0, overdraw)
        try:
            problem = tile(apply(self.workload, configuration), self.target)
        except InputError:
            self.seen[configuration] = None
            return None
        ops = len(problem.ops)
        self._charge(STAGE_UNITS + ops, overdraw)
        relaxation = energy_relaxation(problem, self.target)  # the bound's and the prices'
        bound = lower_bound(problem, self.target, relaxation=relaxation).value
        constructive = None
        if force or self.best is None or bound < self.best:
            self._charge(STAGE_UNITS + ops, overdraw)
            inst = build_instance(problem, self.target)
            try:
                # The constructive's exact last resort gets the screening work left
                # (as work; the wall time left is its net): a configuration it cannot
                # settle in that time is dropped like an infeasible one instead of
                # eating the whole screening.
                resort = TimeBudget.start(max(0.0, self.time_budget.left),
                                          wall=self.time_budget.wall_left())
                constructive = construct(inst, build_dag(inst, "tile"), budget=resort,
                                         priced=priced_modes(inst, relaxation)
                                         ).makespan(inst)
            except InputError:
                self.seen[configuration] = None
                return None
            self.best = constructive if self.best is None else min(self.best, constructive)
        found = Estimate(configuration, ops, bound, constructive, order)
        self.seen[configuration] = found
        return found

    def _charge(self, ops: int, overdraw: bool) -> None:
        """Spend ``ops`` screened ops; OutOfBudget if no work was left or the wall-clock
        net has passed (unless ``overdraw``: work that must be done whatever the budget),
        or a stop was requested (:mod:`schedsearch.engine.interrupt`)."""
        spent = self.time_budget.left <= 0 or self.time_budget.wall_left() <= 0
        if (spent and not overdraw) or interrupt.requested():
            raise OutOfBudget
        self.time_budget.charge(ops / UNITS_PER_SECOND)

    def ranked(self) -> list[Estimate]:
        """Every scheduled (not pruned, not infeasible) estimate, best first."""
        found = [e for e in self.seen.values() if e is not None and e.constructive is not None]
        return sorted(found, key=lambda e: e.rank)


def descend(screen: Screen, spaces: tuple[TaskSpace, ...], start: Configuration
            ) -> Estimate | None:
    """Coordinate descent from ``start`` (see the module docstring); the best estimate it
    reached, or None if ``start`` itself is infeasible. Stops quietly when the budget is
    spent."""
    current = None
    try:
        current = screen.estimate(start, force=True)
        if current is None or current.constructive is None:
            return None
        moved = True
        while moved:
            moved = False
            for task, key in coordinates(spaces):
                for configuration in neighbours(spaces, current.configuration, task, key):
                    found = screen.estimate(configuration)
                    if (found is not None and found.constructive is not None
                            and found.rank[:2] < current.rank[:2]):
                        current, moved = found, True
    except OutOfBudget:
        pass
    return current
