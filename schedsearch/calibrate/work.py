"""Measurements in the cost model's terms: which engine, which rate, how much work.

Every engine of :mod:`models.cost` is a roofline, ``duration = latency + work / rate``,
linear in ``(latency, 1 / rate)``. The work of an op (padded MACs, bytes times vector
passes over units, bytes moved) is computed here by the cost model's own duration
functions run on an engine with latency 0 and rate 1, so the padding to whole tiles and
the division over vector units are never written a second time.

A row's *rate key* names which rate of its engine it measures: the element type where
the target lists per-type figures (``costs.<engine>.dtypes``), the rate mode's index for
transfers, else one rate for the whole engine.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from models.cost import (
    VECTOR_PASSES,
    CostModel,
    matrix_ns,
    transfer_ns,
    vector_ns,
)
from models.dtypes import DTYPE_BYTES
from models.errors import InputError
from models.evaluation import box_elements
from models.formats import Schedule
from schedsearch.calibrate.measurements import MATMUL, MeasuredRun, Measurement

__all__ = ["Engine", "FitRow", "measurement_row", "run_rows", "transfer_bytes",
           "matrix_work", "vector_work"]


class Engine(Enum):
    """A cost-parameter group: the engines of ``costs`` with a latency and rate(s)."""

    MATRIX = "matrix"
    VECTOR = "vector"
    LOAD = "load"
    STORE = "store"


@dataclass(frozen=True, slots=True)
class FitRow:
    """One observation in fit terms. ``factors`` (shape extents, units, layout, ...) are
    what the residuals are grouped by to find a pattern the roofline does not explain."""

    engine: Engine
    key: str
    kind: str
    work: float
    duration: float
    factors: dict[str, int | str]
    origin: str


def matrix_work(model: CostModel, m: int, n: int, k: int) -> float:
    """Multiply-accumulates the matrix engine performs, each extent padded to its tile."""
    unit = replace(model.matrix, latency_ns=0, macs_per_ns=1, dtypes=None)
    return float(matrix_ns(unit, m, n, k))


def vector_work(model: CostModel, nbytes: int, passes: int, units: int) -> float:
    """Bytes streamed per vector unit: ``bytes * passes / units`` as :func:`vector_ns` has it."""
    unit = replace(model.vector, latency_ns=0, bytes_per_ns=1, dtypes=None)
    return float(vector_ns(unit, nbytes, passes, units))


def transfer_bytes(nbytes: int) -> float:
    """Bytes a transfer streams at its rate (:func:`transfer_ns` at rate 1, latency 0)."""
    return float(transfer_ns(0, nbytes, 1))


def _key(per_dtype: bool, dtype: str) -> str:
    return dtype if per_dtype else ""


def measurement_row(m: Measurement, model: CostModel) -> FitRow:
    """A CSV measurement as a fit row; a mode or unit count the target lacks is refused."""
    def fail(column: str, message: str) -> InputError:
        source, _, line = m.origin.rpartition(":")
        return InputError(message, source=source, path=f"line {line}, column {column!r}",
                          rule="MEASUREMENT")

    factors: dict[str, int | str] = {"dtype": m.dtype}
    if m.layout:
        factors["layout"] = m.layout
    if m.kind == MATMUL:
        mm, n, k = m.dims
        factors.update(m=mm, n=n, k=k)
        return FitRow(Engine.MATRIX, _key(model.matrix.dtypes is not None, m.dtype), m.kind,
                      matrix_work(model, mm, n, k), m.duration, factors, m.origin)
    rows, cols = m.dims
    nbytes = rows * cols * DTYPE_BYTES[m.dtype]
    factors.update(rows=rows, cols=cols)
    if m.kind in VECTOR_PASSES:
        if m.units > model.vector.max_units:
            raise fail("units", f"{m.units} units; the target's vector engine splits an op "
                                f"over at most {model.vector.max_units}")
        factors.update(kind=m.kind, units=m.units)
        return FitRow(Engine.VECTOR, _key(model.vector.dtypes is not None, m.dtype), m.kind,
                      vector_work(model, nbytes, VECTOR_PASSES[m.kind], m.units),
                      m.duration, factors, m.origin)
    engine = Engine.LOAD if m.kind == "load" else Engine.STORE
    rates = getattr(model, engine.value).rates
    if m.mode >= len(rates):
        raise fail("mode", f"mode {m.mode}; the target's {engine.value} has "
                           f"{len(rates)} rate mode(s)")
    factors["mode"] = m.mode
    return FitRow(engine, str(m.mode), m.kind, transfer_bytes(nbytes), m.duration, factors,
                  m.origin)


def _op_row(schedule: Schedule, model: CostModel, name: str,
            duration: float) -> FitRow | None:
    """The fit row of one op of a measured schedule, or None for an op no group models
    (a vector kernel the cost model has no passes for, a copy the vector engine drove)."""
    problem = schedule.problem
    op = problem.ops[name]
    placement = schedule.ops[name]
    mode = op.modes[placement.mode]
    task = problem.tasks[op.task]
    params = task.params or {}
    origin = f"trace:{name}"
    if model.matrix.lane in mode.lanes and op.space is not None and len(op.space) == 3:
        (m0, m1), (n0, n1), (k0, k1) = op.space
        dtype = str(params.get("dtype", ""))
        factors: dict[str, int | str] = {"dtype": dtype, "m": m1 - m0, "n": n1 - n0,
                                         "k": k1 - k0}
        return FitRow(Engine.MATRIX, _key(model.matrix.dtypes is not None, dtype), MATMUL,
                      matrix_work(model, m1 - m0, n1 - n0, k1 - k0), duration, factors,
                      origin)
    tensors = [a for a in (*op.reads, *op.writes) if a.tensor is not None]
    if model.ddr_budget in mode.budgets and tensors:
        access = tensors[0]
        engine = Engine.LOAD if access in op.reads else Engine.STORE
        transfer = getattr(model, engine.value)
        if mode.lanes != {transfer.lane: 1} or placement.mode >= len(transfer.rates):
            return None
        tensor = problem.tensors[access.tensor]
        nbytes = box_elements(access.box or ()) * DTYPE_BYTES.get(tensor.dtype, 1)
        return FitRow(engine, str(placement.mode), engine.value, transfer_bytes(nbytes),
                      duration, {"dtype": tensor.dtype, "mode": placement.mode}, origin)
    kind = {"gemm": "convert"}.get(task.kind, str(params.get("fn", task.kind)))
    buffers = [a.buffer for a in op.reads if a.buffer is not None]
    units = mode.lanes.get(model.vector.lane, 0)
    if kind not in VECTOR_PASSES or not units or not buffers:
        return None
    dtype = "f32" if kind == "convert" else str(params.get("dtype", ""))
    nbytes = problem.buffers[buffers[0]].size
    return FitRow(Engine.VECTOR, _key(model.vector.dtypes is not None, dtype), kind,
                  vector_work(model, nbytes, VECTOR_PASSES[kind], units), duration,
                  {"dtype": dtype, "kind": kind, "units": units, "bytes": nbytes}, origin)


def run_rows(run: MeasuredRun, model: CostModel) -> dict[str, FitRow]:
    """Per op of a measured run, its fit row; ops no group models are left out."""
    rows = {}
    for name, (start, end) in run.windows.items():
        if end > start:
            row = _op_row(run.schedule, model, name, end - start)
            if row is not None:
                rows[name] = row
    return rows
