"""The whole problem as one CP-SAT model: stage 3 of the search when the problem is small.

Hinted with the incumbent, it either improves it or proves a bound. Where the placement
engine gives the addresses, memory is relaxed to a cumulative and each answer is placed
afterwards; problems without buffers are searched both ways, mirrored and forward
(:mod:`schedsearch.engine.mirror`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedsearch.engine import interrupt
from schedsearch.engine.cpsat.model import (
    build,
    portfolio_seeds,
    solve_built,
    solve_each,
    whole_problem,
)
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.mirror import mirrored, mirrored_dag
from schedsearch.engine.offsets import place_offsets
from schedsearch.engine.orders import large_buffers
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["whole_model", "whole_model_both_ways", "side_by_side", "relaxes_memory",
           "placed_answer", "SIDE_BY_SIDE_LINEARIZATION"]

#: CP-SAT's ``linearization_level`` for each single-worker run of :func:`side_by_side`: 0,
#: no LP relaxation. Why: on memory-free problems (RCPSP) the LP's bound does not close the
#: gap within a 10 s budget anyway, and without it each conflict costs about half the CPU
#: time and the search reaches good schedules in fewer conflicts (PSPLIB J30_122/126/127/288,
#: the stage's 4 s of work, seeds 0 and 3: the best known in 8 of 8 runs, against 4 of 8
#: with CP-SAT's default level 1).
SIDE_BY_SIDE_LINEARIZATION = 0


def relaxes_memory(inst: Instance, placement: bool) -> bool:
    """Whether the whole model relaxes memory to a cumulative (the placement engine then
    gives the addresses): with ``placement``, unless some buffer is large
    (``large_buffers``), where CP-SAT decides the addresses too. Large buffers among
    small ones are where a relaxed answer often has no addresses: on the tight wide pair
    (161 ops, 10 s) a relaxed first half spent its time on answers none of which could
    be placed, and the exact model alone ended 1.144-1.149 of the bound against
    1.150-1.157 for relaxed-then-exact (seeds 0-2); on the tight chain and the Ascend
    pair it was no worse either."""
    return placement and not any(large_buffers(inst))


def whole_model(inst: Instance, dag: Any, solution: Solution, solver: str, bound: int,
                 budget: TimeBudget, seed: int, workers: int, placement: bool,
                 emit: Callable[[str, int], None]
                 ) -> tuple[Solution, dict[str, Any], int | None]:
    """CP-SAT on the whole problem, hinted with ``solution`` (found by ``solver``); keeps
    it, and its solver's name, if nothing better. With ``placement`` memory is relaxed to
    a cumulative (its bound stays valid) and the placement engine assigns the addresses;
    an answer it cannot place is dropped."""
    inc = Incumbent.of(inst, dag, solution)
    built = build(inst, dag, inc, whole_problem(dag, inc), bound, region_end=inc.makespan,
                  offsets=not placement)
    outcome = solve_built(built, budget, work=budget.left, seed=seed, workers=workers,
                          on_objective=lambda m: emit("cp-sat", m),
                          keep=placement and inst.n_buffers > 0)
    meta: dict[str, Any] = {"solver": solver, "status": outcome.status,
                            "cpsat_status": outcome.status}
    found = final = outcome.solution
    if final is not None and placement:
        found = placed_answer(inst, [*outcome.earlier, final], solution, budget, seed)
        if found is None or (found.starts, found.modes) != (final.starts, final.modes):
            # the final answer has no addresses: whatever CP-SAT proved of it does not
            # hold for the answer kept, so later stages still run
            meta["status"] = meta["cpsat_status"] = "UNPLACED"
            if found is not None and found.makespan(inst) >= solution.makespan(inst):
                found = None  # an earlier answer no better than the incumbent
    if found is None:
        return solution, meta, outcome.bound
    meta["solver"] = "cp-sat"
    return found, meta, outcome.bound


def whole_model_both_ways(inst: Instance, dag: Dag, solution: Solution, solver: str,
                           bound: int, budget: TimeBudget, seed: int, workers: int,
                           emit: Callable[[str, int], None], mirrored_share: float
                           ) -> tuple[Solution, dict[str, Any], int | None]:
    """:func:`whole_model` on a problem without buffers, both ways: with two workers or
    more and a reproducible budget side by side (:func:`side_by_side`: measured better
    there; a search that uses its time keeps one CP-SAT search with all the workers,
    which was not measured against it); otherwise on the mirrored problem
    (:mod:`schedsearch.engine.mirror`) for ``mirrored_share`` of ``budget``, then, unless
    that proved its answer optimal, forward from its answer for the rest. Either run's
    bound holds for both, and the shorter answer is kept."""
    if workers >= 2 and budget.reproducible:
        return side_by_side(inst, dag, solution, solver, bound, budget, seed, workers, emit)
    meta: dict[str, Any] = {"solver": solver, "status": "FEASIBLE"}
    bounds: list[int] = []
    for share, flip in ((mirrored_share, True), (1.0, False)):
        if meta["status"] == "OPTIMAL" or budget.exhausted() or interrupt.requested():
            break
        part = budget.share(share)
        found, run, run_bound = whole_model(
            inst, mirrored_dag(dag) if flip else dag,
            mirrored(inst, solution) if flip else solution, meta["solver"],
            max([bound, *bounds]), part, seed, workers, False, emit)
        budget.absorb(part)
        if run["solver"] == "cp-sat":  # an answer no longer than the start
            solution = mirrored(inst, found) if flip else found
        if run_bound is not None:
            bounds.append(run_bound)
        meta = run
    return solution, meta, max(bounds) if bounds else None


def side_by_side(inst: Instance, dag: Dag, solution: Solution, solver: str, bound: int,
                 budget: TimeBudget, seed: int, workers: int,
                 emit: Callable[[str, int], None]
                 ) -> tuple[Solution, dict[str, Any], int | None]:
    """The whole model's portfolio (:func:`~.cpsat.model.portfolio_seeds`, one
    single-worker run per worker) with its members on alternate directions, member 0 on
    the mirrored problem, all for the whole ``budget``, hinted with ``solution``. The
    shortest answer wins (ties: the lowest member), brought back forward; a proof by any
    member holds for both directions, and so does the best bound. Why: which direction
    is easier is not known in advance, and a run in each for the whole stage keeps what
    each learnt, where halves one after another, growing alternating slices, or a short
    probe of each before committing to one restart CP-SAT or guess from too little
    (PSPLIB J30_122/126/127/288, 10 s, reproducible, seeds 0 and 1: 1 miss of the best
    known in 8 runs, against 2 for the halves, 3 for a 5 % probe, 6 for the slices)."""
    flips = [member % 2 == 0 for member in range(workers)]
    built = {}
    for flip in (True, False):
        way = mirrored_dag(dag) if flip else dag
        inc = Incumbent.of(inst, way, mirrored(inst, solution) if flip else solution)
        built[flip] = build(inst, way, inc, whole_problem(way, inc), bound,
                            region_end=inc.makespan, offsets=False)
    outcomes = solve_each([built[flip] for flip in flips], budget, work=budget.left,
                          seeds=portfolio_seeds(seed, workers),
                          on_objective=lambda makespan: emit("cp-sat", makespan),
                          linearization=SIDE_BY_SIDE_LINEARIZATION)
    statuses = {outcome.status for outcome in outcomes}
    bounds = [outcome.bound for outcome in outcomes if outcome.bound is not None]
    members = [member for member, outcome in enumerate(outcomes)
               if outcome.solution is not None]
    if not members:
        return solution, {"solver": solver, "status": outcomes[0].status,
                          "cpsat_status": outcomes[0].status}, max(bounds, default=None)
    best = min(members, key=lambda member: (outcomes[member].objective or 0, member))
    answer = outcomes[best].solution or solution
    status = "OPTIMAL" if "OPTIMAL" in statuses else outcomes[best].status
    return mirrored(inst, answer) if flips[best] else answer, \
        {"solver": "cp-sat", "status": status, "cpsat_status": status}, max(bounds, default=None)


def placed_answer(inst: Instance, answers: list[Solution], incumbent: Solution, budget: TimeBudget,
            seed: int) -> Solution | None:
    """The best of a relaxed run's ``answers`` (oldest first, so the last is best) that
    the placement engine can give addresses, or None. Why: CP-SAT's last answer can have
    no addresses where an earlier, slightly longer one has (tight triple at 168 ops: the
    last answer 1.053 of the bound was unplaceable and the stage kept the list schedule's
    1.064, where an earlier one at 1.054 was placeable). Each attempt places at most a
    few hundred buffers (the whole model is for small problems only), so the attempts
    run even when the stage's time is up, as the first always did."""
    for answer in reversed(answers):
        if interrupt.requested():
            return None
        placed = place_offsets(inst, answer, incumbent, budget, seed)
        if placed is not None:
            return placed
    return None
