"""Which modes are worth taking: prices of the lanes and budgets from the energy LP.

Taking the shortest mode that fits is myopic when one resource binds the whole schedule:
on the bundled triple the two DMA queues and the DDR bandwidth are both saturated from
start to end, and the copy task's loads and stores have an HVX mode (long, but drawing
little bandwidth and no DMA queue) that the shortest-first rule never takes, although
the lower bound's ``energy`` part relies on it.

The LP of :func:`models.bounds.energy_bound` (choose each op's modes fractionally so
that every lane kind's work and every budget's draw fit ``capacity * T``; minimise
``T``) has dual values: a price per unit of each resource, zero for those that do not
bind. A mode's *price* is the sum over resources of price x duration x amount. By
complementary slackness the modes an optimal LP solution uses are the cheapest ones, so
a mode far dearer than an op's cheapest wastes what binds the schedule. The LP is solved
over classes of ops with identical modes, so it stays small for thousands of ops.
"""

from __future__ import annotations

from ortools.linear_solver import pywraplp

from schedsearch.instance import Instance

__all__ = ["mode_prices"]


def mode_prices(inst: Instance) -> list[tuple[float, ...]]:
    """Per op, the price of each of its modes (all zero when the LP has no optimum)."""
    resources = [("lane", k) for k in inst.target.lanes] + \
        [("budget", b) for b in inst.target.budgets]
    capacity = [*inst.target.lanes.values(), *inst.target.budgets.values()]
    energies = []
    for modes in inst.modes:
        energies.append(tuple(
            tuple(mode.duration * dict(mode.lanes if table == "lane" else mode.budgets)
                  .get(name, 0) for table, name in resources)
            for mode in modes))
    zero = [tuple(0.0 for _ in modes) for modes in inst.modes]
    classes: dict[tuple[tuple[int, ...], ...], int] = {}
    for signature in energies:
        classes[signature] = classes.get(signature, 0) + 1
    if not resources or not classes:
        return zero
    solver = pywraplp.Solver.CreateSolver("GLOP")
    makespan = solver.NumVar(0.0, solver.infinity(), "T")
    load: list[pywraplp.LinearExpr] = [0.0] * len(resources)
    for signature, count in classes.items():
        shares = [solver.NumVar(0.0, count, "") for _ in signature]
        solver.Add(sum(shares) == count)
        for r in range(len(resources)):
            load[r] += sum(share * energy[r] for share, energy in zip(shares, signature,
                                                                      strict=True))
    rows = [solver.Add(load[r] <= capacity[r] * makespan) for r in range(len(resources))]
    solver.Minimize(makespan)
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        return zero
    price = [abs(row.dual_value()) for row in rows]
    return [tuple(sum(p * e for p, e in zip(price, energy, strict=True)) for energy in modes)
            for modes in energies]
