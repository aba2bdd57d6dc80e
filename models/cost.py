"""The cost model: op durations and budget draws from a target's ``costs``, and overheads.

A target's ``costs`` object describes each engine as a roofline (a fixed start-up latency
plus work divided by a rate) and names which lane, memory and budget plays each role, so
that the operator library never mentions ``HMX`` or ``CUBE`` itself::

    "costs": {"matrix": {"lane", "memory", "accumulator_memory", "tile", "macs_per_ns",
                         "latency_ns", "accumulator_bytes",
                         "dtypes" (optional): {"f16": {"macs_per_ns", "accumulator_bytes"},
                                               "i8": {...}, ...}},
              "vector": {"lane", "memory", "bytes_per_ns", "latency_ns", "max_units",
                         "ddr_bytes_per_ns" (optional: the engine can copy DDR itself),
                         "dtypes" (optional): {"f16": {"bytes_per_ns"}, "f32": {...}, ...}},
              "load":   {"lane", "latency_ns", "bytes_per_ns": [rate, ...]},
              "store":  {"lane", "latency_ns", "bytes_per_ns": [rate, ...]},
              "ddr_budget": "<budget name>",
              "overheads": {"launch_ns", "event_ns", "barrier_ns", "dispatch_ns"}}

Per element type (``dtypes``): the keys of an engine's ``dtypes`` are the element types
it accepts (names from :data:`models.dtypes.DTYPE_BYTES`); each entry may override the
engine's rate (``macs_per_ns``: multiply-accumulates per ns for that input type;
``bytes_per_ns``: bytes streamed per ns per vector unit) and, for the matrix engine, the
accumulator width (``accumulator_bytes``: 4 for f16 into f32 and for i8 into i32); a key
an entry leaves out takes the engine's top-level figure. An engine without ``dtypes``
accepts every element type at its top-level figures (targets written before per-type
rates). A task in an element type its engine does not list is refused (rule ``DTYPE``).

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
    "DTYPE_BYTES", "VECTOR_PASSES", "MatrixRate", "MatrixEngine", "VectorEngine", "TransferEngine",
    "Overheads", "NO_OVERHEADS", "CostModel", "cost_model", "overheads", "matrix_ns",
    "vector_ns", "transfer_ns", "matrix_mode", "vector_modes", "transfer_modes",
    "vector_copy_mode", "Evaluation", "evaluate",
]

#: Vector passes per element of each vector kernel: an assumption (an instruction count
#: per element, which is a property of the kernel rather than of the hardware).
#: rmsnorm: square, accumulate, scale by the reciprocal root, multiply by the weight;
#: layernorm: the same plus the mean and the bias; softmax: max, subtract and exponential
#: (the exponential counted as 4), sum, scale; a binary op streams two operands (2), a
#: division takes a reciprocal as well (4); transpose: shuffles in and out of registers;
#: dequantize: unpack (int4), convert to the matrix engine's type, scale (3).
VECTOR_PASSES = {"rmsnorm": 4, "layernorm": 6, "softmax": 8, "convert": 1, "copy": 1,
                 "relu": 1, "silu": 6, "gelu": 8, "sigmoid": 5, "tanh": 6, "add": 2,
                 "sub": 2, "mul": 2, "div": 4, "transpose": 2, "dequantize": 3}


@dataclass(frozen=True, slots=True)
class MatrixRate:
    """The matrix engine's figures for one input element type."""

    macs_per_ns: float
    accumulator_bytes: int


@dataclass(frozen=True, slots=True)
class MatrixEngine:
    """``dtypes`` maps each accepted input element type to its figures; None: every
    element type at the top-level ``macs_per_ns`` and ``accumulator_bytes``."""

    lane: str
    memory: str
    accumulator_memory: str
    tile: int
    macs_per_ns: float
    latency_ns: int
    accumulator_bytes: int
    dtypes: dict[str, MatrixRate] | None = None

    def rate(self, dtype: str) -> MatrixRate | None:
        """The figures for ``dtype``, or None when the engine does not take it."""
        if self.dtypes is None:
            return MatrixRate(self.macs_per_ns, self.accumulator_bytes)
        return self.dtypes.get(dtype)

    def accepted(self) -> tuple[str, ...]:
        return tuple(DTYPE_BYTES) if self.dtypes is None else tuple(self.dtypes)


@dataclass(frozen=True, slots=True)
class VectorEngine:
    """``dtypes`` maps each accepted element type to its bytes per ns per unit; None:
    every element type at the top-level ``bytes_per_ns``."""

    lane: str
    memory: str
    bytes_per_ns: float
    latency_ns: int
    max_units: int
    ddr_bytes_per_ns: int | None = None
    dtypes: dict[str, float] | None = None

    def rate(self, dtype: str) -> float | None:
        """Bytes per ns per unit for ``dtype``, or None when the engine does not take it."""
        if self.dtypes is None:
            return self.bytes_per_ns
        return self.dtypes.get(dtype)

    def accepted(self) -> tuple[str, ...]:
        return tuple(DTYPE_BYTES) if self.dtypes is None else tuple(self.dtypes)


@dataclass(frozen=True, slots=True)
class TransferEngine:
    """A copy engine between DDR and on-chip memory; each rate is one mode and its draw."""

    lane: str
    latency_ns: int
    rates: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Overheads:
    """Fixed costs the baselines pay: a kernel launch, a synchronisation event, a barrier,
    and a dynamic runtime's dispatch of one ready op (``dispatch_ns``; a target that does
    not state it is read with ``event_ns``: a dispatch resolves at least one event)."""

    launch_ns: int
    event_ns: int
    barrier_ns: int
    dispatch_ns: int = 0


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

    def dtypes(self, section: dict[str, Any], path: str,
               fields: dict[str, bool]) -> dict[str, dict[str, Any]] | None:
        """The ``dtypes`` table of an engine (None if absent); each entry's keys are among
        ``fields`` (name -> integer only), missing ones taken from ``section`` itself."""
        if "dtypes" not in section:
            return None
        table = section["dtypes"]
        where = json_path(path, "dtypes")
        if not isinstance(table, dict) or not table:
            raise self.fail(where, "expected a non-empty object of element types")
        found = {}
        for dtype, entry in table.items():
            at = json_path(where, dtype)
            if dtype not in DTYPE_BYTES:
                raise self.fail(at, f"unknown element type {dtype!r}; known: "
                                    f"{', '.join(DTYPE_BYTES)}")
            if not isinstance(entry, dict):
                raise self.fail(at, "expected an object")
            for key in entry:
                if key not in fields:
                    raise self.fail(json_path(at, key), f"unknown key {key!r}; known: "
                                                        f"{', '.join(fields)}")
            found[dtype] = {key: self.number(entry if key in entry else section, key,
                                             at if key in entry else path,
                                             integer=integer, minimum=1e-9)
                            for key, integer in fields.items()}
        return found

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
    mp, vp = "$.costs.matrix", "$.costs.vector"
    ddr_budget = r.name(costs, "ddr_budget", "$.costs", target.budgets, "budget")
    vector_ddr = None
    if "ddr_bytes_per_ns" in v:
        vector_ddr = r.number(v, "ddr_bytes_per_ns", vp, integer=True, minimum=1)
    vector_lane = r.name(v, "lane", vp, target.lanes, "lane")
    max_units = r.number(v, "max_units", vp, integer=True, minimum=1)
    matrix_dtypes = r.dtypes(m, mp, {"macs_per_ns": False, "accumulator_bytes": True})
    vector_dtypes = r.dtypes(v, vp, {"bytes_per_ns": False})
    return CostModel(
        matrix=MatrixEngine(
            lane=r.name(m, "lane", mp, target.lanes, "lane"),
            memory=r.name(m, "memory", mp, target.memories, "memory"),
            accumulator_memory=r.name(m, "accumulator_memory", mp, target.memories, "memory"),
            tile=r.number(m, "tile", mp, integer=True, minimum=1),
            macs_per_ns=r.number(m, "macs_per_ns", mp, minimum=1e-9),
            latency_ns=r.number(m, "latency_ns", mp, integer=True, minimum=1),
            accumulator_bytes=r.number(m, "accumulator_bytes", mp, integer=True, minimum=1),
            dtypes=None if matrix_dtypes is None else {
                dtype: MatrixRate(**entry) for dtype, entry in matrix_dtypes.items()}),
        vector=VectorEngine(
            lane=vector_lane,
            memory=r.name(v, "memory", vp, target.memories, "memory"),
            bytes_per_ns=r.number(v, "bytes_per_ns", vp, minimum=1e-9),
            latency_ns=r.number(v, "latency_ns", vp, integer=True, minimum=1),
            max_units=min(max_units, target.lanes[vector_lane]),
            ddr_bytes_per_ns=vector_ddr,
            dtypes=None if vector_dtypes is None else {
                dtype: entry["bytes_per_ns"] for dtype, entry in vector_dtypes.items()}),
        load=transfer("load"), store=transfer("store"), ddr_budget=ddr_budget,
        overheads=overheads(target))


#: The overheads of a target without ``costs`` (optional in the format), for the
#: commands that need nothing else of the cost model (``simulate`` says when it uses it).
NO_OVERHEADS = Overheads(0, 0, 0, 0)


def overheads(target: Target) -> Overheads:
    """The target's launch, event and barrier overheads, in ticks: ``costs.overheads``
    alone, so a command that needs only these does not require the engines' figures."""
    r = _CostsReader(target)
    o = r.section(target.costs, "overheads", "$.costs")
    op = "$.costs.overheads"
    dispatch = "dispatch_ns" if "dispatch_ns" in o else "event_ns"
    return Overheads(*(r.number(o, key, op, integer=True)
                       for key in ("launch_ns", "event_ns", "barrier_ns", dispatch)))


def matrix_ns(engine: MatrixEngine, m: int, n: int, k: int, dtype: str = "f16") -> int:
    """``latency + ceil(M' * N' * K' / macs_per_ns[dtype])``, each extent rounded up to
    the tile.

    The matrix unit computes whole tiles, so an edge block costs as much as a full tile.
    ValueError if the engine does not take ``dtype`` (check :meth:`MatrixEngine.rate`).
    """
    rate = engine.rate(dtype)
    if rate is None:
        raise ValueError(f"the matrix engine does not take {dtype}")

    def padded(x: int) -> int:
        return -(-x // engine.tile) * engine.tile

    return engine.latency_ns + math.ceil(padded(m) * padded(n) * padded(k)
                                         / rate.macs_per_ns)


def vector_ns(engine: VectorEngine, nbytes: int, passes: int, units: int = 1,
              dtype: str = "f16") -> int:
    """``latency + ceil(bytes * passes / (bytes_per_ns[dtype] * units))``.

    Splitting over ``units`` contexts divides the streaming part only: each context still
    pays the start-up latency, so two units cost more unit-time than one. ValueError if
    the engine does not take ``dtype`` (check :meth:`VectorEngine.rate`).
    """
    rate = engine.rate(dtype)
    if rate is None:
        raise ValueError(f"the vector engine does not take {dtype}")
    return engine.latency_ns + math.ceil(nbytes * passes / (rate * units))


def transfer_ns(latency_ns: int, nbytes: int, bytes_per_ns: int) -> int:
    """``latency + ceil(bytes / rate)``: a copy streams at the rate its budget draw allows."""
    return latency_ns + math.ceil(nbytes / bytes_per_ns)


def matrix_mode(model: CostModel, m: int, n: int, k: int, dtype: str = "f16") -> Mode:
    """One matrix-engine unit for :func:`matrix_ns`; no DDR draw (operands are on chip)."""
    return Mode(matrix_ns(model.matrix, m, n, k, dtype), {model.matrix.lane: 1})


def vector_modes(model: CostModel, nbytes: int, passes: int,
                 max_units: int | None = None, dtype: str = "f16") -> tuple[Mode, ...]:
    """One mode per unit count ``1..max_units`` (default: the engine's), each lasting
    :func:`vector_ns`. A short op is given ``max_units=1``: splitting it saves little."""
    engine = model.vector
    top = engine.max_units if max_units is None else min(max_units, engine.max_units)
    return tuple(Mode(vector_ns(engine, nbytes, passes, units, dtype), {engine.lane: units})
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
