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
- ``configuration``: energy, knowing which modes can run at the same time
  (:mod:`schedsearch.engine.bounds.configurations`); at least as high as the lane, budget,
  disjunctive and energy parts, and higher when no mix of modes fills every resource at once. Left
  out when it is seen not to beat the parts above (that saves its column generation).
- ``memory:M`` for each memory M that buffers use: the address space times time its
  buffers need at least (each buffer's size, rounded up to the alignment, times its
  shortest possible lifetime) over the space M offers per tick
  (:mod:`schedsearch.engine.bounds.memory`). It is what binds where on-chip memory is tight.
- ``exclusion:M``: ops whose buffers of M cannot be live together run apart
  (:mod:`schedsearch.engine.bounds.memory`); ``gaps:M``: what memory forces into each gap between
  them, priced by small CP-SAT models and an LP over their orders
  (:mod:`schedsearch.engine.bounds.gap`). All three memory parts:
  :mod:`schedsearch.engine.bounds.memory_parts`.
- ``head_tail:K`` for each lane kind K: the least time before any op of K can start
  (longest path of orderings every legal schedule respects: ``after``, the single writer
  of a read value, DDR writes before reads) plus K's work over its units plus the least
  time after any of them ends; ``phases:K``: the same across a chain of ops off K that
  cut K's work into phases, with the forced waits between them (an RMSNorm or a softmax
  that every later GEMM depends on), each wait also counting the work that every lane
  kind and budget must do in it (the activations crossing DDR between two GEMM phases).
  :mod:`schedsearch.engine.bounds.phases`.
- ``windows``: the ``energy`` LP over the windows those forced heads and tails cut: the
  ops that cannot start before ``r`` nor end after the makespan minus ``q`` fit their
  work on every lane and budget into ``makespan - r - q``, one mode choice for all
  windows (the last weight loads of a decode layer still need a GEMM and a store after
  them). :mod:`schedsearch.engine.bounds.windows`.

Makespans are integers, so rounding a true bound up keeps it a bound. A weak bound makes
a good schedule look bad; these parts are cheap and cannot exceed the optimum.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx
from ortools.linear_solver import pywraplp

from models.errors import InputError
from models.formats import Problem, Target
from models.validate import after_graph, usable_modes
from schedsearch.engine.bounds.configurations import configuration_bound
from schedsearch.engine.bounds.ends import sharpened_order
from schedsearch.engine.bounds.lp import ceil_bound
from schedsearch.engine.bounds.memory_parts import memory_bound_parts
from schedsearch.engine.bounds.phases import forced_order, op_tables, phase_parts
from schedsearch.engine.bounds.windows import window_part

__all__ = ["LowerBound", "lower_bound", "critical_path", "energy_bound", "energy_relaxation",
           "EnergyRelaxation"]


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


def lower_bound(problem: Problem, target: Target, *,
                relaxation: EnergyRelaxation | None = None) -> LowerBound:
    """The bound and its parts (see the module docstring); the problem must name only
    lanes and budgets of the target (:func:`models.validate.validate_problem`).

    ``relaxation`` is :func:`energy_relaxation` of the same problem and target when the
    caller already solved it (the search also needs its prices): the LP is then not
    solved again."""
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
    if relaxation is None:
        relaxation = energy_relaxation(problem, target)
    parts["energy"] = 0 if relaxation is None else relaxation.bound()
    parts.update(memory_bound_parts(problem, target))
    tables = op_tables(problem, target)
    order = forced_order(problem, tables.duration)
    if order is not None:
        order = sharpened_order(problem, target, tables, order)
    parts.update(phase_parts(problem, target, forced=(tables, order)))
    if order is not None and relaxation is not None:
        parts.update(window_part(problem, target, relaxation.prices, order))
    configuration = configuration_bound(problem, target, known=max(parts.values()))
    if configuration is not None:  # None: it cannot beat the parts above
        parts["configuration"] = configuration
    return LowerBound(max(parts.values(), default=0), parts)


@dataclass(frozen=True, slots=True)
class EnergyRelaxation:
    """The optimum ``makespan`` of the ``energy`` LP and its dual ``prices``: per unit of
    each resource (``lane:K`` per unit-tick, ``budget:B`` per draw-tick), zero for those
    that do not bind. A mode's price is its energy on each resource times that price;
    by complementary slackness an optimal relaxation uses only each op's cheapest modes."""

    makespan: float
    prices: dict[str, float]

    def bound(self) -> int:
        """The ``energy`` part: the LP optimum, rounded up after a tolerance for the
        simplex method's precision (a bound must never exceed the true optimum)."""
        return ceil_bound(self.makespan)

    def mode_price(self, duration: int, lanes: Iterable[tuple[str, int]],
                   budgets: Iterable[tuple[str, int]]) -> float:
        """The price of a mode of ``duration`` holding ``lanes`` and drawing ``budgets``
        (``(name, amount)`` pairs)."""
        return duration * (sum(self.prices.get(f"lane:{k}", 0.0) * n for k, n in lanes)
                           + sum(self.prices.get(f"budget:{b}", 0.0) * n for b, n in budgets))


def energy_relaxation(problem: Problem, target: Target) -> EnergyRelaxation | None:
    """Solve the ``energy`` LP (see the module docstring), or None if there is nothing to
    bound (no ops, or a target without lanes and budgets). Only modes the target can run
    take part; ops with the same modes are one column group, so the LP stays small for
    thousands of ops."""
    resources = [("lanes", kind, count) for kind, count in target.lanes.items()]
    resources += [("budgets", name, cap) for name, cap in target.budgets.items()]
    classes: dict[tuple[tuple[int, ...], ...], int] = {}
    for op in problem.ops.values():
        signature = tuple(tuple(op.modes[i].duration * getattr(op.modes[i], table).get(name, 0)
                                for table, name, _ in resources)
                          for i in usable_modes(op.modes, target))
        classes[signature] = classes.get(signature, 0) + 1
    if not classes or not resources:
        return None
    solver = pywraplp.Solver.CreateSolver("GLOP")
    makespan = solver.NumVar(0.0, solver.infinity(), "T")
    load = [0.0] * len(resources)
    for signature, count in classes.items():
        shares = [solver.NumVar(0.0, count, "") for _ in signature]
        solver.Add(sum(shares) == count)
        for i in range(len(resources)):
            load[i] += sum(share * energy[i] for share, energy in zip(shares, signature,
                                                                      strict=True))
    rows = [solver.Add(load[i] <= capacity * makespan)
            for i, (_, _, capacity) in enumerate(resources)]
    solver.Minimize(makespan)
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        return None  # an op with no usable mode: validate_problem reports it (FIT)
    prices = {f"{'lane' if table == 'lanes' else 'budget'}:{name}": abs(row.dual_value())
              for (table, name, _), row in zip(resources, rows, strict=True)}
    return EnergyRelaxation(makespan.solution_value(), prices)


def energy_bound(problem: Problem, target: Target) -> int:
    """The ``energy`` part (:meth:`EnergyRelaxation.bound`; 0 with nothing to bound)."""
    relaxation = energy_relaxation(problem, target)
    return 0 if relaxation is None else relaxation.bound()
