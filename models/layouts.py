"""Tensor layouts in DDR and what moving a tensor between layouts costs.

A DDR tensor lies either row-major (``row``: each row contiguous, what a vector engine
streams) or in the matrix engine's native tiled layout (``tiled``: contiguous
``tile x tile`` blocks, 32x32 f16 on HMX, the 16x16 fractal on the Ascend Cube). Every
engine has a native layout: ``tiled`` for the matrix engine, ``row`` for the vector
engine. Moving data between a tensor and an engine whose native layout differs costs
extra, with figures from the target's ``costs.layouts``::

    "layouts": {"strided_efficiency": 0.5, "scatter_passes": 1, "relayout_passes": 2,
                "fused_compute_factor": 1.15}

- a load that gathers a block into the other layout uses a 2-D descriptor whose rows
  are one tile row (64 bytes for f16 on HMX): it keeps ``strided_efficiency`` of its
  rate, ``duration = latency + ceil(bytes / (rate * strided_efficiency))``, drawing its
  full rate from the DDR budget all along (short bursts waste the bus);
- a vector op that writes its block in the other layout (rows scattered into tiles, or
  tiles gathered into rows) pays ``scatter_passes`` more passes per element;
- a conversion pass on the vector engine (:mod:`models.ops.relayout`, ``engine =
  "vector"``) costs ``relayout_passes`` passes per element;
- a producer and a consumer fused into one kernel that forwards the intermediate on
  chip (path C of :mod:`schedsearch.chains.paths`) compute slower than the same two
  kernels apart: registers, on-chip memory and the consumer's tiles waiting on the
  producer's rows are shared between them. :func:`fused_pressure` multiplies by
  ``fused_compute_factor`` (>= 1) the duration of every mode of their matrix- and
  vector-engine ops; their DMA transfers keep their rate (the pressure is on the
  compute engines, not on the bus).

Operators are tiled without layouts: every figure before this module assumed each
tensor lies the way its producer and its consumer want, i.e. a free conversion.
:func:`apply_layout` makes the layout of one tensor explicit on a tiled problem: it
re-costs the ops that move that tensor and records ``meta.layout`` on it, so a chain of
tasks states what each layout costs instead of hiding it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction

from models.cost import CostModel, cost_model
from models.dtypes import DTYPE_BYTES
from models.errors import InputError
from models.formats import Mode, Op, Problem, Target
from models.jsonio import json_path

__all__ = ["RELAYOUT_KIND", "Layout", "LayoutCosts", "layout_costs", "with_layout_figures",
           "with_fused_factor", "strided_ns", "strided_modes", "apply_layout", "layout_of",
           "fused_pressure"]


#: The task kind of a layout conversion (:mod:`models.ops.relayout`).
RELAYOUT_KIND = "relayout"


class Layout(Enum):
    ROW = "row"
    TILED = "tiled"


@dataclass(frozen=True, slots=True)
class LayoutCosts:
    """The figures of ``costs.layouts`` (module docstring)."""

    strided_efficiency: float
    scatter_passes: int
    relayout_passes: int
    fused_compute_factor: float


def layout_costs(target: Target) -> LayoutCosts:
    """Read ``costs.layouts``; InputError (rule ``COSTS``) if missing or unusable."""
    section = target.costs.get("layouts")
    path = "$.costs.layouts"

    def fail(where: str, message: str) -> InputError:
        return InputError(message, source=target.name, path=where, rule="COSTS")

    if not isinstance(section, dict):
        raise fail(path, "missing or not an object: the target says nothing about layouts")
    efficiency = section.get("strided_efficiency")
    if (isinstance(efficiency, bool) or not isinstance(efficiency, int | float)
            or not 0 < efficiency <= 1):
        raise fail(json_path(path, "strided_efficiency"), "expected a number in (0, 1]")
    passes = {}
    for key in ("scatter_passes", "relayout_passes"):
        value = section.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise fail(json_path(path, key), "expected an integer >= 0")
        passes[key] = value
    factor = section.get("fused_compute_factor")
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not factor >= 1:
        raise fail(json_path(path, "fused_compute_factor"), "expected a number >= 1")
    return LayoutCosts(float(efficiency), **passes, fused_compute_factor=float(factor))


def with_layout_figures(target: Target, **figures: float) -> Target:
    """``target`` with the named ``costs.layouts`` figures replaced: every one of them is
    an assumption, so a reader can ask what other values would decide."""
    layouts = {**target.costs.get("layouts", {}), **figures}
    return replace(target, costs={**target.costs, "layouts": layouts})


def with_fused_factor(target: Target, factor: float) -> Target:
    """``target`` with ``costs.layouts.fused_compute_factor`` set to ``factor``."""
    return with_layout_figures(target, fused_compute_factor=factor)


def strided_ns(latency_ns: int, nbytes: int, bytes_per_ns: int, efficiency: float) -> int:
    """``latency + ceil(bytes / (rate * efficiency))``: a 2-D descriptor transfer."""
    return latency_ns + math.ceil(nbytes / (bytes_per_ns * efficiency))


def strided_modes(model: CostModel, costs: LayoutCosts, nbytes: int) -> tuple[Mode, ...]:
    """One mode per load rate, as :func:`models.cost.transfer_modes`, at the strided rate."""
    engine = model.load
    return tuple(Mode(strided_ns(engine.latency_ns, nbytes, rate, costs.strided_efficiency),
                      {engine.lane: 1}, {model.ddr_budget: rate})
                 for rate in engine.rates)


def layout_of(problem: Problem, tensor: str) -> Layout | None:
    """The layout recorded on ``tensor`` by :func:`apply_layout`, or None (not stated)."""
    meta = problem.tensors[tensor].meta or {}
    return Layout(meta["layout"]) if "layout" in meta else None


def _lanes(op: Op) -> set[str]:
    return {kind for mode in op.modes for kind, n in mode.lanes.items() if n > 0}


def apply_layout(problem: Problem, target: Target, tensor: str, layout: Layout) -> Problem:
    """``problem`` with DDR tensor ``tensor`` stored in ``layout`` (module docstring).

    - an op that loads part of ``tensor`` into a buffer read by the matrix engine (native
      ``tiled``) or the vector engine (native ``row``) takes the strided rate when
      ``layout`` is not that native layout (a mode's latency is what remains of its
      duration after ``ceil(bytes / draw)``);
    - an op that stores a buffer to ``tensor`` follows the buffer back to the op that
      wrote it: a vector op pays ``scatter_passes`` more passes per element when
      ``layout`` is not the layout it produced (``tiled`` if it read a buffer the matrix
      engine wrote, ``row`` otherwise); a buffer no vector op wrote (a plain copy) is
      stored at the strided rate instead.

    Ops of a conversion task (kind ``relayout``) are left alone: their own kind costs
    moving between the two layouts it names.
    """
    model, costs = cost_model(target), layout_costs(target)
    matrix, vector, budget = model.matrix.lane, model.vector.lane, model.ddr_budget
    dtype = problem.tensors[tensor].dtype
    elem = DTYPE_BYTES[dtype]
    vector_rate = model.vector.rate(dtype) or model.vector.bytes_per_ns
    writer: dict[tuple[str, str | None], str] = {}
    readers: dict[str, set[str]] = {}
    for name, op in problem.ops.items():
        for access in op.writes:
            if access.buffer is not None:
                writer[(access.buffer, access.value)] = name
        for access in op.reads:
            if access.buffer is not None:
                readers.setdefault(access.buffer, set()).update(_lanes(op))

    def strided(op: Op, nbytes: int) -> Op:
        modes = []
        for mode in op.modes:
            rate = mode.budgets.get(budget, 0)
            if rate <= 0:
                modes.append(mode)
                continue
            latency = mode.duration - math.ceil(nbytes / rate)
            modes.append(replace(mode, duration=strided_ns(latency, nbytes, rate,
                                                           costs.strided_efficiency)))
        return replace(op, modes=tuple(modes))

    def scattered(op: Op, nbytes: int) -> Op:
        extra = nbytes * costs.scatter_passes
        return replace(op, modes=tuple(
            replace(m, duration=m.duration + math.ceil(
                extra / (vector_rate * m.lanes[vector])))
            for m in op.modes))

    ops = dict(problem.ops)
    for name, op in problem.ops.items():
        if problem.tasks[op.task].kind == RELAYOUT_KIND:
            continue
        for access in op.reads:
            if access.tensor != tensor or access.box is None:
                continue
            nbytes = math.prod(hi - lo for lo, hi in access.box) * elem
            lanes = set().union(*(readers.get(w.buffer, set()) for w in op.writes
                                  if w.buffer is not None))
            native = (Layout.TILED if matrix in lanes else
                      Layout.ROW if vector in lanes else layout)
            if native is not layout:
                ops[name] = strided(ops[name], nbytes)
        for access in op.writes:
            if access.tensor != tensor or access.box is None:
                continue
            nbytes = math.prod(hi - lo for lo, hi in access.box) * elem
            sources = [writer.get((r.buffer, r.value)) for r in op.reads
                       if r.buffer is not None]
            producer = next((s for s in sources if s is not None), None)
            if producer is None or vector not in _lanes(problem.ops[producer]):
                if layout is not Layout.ROW:
                    ops[name] = strided(ops[name], nbytes)
                continue
            produced_from_tiles = any(
                r.buffer is not None and matrix in _lanes(problem.ops[w])
                for r in problem.ops[producer].reads
                if (w := writer.get((r.buffer, r.value))) is not None)
            made = Layout.TILED if produced_from_tiles else Layout.ROW
            if made is not layout:
                ops[producer] = scattered(ops[producer], nbytes)
    tensors = dict(problem.tensors)
    meta = {**(tensors[tensor].meta or {}), "layout": layout.value}
    tensors[tensor] = replace(tensors[tensor], meta=meta)
    return replace(problem, tensors=tensors, ops=ops)


def fused_pressure(problem: Problem, target: Target, tasks: frozenset[str]) -> Problem:
    """``problem`` with the ops of ``tasks`` computing as one fused kernel (module
    docstring): every mode of an op holding the matrix or the vector lane lasts
    ``ceil(duration * fused_compute_factor)``, computed exactly from the figure's decimal
    text; other ops are unchanged."""
    model = cost_model(target)
    factor = Fraction(str(layout_costs(target).fused_compute_factor))  # 1.1 stays 11/10
    engines = {model.matrix.lane, model.vector.lane}
    ops = dict(problem.ops)
    for name, op in problem.ops.items():
        if op.task in tasks and _lanes(op) & engines:
            ops[name] = replace(op, modes=tuple(
                replace(m, duration=math.ceil(m.duration * factor)) for m in op.modes))
    return replace(problem, ops=ops)
