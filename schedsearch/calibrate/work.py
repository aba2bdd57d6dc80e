"""Measurements in the cost model's terms: which engine, which rate, how much work.

Every engine of :mod:`models.cost` is a roofline, ``duration = latency + work / rate``,
linear in ``(latency, 1 / rate)``. The work of an op (padded MACs, bytes times vector
passes over units, bytes moved) is never restated here:

- a CSV row's work comes from the cost model's own duration functions run on an engine
  with latency 0 and rate 1 (the padding to whole tiles, the division over units);
- a traced op's work is read back from its planned duration in the schedule's own target
  (the operator library computed it once, with every pass and layout factor it knows).

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
    cost_model,
    matrix_ns,
    transfer_ns,
    vector_ns,
)
from models.dtypes import DTYPE_BYTES
from models.errors import InputError
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
    if m.kind == "convert":  # it reads the accumulator block, whatever type it writes
        rate = model.matrix.rate(m.dtype)
        nbytes = rows * cols * (rate or model.matrix).accumulator_bytes
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


def _inverted(duration: int, latency: float, rate: float) -> float:
    """The work behind a planned duration ``latency + ceil(work / rate)``: the midpoint of
    the rounding (a tick at most, half a tick on average)."""
    return (duration - latency - 0.5) * rate


def _op_row(schedule: Schedule, planned: CostModel, model: CostModel, name: str,
            duration: float) -> FitRow | None:
    """The fit row of one op of a measured schedule, or None for an op no engine fit
    models (a copy the vector engine drove, an op too short to carry its work).

    The work is read back from the op's planned duration in the schedule's own target
    (``planned``): the library computed it once, with every pass, padding and layout
    factor it knows; inverting the roofline recovers it without restating any of that.
    ``model`` (the target being calibrated) decides the rate keys.
    """
    problem = schedule.problem
    op = problem.ops[name]
    placement = schedule.ops[name]
    mode = op.modes[placement.mode]
    task = problem.tasks[op.task]
    params = task.params or {}
    dtype = str(params.get("dtype", ""))
    origin = f"trace:{name}"
    tensors = [a for a in (*op.reads, *op.writes) if a.tensor is not None]
    if planned.ddr_budget in mode.budgets and tensors:
        access = tensors[0]
        engine = Engine.LOAD if access in op.reads else Engine.STORE
        transfer = getattr(planned, engine.value)
        if mode.lanes != {transfer.lane: 1} or placement.mode >= len(transfer.rates):
            return None
        row = FitRow(engine, str(placement.mode), engine.value,
                     _inverted(mode.duration, transfer.latency_ns,
                               transfer.rates[placement.mode]),
                     duration, {"dtype": problem.tensors[access.tensor].dtype,
                                "mode": placement.mode}, origin)
    elif planned.matrix.lane in mode.lanes:
        rate = planned.matrix.rate(dtype)
        if rate is None:
            return None
        factors: dict[str, int | str] = {"dtype": dtype}
        if op.space is not None and len(op.space) >= 3:
            factors.update(zip("mnk", (hi - lo for lo, hi in op.space[-3:]), strict=True))
        row = FitRow(Engine.MATRIX, _key(model.matrix.dtypes is not None, dtype), MATMUL,
                     _inverted(mode.duration, planned.matrix.latency_ns, rate.macs_per_ns),
                     duration, factors, origin)
    elif planned.vector.lane in mode.lanes and not mode.budgets:
        rate = planned.vector.rate(dtype)
        if rate is None:
            return None
        kind = {"gemm": "convert"}.get(task.kind, str(params.get("fn", task.kind)))
        units = mode.lanes[planned.vector.lane]
        row = FitRow(Engine.VECTOR, _key(model.vector.dtypes is not None, dtype), kind,
                     _inverted(mode.duration, planned.vector.latency_ns, rate), duration,
                     {"dtype": dtype, "kind": kind, "units": units}, origin)
    else:
        return None
    return row if row.work > 0 else None


def run_rows(run: MeasuredRun, model: CostModel) -> dict[str, FitRow]:
    """Per op of a measured run, its fit row; ops no engine fit models are left out."""
    planned = cost_model(run.schedule.target)
    rows = {}
    for name, (start, end) in run.windows.items():
        if end > start:
            row = _op_row(run.schedule, planned, model, name, end - start)
            if row is not None:
                rows[name] = row
    return rows
