"""Lower bounds on the makespan of any legal schedule of a problem on a target.

The bound is the largest of its parts, each a valid bound on its own:

- ``lane:K``: ``ceil(sum over ops of min over modes (duration * units of K) / count of K)``;
  the units of K can do no more than ``count`` unit-ticks per tick.
- ``budget:B``: ``ceil(sum over ops of min over modes (duration * draw on B) / capacity)``.
- ``disjunctive:R`` for each lane kind or budget R: ops that in every mode take more
  than half of R can never run at the same time as one another, so their shortest
  durations add up. (Two DMA queues each drawing 40 of a 60 budget: DMA work does not
  divide by two.)
- ``critical_path``: the longest chain of ``after`` edges, each op at its shortest mode.
- ``energy``: the lane and budget parts taken together. Each op may pick a different
  mode, and a mode cheap on one resource can be dear on another (a DMA load at half rate
  draws less DDR bandwidth per byte but holds its queue twice as long). The bound is the
  optimum of the linear relaxation: choose each op's modes fractionally to minimise
  ``T`` subject to ``sum(share * duration * units of K) <= count(K) * T`` for every lane
  kind and ``sum(share * duration * draw on B) <= capacity(B) * T`` for every budget.
  Any schedule's mode choice is a feasible point, so its makespan is at least ``T``.

Makespans are integers, so rounding a true bound up keeps it a bound. A weak bound makes
a good schedule look bad; these parts are cheap and cannot exceed the optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx
from ortools.linear_solver import pywraplp

from models.errors import InputError
from models.formats import Problem, Target
from models.validate import after_graph

__all__ = ["LowerBound", "lower_bound", "critical_path", "energy_bound"]

#: Relative slack taken off the LP optimum before rounding up: the simplex solution is
#: exact only to about 1e-9, and a bound must never exceed the true optimum.
_LP_TOLERANCE = 1e-6


@dataclass(frozen=True, slots=True)
class LowerBound:
    """``value`` = max of ``parts`` (0 for an empty problem)."""

    value: int
    parts: dict[str, int]

    def as_dict(self) -> dict[str, object]:
        return {"value": self.value, "parts": dict(self.parts)}


def critical_path(problem: Problem) -> int:
    """Length of the longest ``after`` chain, each op at its shortest mode's duration."""
    graph = after_graph(problem)
    finish: dict[str, int] = {}
    try:
        order = list(nx.topological_sort(graph))
    except nx.NetworkXUnfeasible:
        raise InputError("after edges form a cycle", path="$.after", rule="CYCLE") from None
    for name in order:
        start = max((finish[p] for p in graph.predecessors(name)), default=0)
        finish[name] = start + min(mode.duration for mode in problem.ops[name].modes)
    return max(finish.values(), default=0)


def lower_bound(problem: Problem, target: Target) -> LowerBound:
    """The bound and its parts (see the module docstring); the problem must name only
    lanes and budgets of the target (:func:`models.validate.validate_problem`)."""
    capacities = {**{f"lane:{k}": (k, n, "lanes") for k, n in target.lanes.items()},
                  **{f"budget:{b}": (b, c, "budgets") for b, c in target.budgets.items()}}
    parts: dict[str, int] = {}
    for part, (resource, capacity, table) in capacities.items():
        work = 0
        chain = 0
        for op in problem.ops.values():
            asks = [getattr(mode, table).get(resource, 0) for mode in op.modes]
            work += min(mode.duration * ask for mode, ask in zip(op.modes, asks, strict=True))
            if all(2 * ask > capacity for ask in asks):
                chain += min(mode.duration for mode in op.modes)
        parts[part] = math.ceil(work / capacity)
        key = f"disjunctive:{resource}"  # a lane and a budget may share a name
        parts[key] = max(parts.get(key, 0), chain)
    parts["critical_path"] = critical_path(problem)
    parts["energy"] = energy_bound(problem, target)
    return LowerBound(max(parts.values(), default=0), parts)


def energy_bound(problem: Problem, target: Target) -> int:
    """The ``energy`` part: the LP relaxation of mode choice against every lane kind and
    budget at once (see the module docstring). Ops with the same modes are one LP column
    group, so the LP stays small for thousands of ops."""
    resources = [("lanes", kind, count) for kind, count in target.lanes.items()]
    resources += [("budgets", name, cap) for name, cap in target.budgets.items()]
    classes: dict[tuple[tuple[tuple[int, ...], ...], ...], int] = {}
    for op in problem.ops.values():
        signature = tuple(tuple(mode.duration * getattr(mode, table).get(name, 0)
                                for table, name, _ in resources) for mode in op.modes)
        classes[signature] = classes.get(signature, 0) + 1
    if not classes or not resources:
        return 0
    solver = pywraplp.Solver.CreateSolver("GLOP")
    makespan = solver.NumVar(0.0, solver.infinity(), "T")
    load = [0.0] * len(resources)
    for signature, count in classes.items():
        shares = [solver.NumVar(0.0, count, "") for _ in signature]
        solver.Add(sum(shares) == count)
        for i in range(len(resources)):
            load[i] += sum(share * energy[i] for share, energy in zip(shares, signature,
                                                                      strict=True))
    for i, (_, _, capacity) in enumerate(resources):
        solver.Add(load[i] <= capacity * makespan)
    solver.Minimize(makespan)
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        return 0  # the relaxation always has an optimum; refuse to guess if GLOP balks
    value = makespan.solution_value()
    return max(0, math.ceil(value - _LP_TOLERANCE * max(1.0, value)))
