"""The stages that improve the start within the time limit: the whole CP-SAT model on small
problems (it also proves a bound), justified sampling on problems without buffers, then
large-neighbourhood search unless optimality was proven. :class:`Improvement` runs them on
the part of the budget the peak-memory secondary leaves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schedsearch.engine.justify import justified
from schedsearch.engine.lns import improve
from schedsearch.engine.stages.base import Found, SearchContext, SearchState, Stage, run_stages
from schedsearch.engine.timebudget import TimeBudget
from schedsearch.engine.whole_model import relaxes_memory, whole_model, whole_model_both_ways

__all__ = ["Improvement", "WholeModel", "Justify", "Lns"]


@dataclass(frozen=True, slots=True)
class Improvement(Stage):
    """``stages`` run one after another on the budget the secondary objective, when one
    is asked for, leaves (:attr:`~schedsearch.engine.params.SearchParams.secondary_share`);
    what they do not use goes to it."""

    stages: Sequence[Stage]
    name = "improvement"

    def share(self, ctx: SearchContext) -> float:
        return 1 - ctx.params.secondary_share if ctx.secondary is not None else 1.0

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget) -> None:
        run_stages(self.stages, ctx, state, budget)


class WholeModel(Stage):
    """CP-SAT on the whole problem, hinted with the incumbent (:mod:`..whole_model`), on
    problems of at most :attr:`~..params.SearchParams.whole_model_max_ops` ops (with
    buffers, :attr:`~..params.SearchParams.whole_model_max_ops_memory`); without
    buffers both ways, mirrored and forward. Records CP-SAT's status and proven bound;
    reports each answer as CP-SAT finds it."""

    name = "cp-sat"
    ties = True

    def applies(self, ctx: SearchContext, state: SearchState) -> bool:
        params = ctx.params
        limit = params.whole_model_max_ops_memory if ctx.inst.n_buffers \
            else params.whole_model_max_ops
        return 0 < ctx.inst.n_ops <= limit

    def share(self, ctx: SearchContext) -> float:
        params = ctx.params
        if ctx.reproducible:
            return params.whole_model_share
        return (params.whole_model_share_timed_memory if ctx.inst.n_buffers
                else params.whole_model_share_timed)

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget
            ) -> Found | None:
        inst = ctx.inst
        if inst.n_buffers:
            solution, meta, bound = whole_model(
                inst, ctx.dag, state.incumbent, state.solver, state.bound, budget, ctx.seed,
                ctx.workers, relaxes_memory(inst, ctx.placement), ctx.emit)
        else:
            solution, meta, bound = whole_model_both_ways(
                inst, ctx.dag, state.incumbent, state.solver, state.bound, budget, ctx.seed,
                ctx.workers, ctx.emit, ctx.params.mirrored_share)
        state.cpsat_status, state.cpsat_bound = meta.get("cpsat_status"), bound
        if bound is not None:
            state.bound = max(state.bound, bound)
        return Found(solution, "cp-sat") if meta["solver"] == "cp-sat" else None


class Justify(Stage):
    """Sampling with double justification (:mod:`..justify`) on problems without buffers,
    unless CP-SAT proved the incumbent optimal."""

    name = "justified"
    reported = True

    def applies(self, ctx: SearchContext, state: SearchState) -> bool:
        return not ctx.inst.n_buffers and ctx.inst.n_ops > 0 and not state.proven_optimal

    def share(self, ctx: SearchContext) -> float:
        return ctx.params.justify_share

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget
            ) -> Found | None:
        found = justified(ctx.inst, ctx.dag, budget, ctx.seed, priced=ctx.priced,
                          lower=state.bound)
        return None if found is None else Found(found, "justified")


class Lns(Stage):
    """Large-neighbourhood search over time windows (:mod:`..lns`) from the incumbent,
    unless CP-SAT proved it optimal; where the tasks in sequence ``displaced`` the list
    schedule as the incumbent, from that list schedule instead, the tasks in sequence
    kept unless LNS ends at most as long. Why: windows move a few ops, so LNS from tasks
    run end to end hardly interleaves them. On the tight triple at 613 ops LNS from the
    tasks in sequence shortened them by 0.04 % in 30 s (191,612 to 191,528 ns), where
    from the list schedule it reached 190,422 in 5 s and 188,495 in 60 s (1.066 of the
    bound); giving each start half the time, as before, ended at 192,046 at 10 s, and on
    the tight Ascend pair at 153 ops (60 s) at the same makespan as the list start alone.
    Reports each improvement as LNS finds it."""

    name = "lns"
    ties = True

    def applies(self, ctx: SearchContext, state: SearchState) -> bool:
        return ctx.inst.n_ops > 0 and not state.proven_optimal

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget
            ) -> Found | None:
        inst = ctx.inst
        best = state.incumbent
        start = best if state.displaced is None else state.displaced

        def improved(makespan: int) -> None:  # progress reports improvements on the best
            if makespan < best.makespan(inst):
                ctx.emit(self.name, makespan)

        result = improve(inst, ctx.dag, start, budget, seed=ctx.seed, workers=ctx.workers,
                         lower=state.bound, placement=ctx.placement, on_improve=improved)
        state.lns_windows += result.windows
        state.lns_accepted += result.accepted
        if result.accepted and result.solution.makespan(inst) <= best.makespan(inst):
            return Found(result.solution, "lns")
        return None
