"""Cheap estimates of configurations, and the coordinate descent that ranks them.

The full search costs seconds per configuration; the joint space holds thousands. So
each configuration is first *screened*: tiled, bounded by the cost model
(:func:`schedsearch.engine.bounds.lower.lower_bound`) and, unless that bound already shows it
cannot beat the best constructive makespan seen so far, scheduled by the memory-aware list
scheduler (:func:`schedsearch.engine.constructive.construct`), which takes milliseconds and is
legal. A configuration that cannot fit (a tile larger than memory, no memory-feasible
order) is *infeasible* and dropped.

The budget is work, not wall time, so that a seed gives the same answer on any machine:
each screen charges the ops of its tiled problem once for tiling and bounding and once
more for the list scheduler, against ``UNITS_PER_SECOND`` units per second of time limit
(calibrated: about 60 us per op and stage on a 2-core machine). A wall-clock deadline
far beyond the budget (``WALL_SLACK`` times it plus ``WALL_GRACE`` seconds) is only a
safety net for a slow or overloaded machine.

The descent: from a start configuration, for each task and each of its parameters in
turn, screen every other value of that parameter with the rest fixed and move to the
best one if it beats the current configuration (constructive makespan, then bound);
repeat until a whole round moves nothing or the budget runs out. Screening whole
workloads, not tasks one by one, is what lets contention for memory, DMA queues and DDR
bandwidth between tasks steer the choice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from models.errors import InputError
from models.formats import Target
from models.workload import Workload, tile
from schedsearch.engine import interrupt
from schedsearch.engine.bounds.lower import energy_relaxation, lower_bound
from schedsearch.engine.budget import Budget
from schedsearch.engine.constructive import construct, priced_modes
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.tuning.space import Configuration, TaskSpace, apply, coordinates, neighbours

__all__ = ["UNITS_PER_SECOND", "WALL_SLACK", "WALL_GRACE", "ScreenBudget", "OutOfBudget",
           "Estimate", "Screen", "descend"]

#: Work units (ops x stages) screened per second of budget; see the module docstring.
UNITS_PER_SECOND = 16_000
#: The wall-clock safety net: this many times the budget's calibrated seconds, plus
#: ``WALL_GRACE`` seconds (a short budget must not depend on a process's first-call costs).
WALL_SLACK = 2.0
WALL_GRACE = 1.0


class OutOfBudget(Exception):
    """The screening budget is spent: the descent stops where it is."""


@dataclass(slots=True)
class ScreenBudget:
    """Screening work left in ops x stages (:data:`UNITS_PER_SECOND`), plus the safety
    net; a portion's charges count against its parent too, so one tuning run's screens
    share one budget.

    Not :class:`schedsearch.engine.budget.Budget`: that one grants calibrated seconds of solver
    work with a hard deadline that cuts a search where it is (and records the cut), and
    stages poll it; this one counts configurations' ops, its deadline is a loose net far
    beyond the work (:data:`WALL_SLACK`, :data:`WALL_GRACE`), and running out raises
    :class:`OutOfBudget`, which ends the descent between two screens."""

    units: float
    deadline: float
    parent: ScreenBudget | None = None

    @classmethod
    def of_seconds(cls, seconds: float) -> ScreenBudget:
        return cls(seconds * UNITS_PER_SECOND,
                   time.perf_counter() + WALL_SLACK * seconds + WALL_GRACE)

    def portion(self, units: float) -> ScreenBudget:
        """At most ``units`` of what is left (never more than is left)."""
        return ScreenBudget(min(units, self.units), self.deadline, self)

    def charge(self, units: int, *, overdraw: bool = False) -> None:
        """Spend ``units``; OutOfBudget if nothing was left (unless ``overdraw``: work that
        must be done whatever the budget), the deadline has passed or a stop was
        requested (:mod:`schedsearch.engine.interrupt`)."""
        if (self.units <= 0 and not overdraw) or time.perf_counter() > self.deadline \
                or interrupt.requested():
            raise OutOfBudget
        budget: ScreenBudget | None = self
        while budget is not None:
            budget.units -= units
            budget = budget.parent


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
    budget: ScreenBudget
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
        self.budget.charge(0, overdraw=overdraw)
        try:
            problem = tile(apply(self.workload, configuration), self.target)
        except InputError:
            self.seen[configuration] = None
            return None
        ops = len(problem.ops)
        self.budget.charge(ops, overdraw=overdraw)
        relaxation = energy_relaxation(problem, self.target)  # the bound's and the prices'
        bound = lower_bound(problem, self.target, relaxation=relaxation).value
        constructive = None
        if force or self.best is None or bound < self.best:
            self.budget.charge(ops, overdraw=overdraw)
            inst = build_instance(problem, self.target)
            try:
                # The constructive's exact last resort gets the screening work left
                # (in seconds, within the wall time left): a configuration it cannot
                # settle in that time is dropped like an infeasible one instead of
                # eating the whole screening.
                seconds = min(self.budget.units / UNITS_PER_SECOND,
                              self.budget.deadline - time.perf_counter())
                constructive = construct(inst, build_dag(inst, "tile"),
                                         budget=Budget.start(max(0.0, seconds)),
                                         priced=priced_modes(inst, relaxation)
                                         ).makespan(inst)
            except InputError:
                self.seen[configuration] = None
                return None
            self.best = constructive if self.best is None else min(self.best, constructive)
        found = Estimate(configuration, ops, bound, constructive, order)
        self.seen[configuration] = found
        return found

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
