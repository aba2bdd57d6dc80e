"""Choosing path A, B or C from the shape alone, and what that choice costs.

A rule sees only what is known before any search: the edge's shape and the target's
figures. :class:`Shape` holds those features:

- ``fill``, the share of the shared on-chip memory that the forwarded rows of one
  consumer row block take (``round_up(bm, tile) * round_up(hidden, tile) * element
  bytes / capacity``): the rows in flight must fit beside the consumer's own blocks;
- ``saving_ns``, what forwarding removes from path B, estimated: one launch and the
  intermediate's store and reload at one DMA queue's full rate;
- ``pressure_ns``, what forwarding adds, estimated like a roofline: the GEMM takes
  ``max(compute, weights)`` (its matrix time, :func:`models.cost.matrix_ns`, against
  streaming its weights at the DDR budget's capacity), and fused its compute takes
  ``fused_compute_factor`` times as long; the pressure is the difference, zero where
  the weights' streaming hides the compute (decode).

A :class:`Rule` picks

- C when the producer's and the matrix engine's memory are one (forwarding exists),
  ``fill <= max_fill`` and ``saving_ns >= margin * pressure_ns``;
- otherwise ``otherwise`` (B or A).

:func:`tune_rule` chooses ``max_fill``, ``margin`` and ``otherwise`` from
:data:`FILLS` x :data:`MARGINS` x ``{B, A}`` by the smallest mean regret over a tuning
set of measured edges, before any evaluation shape is looked at; ties go to the smaller
``max_fill`` (forward only as far as the tuning set showed it to work), then to the
margin nearest 1 (the estimate at face value), then to B. The regret of a choice on an
edge is ``makespan(chosen) / makespan(best path) - 1``; a chosen path that cannot be
built (no path C) runs path B instead, and is counted at B's makespan.

:func:`rule_plan` saves a measured choice as an ``npu-plan/1`` file
(:mod:`schedsearch.plans`): the domain is the request's own two tasks and the target
(their exact shapes; widen a range by editing the file once the schedule is known to
serve it), the schedule and ``cost`` are the chosen path's (``cost.path`` names it and
its variant, ``chain-C (forwarded, 64-row blocks, compute x1.15)`` say), the fallback is
the fastest other path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from models.cost import cost_model, matrix_ns, overheads
from models.dtypes import DTYPE_BYTES
from models.formats import Schedule, Target, schedule_to_dict
from models.layouts import layout_costs
from models.ops.builder import round_up
from schedsearch.chains.paths import ChainPath, ChainResult, Edge, PathName
from schedsearch.plans import Plan, domain_of, path_cost

__all__ = ["Shape", "Rule", "FILLS", "MARGINS", "shape_of", "regret", "ran", "tune_rule",
           "rule_plan"]

#: The ``max_fill`` thresholds a tuning tries.
FILLS = (0.125, 0.25, 0.5, 0.75, 1.0)
#: The ``margin`` factors a tuning tries: forward when the saving is this many times
#: the pressure (below 1: trust forwarding more than the estimate, above: less).
MARGINS = (0.5, 1.0, 2.0)


@dataclass(frozen=True, slots=True)
class Shape:
    """What a rule may look at: the edge's sizes and what the target offers."""

    rows: int
    hidden: int
    out: int
    forwardable: bool
    fill: float
    saving_ns: int
    pressure_ns: int

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "hidden": self.hidden, "out": self.out,
                "forwardable": self.forwardable, "fill": self.fill,
                "saving_ns": self.saving_ns, "pressure_ns": self.pressure_ns}


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
    rows, out = int(consumer["M"]), int(consumer["N"])
    dtype = str(consumer.get("dtype", edge.producer.params["dtype"]))
    compute = matrix_ns(model.matrix, rows, out, hidden, dtype)
    weights = math.ceil(hidden * out * DTYPE_BYTES[dtype] / target.budgets[model.ddr_budget])
    fused = math.ceil(compute * layout_costs(target).fused_compute_factor)
    round_trip = 2 * math.ceil(rows * hidden * elem / max(model.store.rates))
    return Shape(rows=rows, hidden=hidden, out=out,
                 forwardable=model.vector.memory == model.matrix.memory,
                 fill=need / capacity, saving_ns=overheads(target).launch_ns + round_trip,
                 pressure_ns=max(fused, weights) - max(compute, weights))


@dataclass(frozen=True, slots=True)
class Rule:
    """C when forwarding exists, ``fill <= max_fill`` and ``saving_ns >= margin *
    pressure_ns``, else ``otherwise``."""

    max_fill: float
    margin: float
    otherwise: PathName

    def choose(self, shape: Shape) -> PathName:
        if (shape.forwardable and shape.fill <= self.max_fill
                and shape.saving_ns >= self.margin * shape.pressure_ns):
            return PathName.C
        return self.otherwise

    @property
    def text(self) -> str:
        return (f"C if the engines share a memory, the forwarded rows of one row block "
                f"fill at most {self.max_fill:.0%} of it and the launch and round trip "
                f"saved are at least {self.margin:g}x the fused compute's estimated cost, "
                f"else {self.otherwise.value}")


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
    """The rule of smallest mean regret over ``measured`` (ties: smaller fill, the
    margin nearest 1, then B)."""
    rules = [Rule(fill, margin, other) for fill in FILLS for margin in MARGINS
             for other in (PathName.B, PathName.A)]

    def score(rule: Rule) -> tuple[float, float, float, int]:
        mean = sum(regret(result, rule.choose(shape)) for shape, result in measured)
        return (mean / max(1, len(measured)), rule.max_fill, abs(math.log(rule.margin)),
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
