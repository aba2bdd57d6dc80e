"""What the search's stages share: the solve's fixed inputs, the incumbent and its record,
what a stage is, and the one loop that runs the stages on the time budget.

Why a loop: every stage used to take its share of the budget, give back what it did not
use, keep the incumbent if it found nothing better, check for a stop request and report
progress in its own lines of ``solve_report``. The loop does each of these once, so a
stage says only whether it applies, how much of the budget it gets, and what it found.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from schedsearch.engine import interrupt
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.params import SearchParams
from schedsearch.engine.sequence import TaskSolver
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["SearchContext", "SearchState", "Found", "PeakMemoryOutcome", "Stage",
           "run_stages"]


@dataclass(frozen=True, slots=True)
class SearchContext:
    """What every stage reads and none changes: the problem, the options, the energy LP's
    mode prices (``priced``), the lower bound before any search (``bound``), and how to
    report progress (``emit``: a stage name and a makespan) and to search one task alone
    (``solve_task``, the whole search with the same options)."""

    inst: Instance
    dag: Dag
    params: SearchParams
    emit: Callable[[str, int], None]
    solve_task: TaskSolver
    bound: int
    priced: list[list[int]] | None = None
    source: str = "<problem>"
    seed: int = 0
    workers: int = 2
    granularity: str = "tile"
    placement: bool = True
    reproducible: bool = True
    secondary: str | None = None


@dataclass(frozen=True, slots=True)
class Found:
    """A stage's answer and the solver name it goes by if it becomes the incumbent."""

    solution: Solution
    solver: str


@dataclass(frozen=True, slots=True)
class PeakMemoryOutcome:
    """What the peak-memory secondary did: CP-SAT's status (or ``SKIPPED_TOO_LARGE``)
    and the sum over memories of the highest address used by the answer kept."""

    status: str
    extent_bytes: int | None = None

    def as_meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"objective": "peak-memory", "status": self.status}
        if self.extent_bytes is not None:
            meta["extent_bytes"] = self.extent_bytes
        return meta


@dataclass(slots=True)
class SearchState:
    """The incumbent, who found it, and what the stages recorded on the way: the best
    lower bound known (CP-SAT's proven one included), CP-SAT's status on the whole model,
    the LNS counters, the tasks-in-sequence candidate (``held`` when it could not start
    the search, ``displaced`` the list schedule it replaced, where LNS starts)."""

    bound: int
    solution: Solution | None = None
    solver: str = ""
    displaced: Solution | None = None
    held: Solution | None = None
    cpsat_status: str | None = None
    cpsat_bound: int | None = None
    lns_windows: int = 0
    lns_accepted: int = 0
    secondary: PeakMemoryOutcome | None = None

    @property
    def incumbent(self) -> Solution:
        """The best legal solution so far (the first stage always sets one)."""
        if self.solution is None:
            raise RuntimeError("no incumbent before the constructive stage")
        return self.solution

    @property
    def proven_optimal(self) -> bool:
        return self.cpsat_status == "OPTIMAL"


class Stage(ABC):
    """One step of the search, named ``name`` in progress reports. ``reported``: the
    loop reports the incumbent when it takes the stage's answer (else the stage reports
    while it runs, or its answer keeps the makespan); ``ties`` lets an answer as long as
    the incumbent replace it (the stage's own search ranks it better: CP-SAT's, LNS's, a
    lower peak); ``always`` runs the stage after a stop request too (it costs no time)."""

    name = "stage"
    reported = False
    ties = False
    always = False

    def applies(self, ctx: SearchContext, state: SearchState) -> bool:
        return True

    def share(self, ctx: SearchContext) -> float:
        """The stage's share of the work left when it starts (1: all of it)."""
        return 1.0

    @abstractmethod
    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget
            ) -> Found | None:
        """Search on ``budget`` from ``state``'s incumbent: an answer, or None."""


def run_stages(stages: Sequence[Stage], ctx: SearchContext, state: SearchState,
               budget: TimeBudget) -> None:
    """Run ``stages`` in order on ``budget``: each that applies gets its share of what is
    left (a share of 1 spends ``budget`` itself), what it did not use goes back, and its
    answer replaces the incumbent when shorter (or as short, for a stage that ``ties``).
    After a stop request only the stages marked ``always`` run."""
    for stage in stages:
        if interrupt.requested() and not stage.always:
            continue
        if not stage.applies(ctx, state):
            continue
        fraction = stage.share(ctx)
        part = budget if fraction >= 1 else budget.share(fraction)
        found = stage.run(ctx, state, part)
        if part is not budget:
            budget.absorb(part)
        if found is not None and _better(ctx.inst, state, found, stage.ties):
            state.solution, state.solver = found.solution, found.solver
            if stage.reported:
                ctx.emit(stage.name, found.solution.makespan(ctx.inst))


def _better(inst: Instance, state: SearchState, found: Found, ties: bool) -> bool:
    if state.solution is None:
        return True
    makespan, incumbent = found.solution.makespan(inst), state.solution.makespan(inst)
    return makespan < incumbent or (ties and makespan == incumbent)
