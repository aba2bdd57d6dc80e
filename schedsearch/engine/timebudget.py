"""The time limit, kept twice: as deterministic work, and as a hard wall-clock deadline.

Why two clocks. A search stopped by wall time stops at a machine- and load-dependent
point, so the same seed would give different schedules; a search stopped by counting its
own work (CP-SAT conflicts, model nodes built) repeats exactly. So every stage spends
*work*, measured in calibrated seconds (see :func:`schedsearch.engine.cpsat.model.conflict_cost`),
and stops when its share is spent: that is the normal stopping rule. The calibration is
conservative, so on an idle machine the work runs out before the wall clock does. On a
loaded machine it may not: then the *deadline* cuts the search wherever it is, the answer
is still the best legal schedule found, and :attr:`TimeBudget.cut` records that this run may
not repeat (``meta.reproducible = false``).

Two modes. *Reproducible* (``reproducible=True``): the work granted equals the seconds
given, so the same seed and worker count give the same schedule, at the price of
stopping early (the calibration is conservative: on an idle machine a search ends at
15-55% of its limit). *Use the time* (``reproducible=False``): the work granted is
:data:`UNMETERED_WORK`, far more than any limit, so only the deadline stops the search:
every second the user gives is searched, and the answer depends on the machine's speed.

The tuner's screening spends the same kind of budget (:mod:`schedsearch.tuning.screen`).
Named *time* budget because a budget alone is, in the formats, a DDR bandwidth budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

__all__ = ["TimeBudget", "UNMETERED_WORK", "WALL_SLACK", "WALL_GRACE"]

#: The work a budget that uses its whole time is granted (calibrated seconds): finite, so
#: that conflict caps derived from it stay integers CP-SAT accepts, and never the limit.
UNMETERED_WORK = 1e9
#: A reproducible budget's wall-clock safety net, unless its caller gives one: this many
#: times its work, plus :data:`WALL_GRACE` seconds (a short budget must not depend on a
#: process's first-call costs). With the net at the limit itself, PSPLIB J30 at 2 s
#: (``psplib_bench --reproducible``) was cut by the clock on J30_121, 241 and 281 on a
#: shared machine, and a 0.3 s solve of 22 ops at load 4 too; a machine up to this much
#: slower than calibrated still gives the same answer (the tuner's net is the same). At
#: 8 the net still cut PSPLIB runs at load 15-24 on 2 cores (4 of 12 J60 instances at 2 s
#: differed from their rerun), where a process gets a twelfth of a core; 30 leaves room.
WALL_SLACK = 30.0
WALL_GRACE = 1.0


@dataclass(slots=True)
class TimeBudget:
    """``work`` calibrated seconds granted, ``spent`` of them used; ``deadline`` a
    :func:`time.perf_counter` value; ``cut`` once the deadline stopped something;
    ``reproducible`` false when only the deadline is meant to stop the search."""

    work: float
    deadline: float
    spent: float = 0.0
    cut: bool = False
    reproducible: bool = True

    @staticmethod
    def start(seconds: float, *, wall: float | None = None, begin: float | None = None,
              reproducible: bool = True) -> TimeBudget:
        """A budget of ``seconds`` of work and ``wall`` seconds of wall time counted from
        ``begin`` (default: now). ``reproducible``: the work ends it, and ``wall`` is by
        default only a far safety net (:data:`WALL_SLACK`). Not ``reproducible``: the
        work is :data:`UNMETERED_WORK`, so the wall clock alone ends it, by default at
        ``seconds``."""
        now = time.perf_counter() if begin is None else begin
        if wall is None:
            wall = WALL_SLACK * seconds + WALL_GRACE if reproducible else seconds
        return TimeBudget(work=seconds if reproducible else UNMETERED_WORK,
                          deadline=now + wall, reproducible=reproducible)

    @property
    def left(self) -> float:
        return self.work - self.spent

    def wall_left(self) -> float:
        return max(0.0, self.deadline - time.perf_counter())

    def exhausted(self) -> bool:
        """True when the work is spent, or the deadline passed (which marks the cut)."""
        if self.left <= 0:
            return True
        if time.perf_counter() >= self.deadline:
            self.cut = True
            return True
        return False

    def charge(self, work: float) -> None:
        self.spent += work

    def share(self, fraction: float, *, wall: float | None = None) -> TimeBudget:
        """A sub-budget for one stage: ``fraction`` of the work left, and ``wall`` (by
        default the same fraction) of the wall time left, so that a stage whose work runs
        slower than calibrated still leaves the later stages their time. Give it back
        with :meth:`absorb`."""
        now = time.perf_counter()
        wall_fraction = fraction if wall is None else wall
        return TimeBudget(work=max(0.0, self.left) * fraction,
                      deadline=min(self.deadline, now + wall_fraction * self.wall_left()),
                      reproducible=self.reproducible)

    def portion(self, work: float) -> TimeBudget:
        """A sub-budget of at most ``work`` of the work left, with the same deadline.
        Give it back with :meth:`absorb`."""
        return TimeBudget(work=min(work, self.left), deadline=self.deadline,
                          reproducible=self.reproducible)

    def within(self, seconds: float) -> TimeBudget:
        """A sub-budget for one step that may take at most ``seconds`` of wall time when
        the budget is not reproducible (a wall cap would make the steps' results depend
        on the machine), else the whole budget's share. Give it back with :meth:`absorb`."""
        left = self.wall_left()
        if self.reproducible or left <= seconds:
            return self.share(1.0)
        return self.share(1.0, wall=seconds / left)

    def absorb(self, child: TimeBudget) -> None:
        """Charge what a sub-budget spent, and inherit its cut."""
        self.spent += child.spent
        self.cut = self.cut or child.cut
