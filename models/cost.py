"""The cost model: op durations and budget draws from a target's ``costs``, and overheads.

A target's ``costs`` object describes each engine as a roofline (a fixed start-up latency
plus work divided by a rate) and names which lane, memory and budget plays each role, so
that the operator library never mentions ``HMX`` or ``CUBE`` itself::

    "costs": {"matrix": {"lane", "memory", "accumulator_memory", "tile", "macs_per_ns",
                         "latency_ns", "accumulator_bytes"},
              "vector": {"lane", "memory", "bytes_per_ns", "latency_ns", "max_units",
                         "ddr_bytes_per_ns" (optional: the engine can copy DDR itself)},
              "load":   {"lane", "latency_ns", "bytes_per_ns": [rate, ...]},
              "store":  {"lane", "latency_ns", "bytes_per_ns": [rate, ...]},
              "ddr_budget": "<budget name>",
              "overheads": {"launch_ns", "event_ns", "barrier_ns"}}

Every duration is a whole number of ticks, at least 1. Scoring a finished schedule lives
in :mod:`models.evaluation` and is re-exported here (``evaluate``, ``Evaluation``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from models.dtypes import DTYPE_BYTES
from models.errors import InputError
from models.evaluation import Evaluation, evaluate
from models.formats import Mode, Target
from models.jsonio import json_path

__all__ = [
    "DTYPE_BYTES", "VECTOR_PASSES", "MatrixEngine", "VectorEngine", "TransferEngine",
    "Overheads", "CostModel", "cost_model", "overheads", "matrix_ns",
    "vector_ns", "transfer_ns", "matrix_mode", "vector_modes", "transfer_modes",
    "vector_copy_mode", "Evaluation", "evaluate",
]

#: Vector passes per element of each vector kernel: an assumption (an instruction count
#: per element, which is a property of the kernel rather than of the hardware).
#: rmsnorm: square, accumulate, scale by the reciprocal root, multiply by the weight.
VECTOR_PASSES = {"rmsnorm": 4, "convert": 1, "copy": 1, "relu": 1, "silu": 6, "gelu": 8}


@dataclass(frozen=True, slots=True)
class MatrixEngine:
    lane: str
    memory: str
    accumulator_memory: str
    tile: int
    macs_per_ns: float
    latency_ns: int
    accumulator_bytes: int


@dataclass(frozen=True, slots=True)
class VectorEngine:
    lane: str
    memory: str
    bytes_per_ns: float
    latency_ns: int
    max_units: int
    ddr_bytes_per_ns: int | None = None


@dataclass(frozen=True, slots=True)
class TransferEngine:
    """A copy engine between DDR and on-chip memory; each rate is one mode and its draw."""

    lane: str
    latency_ns: int
    rates: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Overheads:
    """Fixed costs the baselines pay: a kernel launch, a synchronisation event, a barrier."""

    launch_ns: int
    event_ns: int
    barrier_ns: int


@dataclass(frozen=True, slots=True)
class CostModel:
    matrix: MatrixEngine
    vector: VectorEngine
    load: TransferEngine
    store: TransferEngine
    ddr_budget: str
    overheads: Overheads


class _CostsReader:
    """Strict reading of ``costs``; failures name the target and the JSON path."""

    def __init__(self, target: Target) -> None:
        self.target = target

    def fail(self, path: str, message: str) -> InputError:
        return InputError(message, source=self.target.name, path=path, rule="COSTS")

    def section(self, parent: dict[str, Any], key: str, path: str) -> dict[str, Any]:
        value = parent.get(key)
        if not isinstance(value, dict):
            raise self.fail(json_path(path, key), "missing or not an object")
        return value

    def number(self, section: dict[str, Any], key: str, path: str, *,
               integer: bool = False, minimum: float = 0) -> Any:
        value = section.get(key)
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or value < minimum:
            raise self.fail(json_path(path, key),
                            f"expected {'an integer' if integer else 'a number'} >= {minimum}")
        return value

    def name(self, section: dict[str, Any], key: str, path: str, table: dict[str, Any],
             what: str) -> str:
        value = section.get(key)
        if value not in table:
            raise self.fail(json_path(path, key), f"{value!r} is not a {what} of the target")
        return value


def cost_model(target: Target) -> CostModel:
    """Read the target's ``costs`` into engines; InputError (rule ``COSTS``) if unusable."""
    r = _CostsReader(target)
    costs = target.costs

    def transfer(key: str) -> TransferEngine:
        path = json_path("$.costs", key)
        s = r.section(costs, key, "$.costs")
        rates = s.get("bytes_per_ns")
        if (not isinstance(rates, list) or not rates
                or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in rates)):
            raise r.fail(json_path(path, "bytes_per_ns"),
                         "expected a non-empty list of integer rates >= 1")
        return TransferEngine(r.name(s, "lane", path, target.lanes, "lane"),
                              r.number(s, "latency_ns", path, integer=True, minimum=1),
                              tuple(rates))

    m = r.section(costs, "matrix", "$.costs")
    v = r.section(costs, "vector", "$.costs")
    o = r.section(costs, "overheads", "$.costs")
    mp, vp, op = "$.costs.matrix", "$.costs.vector", "$.costs.overheads"
    ddr_budget = r.name(costs, "ddr_budget", "$.costs", target.budgets, "budget")
    vector_ddr = None
    if "ddr_bytes_per_ns" in v:
        vector_ddr = r.number(v, "ddr_bytes_per_ns", vp, integer=True, minimum=1)
    vector_lane = r.name(v, "lane", vp, target.lanes, "lane")
    max_units = r.number(v, "max_units", vp, integer=True, minimum=1)
    return CostModel(
        matrix=MatrixEngine(
            lane=r.name(m, "lane", mp, target.lanes, "lane"),
            memory=r.name(m, "memory", mp, target.memories, "memory"),
            accumulator_memory=r.name(m, "accumulator_memory", mp, target.memories, "memory"),
            tile=r.number(m, "tile", mp, integer=True, minimum=1),
            macs_per_ns=r.number(m, "macs_per_ns", mp, minimum=1e-9),
            latency_ns=r.number(m, "latency_ns", mp, integer=True, minimum=1),
            accumulator_bytes=r.number(m, "accumulator_bytes", mp, integer=True, minimum=1)),
        vector=VectorEngine(
            lane=vector_lane,
            memory=r.name(v, "memory", vp, target.memories, "memory"),
            bytes_per_ns=r.number(v, "bytes_per_ns", vp, minimum=1e-9),
            latency_ns=r.number(v, "latency_ns", vp, integer=True, minimum=1),
            max_units=min(max_units, target.lanes[vector_lane]),
            ddr_bytes_per_ns=vector_ddr),
        load=transfer("load"), store=transfer("store"), ddr_budget=ddr_budget,
        overheads=Overheads(*(r.number(o, key, op, integer=True)
                              for key in ("launch_ns", "event_ns", "barrier_ns"))))


def overheads(target: Target) -> Overheads:
    """The target's launch, event and barrier overheads, in ticks."""
    return cost_model(target).overheads


def matrix_ns(engine: MatrixEngine, m: int, n: int, k: int) -> int:
    """``latency + ceil(M' * N' * K' / macs_per_ns)``, each extent rounded up to the tile.

    The matrix unit computes whole tiles, so an edge block costs as much as a full tile.
    """
    def padded(x: int) -> int:
        return -(-x // engine.tile) * engine.tile

    return engine.latency_ns + math.ceil(padded(m) * padded(n) * padded(k)
                                         / engine.macs_per_ns)


def vector_ns(engine: VectorEngine, nbytes: int, passes: int, units: int = 1) -> int:
    """``latency + ceil(bytes * passes / (bytes_per_ns * units))``.

    Splitting over ``units`` contexts divides the streaming part only: each context still
    pays the start-up latency, so two units cost more unit-time than one.
    """
    return engine.latency_ns + math.ceil(nbytes * passes / (engine.bytes_per_ns * units))


def transfer_ns(latency_ns: int, nbytes: int, bytes_per_ns: int) -> int:
    """``latency + ceil(bytes / rate)``: a copy streams at the rate its budget draw allows."""
    return latency_ns + math.ceil(nbytes / bytes_per_ns)


def matrix_mode(model: CostModel, m: int, n: int, k: int) -> Mode:
    """One matrix-engine unit for :func:`matrix_ns`; no DDR draw (operands are on chip)."""
    return Mode(matrix_ns(model.matrix, m, n, k), {model.matrix.lane: 1})


def vector_modes(model: CostModel, nbytes: int, passes: int,
                 max_units: int | None = None) -> tuple[Mode, ...]:
    """One mode per unit count ``1..max_units`` (default: the engine's), each lasting
    :func:`vector_ns`. A short op is given ``max_units=1``: splitting it saves little."""
    engine = model.vector
    top = engine.max_units if max_units is None else min(max_units, engine.max_units)
    return tuple(Mode(vector_ns(engine, nbytes, passes, units), {engine.lane: units})
                 for units in range(1, top + 1))


def transfer_modes(model: CostModel, engine: TransferEngine, nbytes: int) -> tuple[Mode, ...]:
    """One mode per rate of ``engine``: one unit, :func:`transfer_ns`, drawing the rate."""
    return tuple(Mode(transfer_ns(engine.latency_ns, nbytes, rate), {engine.lane: 1},
                      {model.ddr_budget: rate})
                 for rate in engine.rates)


def vector_copy_mode(model: CostModel, nbytes: int) -> Mode | None:
    """A copy driven by the vector engine itself, or None if the target cannot do that.

    ``vector latency + ceil(bytes / ddr_bytes_per_ns)`` on one vector unit, drawing
    ``ddr_bytes_per_ns`` from the DDR budget.
    """
    rate = model.vector.ddr_bytes_per_ns
    if rate is None:
        return None
    return Mode(transfer_ns(model.vector.latency_ns, nbytes, rate), {model.vector.lane: 1},
                {model.ddr_budget: rate})
