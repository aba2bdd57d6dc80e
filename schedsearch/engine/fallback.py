"""When every list-scheduling pass stalls: the exact search as a last resort, or the
stall as an error naming the op that could not start; :func:`construct` is the list
schedule with this fallback behind it.
"""

from __future__ import annotations

from models.errors import InputError
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.orders import tails
from schedsearch.engine.params import DEFAULT
from schedsearch.engine.portfolio import list_schedule
from schedsearch.engine.result import NoSchedule, SolveStatus
from schedsearch.engine.serial import Stall
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["construct", "exact_fallback", "stall_error"]


def construct(inst: Instance, dag: Dag, source: str = "<problem>",
              budget: TimeBudget | None = None, *, seed: int = 0, workers: int = 1,
              priced: list[list[int]] | None = None) -> Solution:
    """:func:`list_schedule`'s solution (``priced`` as there); when every pass stalls,
    :func:`exact_fallback` within ``budget`` (``seed`` and ``workers`` as there). Without
    a budget the stall is the answer (:func:`stall_error`): the exact search runs only on
    time the caller gave, never on a hidden allowance of its own."""
    found = list_schedule(inst, dag, budget, priced=priced)
    if isinstance(found, Solution):
        return found
    if budget is None:
        raise stall_error(found, source, "every list-scheduling pass stalled, and no time "
                          "was given for the exact search")
    return exact_fallback(inst, dag, found, source, budget, seed, workers)



def stall_error(stall: Stall, source: str, why: str,
                status: SolveStatus = SolveStatus.NO_SOLUTION_FOUND) -> NoSchedule:
    """No schedule: the op ``stall`` names could not start (rule FIT, at that op), and
    ``why`` nothing else found one."""
    return NoSchedule(status, InputError(
        f"no memory-feasible order found: at time {stall.time} op {stall.op!r} needs "
        f"{stall.reason}; {why}", source=source, path=f"$.ops[\"{stall.op}\"]", rule="FIT"))


def exact_fallback(inst: Instance, dag: Dag, stall: Stall, source: str, budget: TimeBudget,
                   seed: int, workers: int, *,
                   max_ops: int = DEFAULT.whole_model_max_ops) -> Solution:
    """Any legal solution, from CP-SAT on the whole exact model (memory with addresses),
    after every list-scheduling pass stalled at ``stall``.

    Greedy passes are incomplete: first-fit can put a buffer where the exact packing a
    tight memory needs has to go, and no sequence or window repairs that. CP-SAT is
    complete within a horizon that provably loses no legal schedule
    (the safe horizon), so it finds one, proves there is none, or runs out of the
    budget. Its incumbent (the hint, and the horizon) is the serial schedule: ops in
    topological order, each at its longest mode, one tick apart (so every lag holds and
    its makespan is the safe horizon below), every offset 0 (so it is illegal in memory). Each
    run stops at its first solution, which the later stages improve. Deterministic for a
    seed and worker count, as every CP-SAT run here.

    The safe horizon is the sum of every op's longest duration plus one tick between
    consecutive ops. Why no legal schedule is lost: take one and its distinct start and
    end times, in order. Keep each gap between consecutive times that some op of positive
    duration runs through, and shrink every other gap to one tick. The order of all times
    is kept, ties included, so every constraint keeps holding: which windows (ops',
    buffers') overlap depends only on that order, as do the precedences (their lags are
    0, or 1 where the order is strict); no running op loses a tick, so durations hold. The
    kept gaps add up to at most the sum of the durations; each shrunk gap ends where some
    op starts (an op of positive duration ending there would have run through it), and
    not the first op, so there are fewer of them than ops. (With every duration positive
    those gaps could even shrink to zero; zero-duration ops with a lag of 1 between them
    need the tick.)

    Raises :class:`InputError` (rule FIT) when CP-SAT proves that no schedule respects
    the derived dependencies (:mod:`schedsearch.engine.hazards`; they fix one order of the
    writers of shared bytes), when the budget runs out first, or when the problem has more
    than ``max_ops`` ops (:attr:`~schedsearch.engine.params.SearchParams.whole_model_max_ops`: the
    model would be too slow to help).
    """
    def fit_error(why: str, status: SolveStatus = SolveStatus.NO_SOLUTION_FOUND) -> NoSchedule:
        return stall_error(stall, source, why, status)

    if inst.n_ops > max_ops:
        raise fit_error(f"every list-scheduling pass stalled, and the exact search is "
                        f"not tried above {max_ops} ops")
    # imported when used: CP-SAT imports pandas, 0.2 s that a list schedule alone (the
    # mix at a short limit) need not pay
    from schedsearch.engine.cpsat.model import build, solve_built, whole_problem
    from schedsearch.engine.cpsat.variables import Incumbent

    modes = [max(range(len(inst.modes[i])), key=lambda k, i=i: (inst.modes[i][k].duration, -k))
             for i in range(inst.n_ops)]
    starts = [0] * inst.n_ops
    now = 0
    for v in dag.topo:
        if v < inst.n_ops:
            starts[v] = now
            now += inst.modes[v][modes[v]].duration + 1
    inc = Incumbent.of(inst, dag, Solution(tuple(modes), tuple(starts), (0,) * inst.n_buffers))
    built = build(inst, dag, inc, whole_problem(dag, inc), max(tails(inst, dag), default=0),
                  region_end=inc.makespan)
    outcome = solve_built(built, budget, work=budget.left, seed=seed, workers=workers,
                          first=True)
    if outcome.solution is not None:
        return outcome.solution
    if outcome.status == "INFEASIBLE":
        raise fit_error("CP-SAT proved that no schedule respecting the derived "
                        "dependencies (after, read-after-write, and the chosen order of "
                        "the writers of shared bytes) fits memory", SolveStatus.INFEASIBLE)
    raise fit_error("every list-scheduling pass stalled, and the exact search (CP-SAT "
                    "on the whole problem) ran out of time before finding a schedule",
                    SolveStatus.NO_SOLUTION_IN_TIME)
