"""The ``windows`` part: the ``energy`` LP over windows cut by forced heads and tails.

Why. ``energy`` lets every lane and budget work from time 0 to the makespan. Where the
DMA queues and the DDR bandwidth bind (the decode layers), the last weight loads still
need a GEMM tile and a store after them, and the first ops of a chain cannot start at
0: the traffic must fit in a shorter window. ``head_tail:K`` says that for one lane kind
at its cheapest modes; this part says it for every lane and budget at once, with one mode
choice shared by all windows.

Argument. ``head(i)`` and ``tail(i)`` are the forced waits before the start and after
the end of op ``i`` (:class:`~schedsearch.engine.bounds.phases.ForcedOrder`: orders every
legal schedule respects, at shortest durations). In a legal schedule of makespan ``C``,
op ``i`` runs inside ``[head(i), C - tail(i)]``. For thresholds ``r`` and ``q``, the ops
``S(r, q)`` with ``head >= r`` and ``tail >= q`` therefore all run inside ``[r, C - q]``,
and on every lane kind and budget ``R``::

    sum over S(r, q) of duration * use of R in its mode  <=  capacity(R) * (C - r - q)

The LP: each op class (the same modes, the same head and tail buckets) spreads its ops
over its modes; minimise ``C`` subject to these rows for every pair of thresholds tried
(``r = q = 0`` is the ``energy`` LP, so this part is at least ``energy``). The schedule's
own mode choice and makespan are a feasible point, so its makespan is at least the LP
optimum; any set of thresholds gives a valid figure.

Which thresholds. Each threshold alone is ranked by a cheap valid figure: with the
``energy`` LP's dual prices ``y`` (``sum of y(R) * capacity(R) = 1``), the priced work
``sum over S of min over modes of sum over R of y(R) * duration * use of R`` is at most
the LP over ``S``, so ``q`` plus the priced work of the ops with ``tail >= q`` bounds
the makespan; the :data:`THRESHOLDS` best tails and heads (and 0) are kept, and every
pair is a window. Per window and resource the work is a sum over the classes inside, so
the LP writes it as a two-dimensional running sum over the buckets (a few terms a row
whatever the number of classes).
"""

from __future__ import annotations

import numpy as np
from ortools.linear_solver import pywraplp

from models.formats import Problem, Target
from models.validate import usable_modes
from schedsearch.engine.bounds.lp import ceil_bound
from schedsearch.engine.bounds.phases import ForcedOrder, forced_order, op_tables

__all__ = ["THRESHOLDS", "window_part"]

#: Head thresholds and tail thresholds kept, each, besides 0.
THRESHOLDS = 12


def _thresholds(values: np.ndarray, priced: np.ndarray) -> np.ndarray:
    """0 and the :data:`THRESHOLDS` values ``v`` of ``values`` (the ops' heads or tails)
    with the largest ``v + priced work of the ops whose value is at least v``."""
    distinct = np.unique(values)
    order = np.argsort(values)
    ranked, work = values[order], priced[order]
    at_least = np.cumsum(work[::-1])[::-1]  # priced work of ranked[j:]
    starts = np.searchsorted(ranked, distinct, side="left")
    score = distinct + at_least[starts]
    best = distinct[np.argsort(-score, kind="stable")[:THRESHOLDS]]
    return np.unique(np.concatenate(([0], best)))


def window_part(problem: Problem, target: Target, prices: dict[str, float],
                order: ForcedOrder | None = None) -> dict[str, int]:
    """``{"windows": bound}`` (see the module docstring), or ``{}`` when there is
    nothing to bound or the forced orders form a cycle. ``prices`` are the ``energy``
    LP's dual prices (:class:`~schedsearch.engine.bounds.lower.EnergyRelaxation`; they
    only rank thresholds), ``order`` the problem's :class:`ForcedOrder` when the caller
    already has it."""
    resources = [(table, name, capacity)
                 for table, found in (("lanes", target.lanes), ("budgets", target.budgets))
                 for name, capacity in found.items()]
    if not resources or not problem.ops:
        return {}
    if order is None:
        order = forced_order(problem, op_tables(problem, target).duration)
        if order is None:
            return {}
    price = np.array([prices.get(f"{'lane' if table == 'lanes' else 'budget'}:{name}", 0.0)
                      for table, name, _ in resources])
    signatures = [tuple((*(op.modes[i].duration * getattr(op.modes[i], table).get(name, 0)
                               for table, name, _ in resources),
                             *(op.modes[i].duration
                               * (2 * getattr(op.modes[i], table).get(name, 0) > capacity)
                               for table, name, capacity in resources))
                        for i in usable_modes(op.modes, target))
                  for op in problem.ops.values()]
    loaded = np.array([any(any(energy) for energy in signature) for signature in signatures])
    if not loaded.any():
        return {}
    priced = np.array([min((float(np.dot(price, energy[:len(price)]))
                            for energy in signature),
                           default=0.0) for signature in signatures])
    heads = _thresholds(order.head[loaded], priced[loaded])
    tails = _thresholds(order.tail[loaded], priced[loaded])
    # bucket: how many thresholds an op's head (tail) reaches, 1 or more; the window of
    # thresholds (a, b) holds the ops with head bucket > a and tail bucket > b
    head_bucket = np.searchsorted(heads, order.head, side="right")
    tail_bucket = np.searchsorted(tails, order.tail, side="right")
    classes: dict[tuple[tuple[tuple[int, ...], ...], int, int], int] = {}
    for i in np.flatnonzero(loaded):
        key = (signatures[i], int(head_bucket[i]), int(tail_bucket[i]))
        classes[key] = classes.get(key, 0) + 1
    value = _solve(classes, [capacity for _, _, capacity in resources] + [1] * len(resources),
                   heads, tails)
    return {} if value is None else {"windows": ceil_bound(value)}


def _solve(classes: dict[tuple[tuple[tuple[int, ...], ...], int, int], int],
           capacities: list[int], heads: np.ndarray, tails: np.ndarray) -> float | None:
    """The LP optimum (module docstring), or None if it has none (an op with no usable
    mode: validation reports it). ``work[a, b, k]``: the work on resource ``k`` of the
    ops with head bucket > a and tail bucket > b, a running sum from the far corner."""
    solver = pywraplp.Solver.CreateSolver("GLOP")
    infinity = solver.infinity()
    makespan = solver.NumVar(0.0, infinity, "C")
    n_heads, n_tails, n_res = len(heads), len(tails), len(capacities)
    occupied = np.zeros((n_heads + 1, n_tails + 1), dtype=bool)
    for _, hb, tb in classes:
        occupied[hb, tb] = True
    # any[a, b]: some class in the window (a, b); an empty window bounds nothing
    nonempty = np.flip(np.flip(occupied, 0).cumsum(0), 0)
    nonempty = np.flip(np.flip(nonempty, 1).cumsum(1), 1)[1:, 1:] > 0
    cell = {}  # (bucket h, bucket t, k) -> equality row: sum of its classes' work = var
    work = {}
    for hb in range(n_heads, 0, -1):
        for tb in range(n_tails, 0, -1):
            for k in range(n_res):
                own = solver.NumVar(0.0, infinity, "")
                total = solver.NumVar(0.0, infinity, "")
                if occupied[hb, tb]:
                    row = solver.Constraint(0.0, 0.0)
                    row.SetCoefficient(own, -1.0)
                    cell[hb, tb, k] = row
                else:
                    own.SetUb(0.0)
                # total(a, b) = own cell (a+1, b+1) + total(a+1, b) + total(a, b+1)
                #               - total(a+1, b+1), buckets past the last being empty
                a, b = hb - 1, tb - 1
                row = solver.Constraint(0.0, 0.0)
                row.SetCoefficient(total, -1.0)
                row.SetCoefficient(own, 1.0)
                for (da, db), sign in (((1, 0), 1.0), ((0, 1), 1.0), ((1, 1), -1.0)):
                    other = work.get((a + da, b + db, k))
                    if other is not None:
                        row.SetCoefficient(other, sign)
                work[a, b, k] = total
                if nonempty[a, b]:
                    bound = solver.Constraint(-infinity, -capacities[k] * float(heads[a]
                                                                                + tails[b]))
                    bound.SetCoefficient(total, 1.0)
                    bound.SetCoefficient(makespan, -float(capacities[k]))
    for (signature, hb, tb), count in classes.items():
        total = solver.Constraint(count, count)
        for energy in signature:
            share = solver.NumVar(0.0, count, "")
            total.SetCoefficient(share, 1.0)
            for k, amount in enumerate(energy):
                if amount:
                    cell[hb, tb, k].SetCoefficient(share, float(amount))
    objective = solver.Objective()
    objective.SetCoefficient(makespan, 1.0)
    objective.SetMinimization()
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        return None
    return makespan.solution_value()
