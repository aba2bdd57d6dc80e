"""What a solve ended with, typed: a status, the figures behind it, and why nothing came.

A schedule's ``meta`` is only where these are written out (:meth:`SolveStats.as_meta`);
code that decides something reads the :class:`SolveStatus` and :class:`SolveStats`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from models.errors import InputError

__all__ = ["SolveStatus", "SolveStats", "NoSchedule", "EXIT_CODES", "INFEASIBLE_RULES",
           "GAVE_UP_RULES", "refusal"]


class SolveStatus(enum.StrEnum):
    """How a search ended: a solve, and a buffer placement (:mod:`.placement`, whose
    exact search reports ``FEASIBLE`` for a placement found within a capacity, and
    ``NO_SOLUTION_FOUND`` when it used the caller's node budget). A string enum: the
    value is the name, as files and messages write it."""

    #: a schedule whose makespan equals a proven lower bound
    OPTIMAL = "OPTIMAL"
    #: a legal schedule, not proven optimal
    FEASIBLE = "FEASIBLE"
    #: stopped by SIGINT/SIGTERM; the schedule is the best legal one found so far
    INTERRUPTED = "INTERRUPTED"
    #: proved: no legal schedule exists (memory cannot hold it, dependencies contradict)
    INFEASIBLE = "INFEASIBLE"
    #: nothing proved, but no schedule was found within the time limit
    NO_SOLUTION_IN_TIME = "NO_SOLUTION_IN_TIME"
    #: nothing proved, but a heuristic the search depends on gave up (it says which)
    NO_SOLUTION_FOUND = "NO_SOLUTION_FOUND"

    @property
    def has_schedule(self) -> bool:
        return self in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE, SolveStatus.INTERRUPTED)


#: ``schedsearch solve``'s exit status per outcome (2, unusable input, is not a status).
EXIT_CODES = {SolveStatus.OPTIMAL: 0, SolveStatus.FEASIBLE: 0, SolveStatus.INTERRUPTED: 130,
              SolveStatus.INFEASIBLE: 1, SolveStatus.NO_SOLUTION_IN_TIME: 1,
              SolveStatus.NO_SOLUTION_FOUND: 1}

#: Rules of an :class:`InputError` that prove a well-formed problem has no schedule.
INFEASIBLE_RULES = frozenset({"FIT", "CYCLE", "STALE_READ"})
#: Rules of an :class:`InputError` that say a heuristic gave up, which proves nothing.
GAVE_UP_RULES = frozenset({"WRITER_ORDER"})


@dataclass(frozen=True, slots=True)
class SolveStats:
    """The figures of one solve: who found the answer, how good it is proven to be, and
    what the run may be compared with (``reproducible`` is False when the wall clock,
    not the work budget, stopped a stage)."""

    solver: str
    bound: int
    gap: float
    wall_s: float
    reproducible: bool
    seed: int
    workers: int
    granularity: str
    placement: bool
    cpsat_status: str | None = None
    cpsat_bound: int | None = None
    lns_windows: int = 0
    lns_accepted: int = 0
    secondary: dict[str, Any] | None = field(default=None)

    def as_meta(self, status: SolveStatus) -> dict[str, Any]:
        """The schedule's ``meta``: ``status`` and every figure, JSON-ready."""
        meta: dict[str, Any] = {"solver": self.solver, "status": status.value,
                                "cpsat_status": self.cpsat_status,
                                "lns_windows": self.lns_windows,
                                "lns_accepted": self.lns_accepted}
        if self.secondary is not None:
            meta["secondary"] = self.secondary
        meta.update({"reproducible": self.reproducible, "bound": self.bound,
                     "cpsat_bound": self.cpsat_bound, "gap": self.gap, "seed": self.seed,
                     "workers": self.workers, "granularity": self.granularity,
                     "placement": self.placement, "wall_s": self.wall_s})
        return meta


class NoSchedule(InputError):
    """A well-formed problem for which the search returns no schedule, and why.

    An :class:`InputError` (it still names the file, the JSON path and the rule) so that
    callers which treat every refusal alike keep working; ``schedsearch solve`` tells it
    apart (exit 1, not 2) by ``status``: INFEASIBLE, NO_SOLUTION_IN_TIME or
    NO_SOLUTION_FOUND.
    """

    def __init__(self, status: SolveStatus, error: InputError) -> None:
        super().__init__(error.message, source=error.source, path=error.path,
                         rule=error.rule)
        self.status = status

    def with_source(self, source: str) -> NoSchedule:
        return NoSchedule(self.status, super().with_source(source))


def refusal(error: InputError) -> InputError:
    """``error`` as the search reports it: a :class:`NoSchedule` when its rule says the
    problem has no schedule (:data:`INFEASIBLE_RULES`) or that a heuristic gave up
    (:data:`GAVE_UP_RULES`); any other rule is unusable input and stays as it is."""
    if isinstance(error, NoSchedule):
        return error
    if error.rule in INFEASIBLE_RULES:
        return NoSchedule(SolveStatus.INFEASIBLE, error)
    if error.rule in GAVE_UP_RULES:
        return NoSchedule(SolveStatus.NO_SOLUTION_FOUND, error)
    return error
