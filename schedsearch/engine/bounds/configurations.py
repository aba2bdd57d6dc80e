"""The ``configuration`` bound: which modes can run *at the same time*.

The ``energy`` part lets every resource be busy all the time, each with its own mix of
modes. A real schedule cannot always do that: at each instant the running ops form a
*configuration*, a multiset of usage types (a mode's lanes and budget draws) that fits
every lane count and budget together. On the bundled triple, a fast DMA load (40 of the
60 DDR bandwidth) and a slow one (20) fill the bus, so an HVX-driven copy (8) cannot run
beside them; energy counts the bus and both queues as full at once anyway.

The LP (the configuration LP of cutting stock, here over time): ``x_c >= 0`` is the time
spent in configuration ``c``; each op class (ops with the same modes) spreads its ops
over its modes; for each usage type ``u``, the time-weighted number of slots of ``u``
must cover the durations of the ops put in modes of type ``u``. Minimise ``sum x_c``.
Any schedule gives a feasible point (its time in each configuration, its mode choice),
so its makespan is at least the LP optimum. Modes that hold no lane and draw no budget,
or last no time, need no slot.

There are too many configurations to list, so they are generated (column generation):
start with each type alone, as many copies as fit; the pricing problem (the
configuration of highest dual value ``v``) is a small bounded knapsack, solved exactly
by CP-SAT. Farley's bound ``z / max(1, v)`` (``z`` the restricted LP's optimum) is a
valid bound at every round, so a cap on rounds never gives an invalid one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ortools.linear_solver import pywraplp

from models.formats import Mode, Problem, Target
from models.validate import usable_modes
from schedsearch.engine.bounds.lp import ceil_bound

__all__ = ["configuration_bound"]

#: Column generation stops after this many rounds (the bound so far stays valid).
MAX_ROUNDS = 100
#: CP-SAT's deterministic work limit per exact pricing (a cut-off pricing still bounds).
_PRICING_WORK = 1.0
#: Dual values are scaled to integers for CP-SAT by ``2**30 / max dual``.
_PRICE_SCALE = 2**30
#: Column generation has converged when no configuration prices above ``1 + _CONVERGED``.
_CONVERGED = 1e-7

Usage = tuple[int, ...]


def configuration_bound(problem: Problem, target: Target, known: int = 0) -> int | None:
    """The ``configuration`` part (see the module docstring); 0 if nothing needs a slot.

    ``known`` is a bound already proven by other means: None as soon as the LP is seen not
    to exceed it (column generation stops there, which saves most of its time on problems
    where precedence, not resources, decides)."""
    capacities = [*target.lanes.values(), *target.budgets.values()]
    classes, types = _classes(problem, target)
    if not classes:
        return 0
    value = _column_generation(classes, types, capacities, known)
    return None if value is None else ceil_bound(value)


def _usage(mode: Mode, target: Target) -> Usage:
    return (*(mode.lanes.get(k, 0) for k in target.lanes),
            *(mode.budgets.get(b, 0) for b in target.budgets))


def _classes(problem: Problem, target: Target
             ) -> tuple[dict[tuple[tuple[int, int], ...], int], list[Usage]]:
    """Op classes (per usable mode: duration and usage-type index) with their op counts,
    and the usage types. Ops that can run in a mode needing no slot are left out: they
    cost the LP nothing."""
    types: dict[Usage, int] = {}
    classes: dict[tuple[tuple[int, int], ...], int] = {}
    for op in problem.ops.values():
        modes = [op.modes[i] for i in usable_modes(op.modes, target)]
        usages = [_usage(mode, target) for mode in modes]
        if not modes or any(mode.duration == 0 or not any(usage)
                            for mode, usage in zip(modes, usages, strict=True)):
            continue  # no usable mode: validate_problem reports it (FIT)
        signature = tuple((mode.duration, types.setdefault(usage, len(types)))
                          for mode, usage in zip(modes, usages, strict=True))
        classes[signature] = classes.get(signature, 0) + 1
    return classes, list(types)


def _copies_alone(usage: Usage, capacities: Sequence[int]) -> int:
    return min(cap // need for need, cap in zip(usage, capacities, strict=True) if need)


def _column_generation(classes: dict[tuple[tuple[int, int], ...], int], types: list[Usage],
                       capacities: Sequence[int], known: int) -> float | None:
    solver = pywraplp.Solver.CreateSolver("GLOP")
    covers = [solver.Constraint(0.0, solver.infinity()) for _ in types]
    for signature, count in classes.items():
        spread = solver.Constraint(count, count)
        for duration, kind in signature:
            share = solver.NumVar(0.0, count, "")
            spread.SetCoefficient(share, 1.0)
            covers[kind].SetCoefficient(share, -float(duration))
    objective = solver.Objective()
    objective.SetMinimization()

    def add_configuration(copies: Sequence[int]) -> None:
        time = solver.NumVar(0.0, solver.infinity(), "")
        objective.SetCoefficient(time, 1.0)
        for kind, n in enumerate(copies):
            if n:
                covers[kind].SetCoefficient(time, float(n))

    most = [_copies_alone(usage, capacities) for usage in types]
    for kind, n in enumerate(most):
        add_configuration([n if k == kind else 0 for k in range(len(types))])
    best = 0.0
    for round_ in range(MAX_ROUNDS + 1):
        if solver.Solve() != pywraplp.Solver.OPTIMAL:
            return best
        value = objective.Value()
        if value <= known:
            return None  # the full LP's optimum is at most this one's: it cannot beat known
        prices = [max(0.0, cover.dual_value()) for cover in covers]
        last = round_ == MAX_ROUNDS  # only Farley's bound is left to take
        copies = _greedy_configuration(prices, types, capacities)
        if not last and _price(prices, copies) > 1.0 + _CONVERGED:
            add_configuration(copies)  # a cheap column is enough to make progress
            continue
        copies, ceiling = _best_configuration(prices, types, capacities, most)
        best = max(best, value / max(1.0, ceiling))
        if last or ceiling <= 1.0 + _CONVERGED:
            return best
        add_configuration(copies)
    return best


def _price(prices: Sequence[float], copies: Sequence[int]) -> float:
    return sum(price * n for price, n in zip(prices, copies, strict=True))


def _greedy_configuration(prices: Sequence[float], types: list[Usage],
                          capacities: Sequence[int]) -> list[int]:
    """A configuration of high price, filled greedily (by price per share of capacity,
    by price per share of the scarcest resource, and by price alone; the best of the
    three): most rounds need only some column priced above 1, not the best one."""
    def shares(kind: int) -> list[float]:
        return [need / cap for need, cap in zip(types[kind], capacities, strict=True) if need]

    orders = (lambda kind: prices[kind] / sum(shares(kind)),
              lambda kind: prices[kind] / max(shares(kind)),
              lambda kind: prices[kind])
    best: list[int] = [0] * len(types)
    for key in orders:
        left = list(capacities)
        copies = [0] * len(types)
        for kind in sorted(range(len(types)), key=key, reverse=True):
            if prices[kind] > 0.0:
                copies[kind] = n = _copies_alone(types[kind], left)
                left = [cap - n * need for need, cap in zip(types[kind], left, strict=True)]
        if _price(prices, copies) > _price(prices, best):
            best = copies
    return best


def _best_configuration(prices: Sequence[float], types: list[Usage],
                        capacities: Sequence[int], most: Sequence[int]
                        ) -> tuple[list[int], float]:
    """The configuration of highest total price, and an upper bound on that price (the
    knapsack is solved on prices rounded down to integers, so the rounding is added)."""
    from ortools.sat.python import cp_model  # imported when used: it imports pandas

    top = max(prices)
    if top <= 0.0:
        return [0] * len(types), 0.0
    scale = _PRICE_SCALE / top
    weights = [math.floor(price * scale) for price in prices]
    model = cp_model.CpModel()
    counts = [model.new_int_var(0, n, "") for n in most]
    for r, cap in enumerate(capacities):
        terms = [(count, usage[r]) for count, usage in zip(counts, types, strict=True)
                 if usage[r]]
        if terms:
            model.add(sum(count * need for count, need in terms) <= cap)
    model.maximize(sum(count * weight for count, weight in zip(counts, weights, strict=True)))
    solver = cp_model.CpSolver()
    # CP-SAT's own SIGINT catching resets the process's handler to the default when a
    # solve ends, so a later Ctrl-C would kill the process (schedsearch.engine.interrupt).
    solver.parameters.catch_sigint_signal = False
    solver.parameters.num_workers = 1
    solver.parameters.max_deterministic_time = _PRICING_WORK
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return [0] * len(types), math.inf  # no proof of anything: Farley's bound gives 0
    copies = [solver.value(count) for count in counts]
    return copies, (solver.best_objective_bound + sum(most)) / scale
