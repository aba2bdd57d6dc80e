"""Choosing path A, B or C from the shape alone, and what that choice costs.

A rule sees only what is known before any search: the edge's shape and the target.
:class:`Shape` holds those features; the one that matters to path C is ``fill``, the
share of the shared on-chip memory that the forwarded rows of one consumer row block
take (``round_up(bm, tile) * round_up(hidden, tile) * element bytes / capacity``): the
rows in flight must fit beside the consumer's own blocks. A :class:`Rule` picks

- C when the producer's and the matrix engine's memory are one (forwarding exists) and
  ``fill <= max_fill``;
- otherwise ``otherwise`` (B or A).

:func:`tune_rule` chooses ``max_fill`` and ``otherwise`` from :data:`FILLS` x
``{B, A}`` by the smallest mean regret over a tuning set of measured edges, before any
evaluation shape is looked at; ties go to the smaller ``max_fill`` (forward only as far
as the tuning set showed it to work), then to B. The regret of a
choice on an edge is ``makespan(chosen) / makespan(best path) - 1``; a chosen path that
cannot be built (no path C) runs path B instead, and is counted at B's makespan.

:func:`rule_plan` saves a measured choice as an ``npu-plan/1`` file
(:mod:`schedsearch.plans`): the domain is the request's own two tasks and the target
(their exact shapes; widen a range by editing the file once the schedule is known to
serve it), the schedule and ``cost`` are the chosen path's (``cost.path`` names it and
its variant, ``chain-C (forwarded, 64-row blocks)`` say), the fallback is the fastest
other path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from models.cost import cost_model
from models.dtypes import DTYPE_BYTES
from models.formats import Schedule, Target, schedule_to_dict
from models.ops.builder import round_up
from schedsearch.chains.paths import ChainPath, ChainResult, Edge, PathName
from schedsearch.plans import Plan, domain_of, path_cost

__all__ = ["Shape", "Rule", "FILLS", "shape_of", "regret", "ran", "tune_rule", "rule_plan"]

#: The ``max_fill`` thresholds a tuning tries.
FILLS = (0.125, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True, slots=True)
class Shape:
    """What a rule may look at: the edge's sizes and what the target offers."""

    rows: int
    hidden: int
    out: int
    forwardable: bool
    fill: float

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "hidden": self.hidden, "out": self.out,
                "forwardable": self.forwardable, "fill": self.fill}


def shape_of(edge: Edge, target: Target) -> Shape:
    """The features of ``edge`` on ``target`` (module docstring)."""
    model = cost_model(target)
    tile = model.matrix.tile
    consumer = edge.consumer.params
    hidden = int(edge.producer.params["cols"])
    elem = DTYPE_BYTES[str(edge.producer.params["dtype"])]
    rows_in_flight = round_up(min(int(consumer["bm"]), int(consumer["M"])), tile)
    need = rows_in_flight * round_up(hidden, tile) * elem
    capacity = target.memories[model.matrix.memory].capacity_bytes
    return Shape(rows=int(consumer["M"]), hidden=hidden, out=int(consumer["N"]),
                 forwardable=model.vector.memory == model.matrix.memory,
                 fill=need / capacity)


@dataclass(frozen=True, slots=True)
class Rule:
    """C when forwarding exists and ``fill <= max_fill``, else ``otherwise``."""

    max_fill: float
    otherwise: PathName

    def choose(self, shape: Shape) -> PathName:
        if shape.forwardable and shape.fill <= self.max_fill:
            return PathName.C
        return self.otherwise

    @property
    def text(self) -> str:
        return (f"C if the engines share a memory and the forwarded rows of one row block "
                f"fill at most {self.max_fill:.0%} of it, else {self.otherwise.value}")


def ran(result: ChainResult, chosen: PathName) -> ChainPath:
    """The path that runs when ``chosen`` is picked: B where ``chosen`` was not built."""
    found = result.path(chosen)
    if found is not None:
        return found
    fallback = result.path(PathName.B)
    assert fallback is not None, "path B is always built"
    return fallback


def regret(result: ChainResult, chosen: PathName) -> float:
    """``makespan(what runs) / makespan(best path) - 1`` (module docstring)."""
    return ran(result, chosen).result.makespan / result.best.result.makespan - 1


def tune_rule(measured: Sequence[tuple[Shape, ChainResult]]) -> Rule:
    """The rule of smallest mean regret over ``measured`` (ties: smaller fill, then B)."""
    rules = [Rule(fill, other) for fill in FILLS for other in (PathName.B, PathName.A)]

    def score(rule: Rule) -> tuple[float, float, int]:
        mean = sum(regret(result, rule.choose(shape)) for shape, result in measured)
        return (mean / max(1, len(measured)), rule.max_fill,
                0 if rule.otherwise is PathName.B else 1)

    return min(rules, key=score)


def rule_plan(result: ChainResult, chosen: PathName, request: Schedule) -> Plan:
    """An ``npu-plan/1`` plan of ``chosen`` for ``result``'s edge (module docstring).

    ``request`` is any schedule of the request's own two-task problem on the target (path
    B's): its tasks and target make the domain.
    """
    runs = ran(result, chosen)
    others = [p for p in result.paths if p is not runs]
    fallback = min(others, key=lambda p: p.result.makespan)

    def cost(path: ChainPath) -> dict[str, Any]:
        return path_cost(replace(path.result,
                                 name=f"chain-{path.path.value} ({path.variant})"))

    preferred = fallback.result.makespan < runs.result.makespan
    reason = (f"chain-{fallback.path.value} ({fallback.result.makespan}) beats the rule's "
              f"chain-{runs.path.value} ({runs.result.makespan})" if preferred else
              f"the rule's chain-{runs.path.value} ({runs.result.makespan}) is no slower "
              f"than chain-{fallback.path.value} ({fallback.result.makespan})")
    extent = runs.result.evaluation.extent_bytes
    return Plan(domain=domain_of(request, extent), schedule=runs.result.schedule,
                cost=cost(runs),
                fallback={**cost(fallback), "preferred": preferred, "reason": reason,
                          "schedule": schedule_to_dict(fallback.result.schedule)})
