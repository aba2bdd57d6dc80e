"""The secondary objective, after the makespan is settled: peak memory at the best
makespan (``secondary="peak-memory"``)."""

from __future__ import annotations

from schedsearch.engine.cpsat.model import build, solve_built, whole_problem
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.solution import extent_bytes
from schedsearch.engine.stages.base import (
    Found,
    PeakMemoryOutcome,
    SearchContext,
    SearchState,
    Stage,
)
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["PeakMemory"]


class PeakMemory(Stage):
    """Minimise the highest address used per memory, keeping the makespan: CP-SAT on the
    whole problem with every op ending by the incumbent's makespan, on all the budget
    left (not tried above :attr:`~..params.SearchParams.whole_model_max_ops` ops). Its
    answer is kept only if its sum of highest addresses is lower."""

    name = "peak-memory"
    ties = True

    def applies(self, ctx: SearchContext, state: SearchState) -> bool:
        return ctx.secondary == "peak-memory"

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget
            ) -> Found | None:
        inst, solution = ctx.inst, state.incumbent
        if inst.n_ops > ctx.params.whole_model_max_ops:
            state.secondary = PeakMemoryOutcome("SKIPPED_TOO_LARGE")
            return None
        inc = Incumbent.of(inst, ctx.dag, solution)
        built = build(inst, ctx.dag, inc, whole_problem(ctx.dag, inc), state.bound,
                      region_end=inc.makespan, peak_memory_at=inc.makespan)
        outcome = solve_built(built, budget, work=budget.left, seed=ctx.seed,
                              workers=ctx.workers)
        before = sum(extent_bytes(inst, solution).values())
        after = (sum(extent_bytes(inst, outcome.solution).values()) if outcome.solution
                 else before)
        if outcome.solution is None or after >= before:
            state.secondary = PeakMemoryOutcome(outcome.status, before)
            return None
        state.secondary = PeakMemoryOutcome(outcome.status, after)
        return Found(outcome.solution, state.solver)
