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

Makespans are integers, so rounding a true bound up keeps it a bound. A weak bound makes
a good schedule look bad; these parts are cheap and cannot exceed the optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx

from models.errors import InputError
from models.formats import Problem, Target
from models.validate import after_graph

__all__ = ["LowerBound", "lower_bound", "critical_path"]


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
    return LowerBound(max(parts.values(), default=0), parts)
