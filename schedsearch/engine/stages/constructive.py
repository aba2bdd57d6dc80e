"""The stages that give the search its start: the list schedule (or, after a stall, CP-SAT
as the last resort), and the tasks one after another, each searched alone: a candidate
the answer must never lose to (the final comparison takes it when nothing beat it)."""

from __future__ import annotations

from collections import Counter

from models.errors import InputError
from schedsearch.engine import interrupt
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.fallback import exact_fallback
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance, Resource
from schedsearch.engine.portfolio import list_schedule
from schedsearch.engine.result import refusal
from schedsearch.engine.sequence import kernels_in_sequence
from schedsearch.engine.serial import Stall
from schedsearch.engine.slicing import restrict
from schedsearch.engine.solution import Solution
from schedsearch.engine.stages.base import Found, SearchContext, SearchState, Stage
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["Constructive", "TasksInSequence", "FinalComparison", "serial_could_win",
           "work_bound", "respects"]


class Constructive(Stage):
    """The memory-aware list scheduler's portfolio, on at most
    :attr:`~schedsearch.engine.params.SearchParams.list_share` of the budget (its first
    pass always runs to its end); after a stall, CP-SAT on the whole problem as a last
    resort when it is small, on the whole budget (its answer is then labelled
    ``cp-sat``), else a clear error naming the op that could not start. Runs after a
    stop request too: without it there is no answer at all."""

    name = "constructive"
    reported = always = True

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget) -> Found:
        try:
            passes = budget.share(ctx.params.list_share)
            found = list_schedule(ctx.inst, ctx.dag, passes, priced=ctx.priced,
                                  portfolio=ctx.params.portfolio)
            budget.absorb(passes)
            if isinstance(found, Stall):  # the exact last resort, on the solve's own budget
                return Found(exact_fallback(ctx.inst, ctx.dag, found, ctx.source, budget,
                                            ctx.seed, ctx.workers,
                                            max_ops=ctx.params.whole_model_max_ops), "cp-sat")
        except InputError as error:
            if interrupt.requested():
                raise interrupt.Interrupted() from None
            raise refusal(error) from None
        return Found(found, "constructive")


class TasksInSequence(Stage):
    """Each task searched alone and the tasks put one after another
    (:mod:`schedsearch.engine.sequence`), when that could end before the incumbent
    (:func:`serial_could_win`). Where it is shorter and keeps the problem's precedences it
    becomes the incumbent, and the list schedule it ``displaced`` is where LNS starts;
    else it is ``held`` for the final comparison."""

    name = "tasks-in-sequence"
    reported = True

    def share(self, ctx: SearchContext) -> float:
        return ctx.params.serial_share

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget
            ) -> Found | None:
        inst, incumbent = ctx.inst, state.incumbent
        if budget.exhausted() or not serial_could_win(inst, incumbent.makespan(inst),
                                                      ctx.params.serial_check_max_ops):
            return None
        serial = kernels_in_sequence(inst, budget, ctx.solve_task)
        if serial is None:
            return None
        if serial.makespan(inst) < incumbent.makespan(inst) and respects(inst, ctx.dag,
                                                                         serial):
            state.displaced = incumbent
            return Found(serial, "tasks-in-sequence")
        state.held = serial
        return None


class FinalComparison(Stage):
    """The tasks in sequence where they could not start the search (``held``), taken if
    the stages after them ended longer. Costs no time, so it runs after a stop request."""

    name = "final-comparison"
    always = True

    def applies(self, ctx: SearchContext, state: SearchState) -> bool:
        return state.held is not None

    def share(self, ctx: SearchContext) -> float:
        return 0.0

    def run(self, ctx: SearchContext, state: SearchState, budget: TimeBudget
            ) -> Found | None:
        return None if state.held is None else Found(state.held, "tasks-in-sequence")


def serial_could_win(inst: Instance, makespan: int, check_max_ops: int) -> bool:
    """Whether the tasks one after another could end before ``makespan``: the sum of a
    lower bound of each task alone is below it. Each task counts its lane and budget
    work (:func:`work_bound`), or, for the smallest tasks up to ``check_max_ops`` ops in
    all (:attr:`~schedsearch.engine.params.SearchParams.serial_check_max_ops`),
    :func:`schedsearch.engine.bounds.lower.lower_bound` of the problem its kernel solves
    (which knows its memory). Where the candidate cannot win, searching it (a quarter of
    the time) cannot change the answer, and the later stages get that time (on the
    tight pairs and chain the tasks in sequence are 30-70 % longer than the list
    schedule; on the tight wide pair at 7,966 ops the RMSNorm's own bound, 0.24 s for
    its 1,492 ops, says so where the work bounds cannot)."""
    tasks = list(dict.fromkeys(inst.op_task))
    if len(tasks) < 2:
        return False
    works = {task: work_bound(inst, task) for task in tasks}
    total = sum(works.values())
    if total >= makespan:
        return False
    sizes = Counter(inst.op_task)
    checked = 0
    for task in sorted(tasks, key=lambda task: (sizes[task], task)):
        checked += sizes[task]
        if checked > check_max_ops:
            break
        try:
            sub, _ = restrict(inst.problem, task)
            total += lower_bound(sub, inst.target).value - works[task]
        except InputError:  # no kernel of its own: kernels_in_sequence says so
            return True
        if total >= makespan:
            return False
    return True


def work_bound(inst: Instance, task: str) -> int:
    """A lower bound of ``task``'s makespan alone: on each lane kind and budget, the
    least work its ops put on it (each op at its cheapest mode there) over capacity."""
    work: dict[Resource, int] = {}
    for op in range(inst.n_ops):
        if inst.op_task[op] == task:
            for key, cost in inst.least_work(op).items():
                work[key] = work.get(key, 0) + cost
    capacity = inst.capacities()
    return max((-(-cost // capacity[key]) for key, cost in work.items() if capacity[key]),
               default=0)


def respects(inst: Instance, dag: Dag, solution: Solution) -> bool:
    """Whether ``solution`` keeps every edge of ``dag`` (a schedule found on another
    precedence graph may order some writers differently: then only the final comparison
    may take it, not a search that starts from it)."""
    ends = solution.ends(inst)
    return all(solution.starts[s] >= ends[p] + lag for p, s, lag in dag.edges
               if p < dag.n_ops and s < dag.n_ops)
