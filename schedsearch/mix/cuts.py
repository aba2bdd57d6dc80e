"""What a short time limit cannot pay for, and the cheapest legal answer instead.

Every search (:func:`schedsearch.engine.search.solve`) pays a fixed cost before its grant
starts to count for anything: the instance, the derived precedences, the lower bound
(with its memory parts) and the list scheduler's portfolio. On the bench mix (a Qwen
prefill of 128 tokens beside four decodes, 43 distinct kernels) that was about 25 ms per
kernel and 1.1 s per fused problem of 3,078 ops, however small the grant: at 0.5-5 s
the command ended 1-4 s past its limit. So a search whose grant is below
:func:`search_cost` is not run: the problem gets :func:`list_schedule_only`, the same
list schedule that search would have started from (never worse than the plain list
schedule, :mod:`schedsearch.engine.plain`), without the bound. A fused candidate whose
grant is below even :func:`list_cost` is not built at all, unless the per-request
search (deadlines, a weighted objective) is to start from it (``searched`` keeps a
kernel schedule, fused, or a kernel policy). :class:`Cuts` records both, and the notes of
``mix`` say so.

The decision reads the grant's ``time_limit``: its work when the command is
reproducible (so the same limit cuts the same searches at any load), else its wall time.
The estimates are seconds on a loaded 2-core machine (``benchmarks/bench_limits.py``),
generous on purpose: a search run where it cannot begin costs more than the list
schedule it would return.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum

from models.formats import Problem, Schedule, Target
from models.heap import cycles_uncollected
from schedsearch.allotment import Grant
from schedsearch.engine.bounds.lower import energy_relaxation
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.portfolio import priced_modes
from schedsearch.engine.solution import to_schedule
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["Cuts", "FusedCut", "search_cost", "list_cost", "scoring_cost", "list_schedule_only"]

#: What a search pays before its grant counts, per search and per op (seconds): measured
#: 10-70 ms on the bench mix's kernels of 3-216 ops, 1.1-1.5 s on its fused problems of
#: 3,078-3,598 ops, at load 10 on 2 cores.
SEARCH_SECONDS, SEARCH_SECONDS_PER_OP = 0.01, 4e-4
#: What :func:`list_schedule_only` costs, likewise: 2.5-32 ms on those kernels, 0.7 s on
#: the fused problems.
LIST_SECONDS, LIST_SECONDS_PER_OP = 0.003, 2.2e-4
#: What scoring costs per op of a policy's schedule (its document and the checker on
#: it): 0.23-0.33 s for two schedules of 6,676 ops in all, at load 10-13.
SCORE_SECONDS_PER_OP = 5e-5


def search_cost(problem: Problem) -> float:
    """Seconds a search of ``problem`` spends before its grant counts (module docstring)."""
    return SEARCH_SECONDS + SEARCH_SECONDS_PER_OP * len(problem.ops)


def list_cost(problem: Problem) -> float:
    """Seconds :func:`list_schedule_only` takes on ``problem``."""
    return LIST_SECONDS + LIST_SECONDS_PER_OP * len(problem.ops)


def scoring_cost(ops: int) -> float:
    """Seconds the checker takes on schedules of ``ops`` ops in all."""
    return SCORE_SECONDS_PER_OP * ops


def list_schedule_only(problem: Problem, target: Target, grant: Grant, *,
                       reproducible: bool) -> Schedule:
    """The list schedule a search of ``problem`` starts from (the plain list schedule,
    then the portfolio's passes its grant allows, priced by the energy LP as a search
    prices them), without the lower bound or any search; after a stall, the exact search
    on the grant (:func:`~schedsearch.engine.fallback.construct`)."""
    with cycles_uncollected():
        inst = build_instance(problem, target)
        dag = build_dag(inst, "tile")
        priced = priced_modes(inst, energy_relaxation(problem, target))
        budget = TimeBudget.start(grant.time_limit, wall=grant.wall_limit,
                                  begin=time.perf_counter(), reproducible=reproducible)
        solution = construct(inst, dag, problem.name, budget, priced=priced)
    return to_schedule(inst, solution, {"solver": "constructive", "status": "FEASIBLE",
                                        "note": "list schedule only: the grant could not "
                                                "pay for the bound and a search"})


class FusedCut(Enum):
    """What the time limit did to a fused candidate."""

    LISTED = "list schedule only"
    SKIPPED = "not built"


@dataclass(slots=True)
class Cuts:
    """What the time limit cut: the content keys of the kernels given the list schedule
    only, and per fused candidate (by label) how it was cut."""

    listed_kernels: set[str] = field(default_factory=set)
    fused: dict[str, FusedCut] = field(default_factory=dict)
