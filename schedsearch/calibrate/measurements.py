"""Measurements in: a CSV of per-op timings, and a Chrome/Perfetto trace of a schedule's run.

The CSV holds one row per measured run of one op (repeats are separate rows). Columns,
with a header line; a row's figures are in the target's ``time_unit``:

- ``kind`` (required): ``matmul``; a vector kernel of the operator library (the keys of
  :data:`models.cost.VECTOR_PASSES`: ``rmsnorm``, ``convert``, ``silu``, ...); ``load`` or
  ``store`` (a copy-engine transfer between DDR and on-chip memory).
- ``dtype`` (required): an element type of :data:`models.dtypes.DTYPE_BYTES`.
- ``shape`` (required): ``MxNxK`` for ``matmul``; ``ROWSxCOLS`` of the block the op
  streams for the other kinds (its bytes are rows * cols * the dtype's size; ``convert``
  reads an accumulator block, rows * cols * the matrix engine's accumulator width, and
  its ``dtype`` is the type it writes).
- ``units`` (vector kinds, default 1): vector units the op ran on.
- ``mode`` (``load``/``store``, default 0): index of the transfer rate mode in the
  target's ``bytes_per_ns`` list.
- ``layout`` (optional): free text, kept for the residual patterns, except two words
  that say the op crossed layouts (:mod:`schedsearch.calibrate.crossing` fits them):
  ``strided`` on a ``load``/``store`` (a 2-D descriptor gathering into the other layout)
  and ``scatter`` on a vector kernel (it wrote its block in the other layout).
- ``duration`` (required): the measured duration, a finite number > 0.

Other columns are ignored (profilers export many). A trace is a Chrome trace event JSON
(``{"traceEvents": [...]}`` as ``schedsearch trace`` writes and Perfetto exports, or a bare
event array): complete (``X``) slices and ``B``/``E`` pairs named by the schedule's ops
give each op's measured window; slices of category ``task`` (the per-task summary
``schedsearch trace`` adds), counters, instants and metadata are passed over. When some
slice has category ``op`` (as ``schedsearch trace`` marks them; a runtime can too), only
those are read and a runtime's other slices may sit beside them; otherwise every slice
must name an op of the schedule. Every op of the schedule must appear.
"""

from __future__ import annotations

import csv
import math
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.cost import VECTOR_PASSES
from models.dtypes import DTYPE_BYTES
from models.errors import InputError
from models.formats import Schedule
from models.jsonio import json_path, load_json_file, utf8_text
from schedsearch.trace import microseconds_per_tick

__all__ = ["MATMUL", "TRANSFERS", "KINDS", "STRIDED", "SCATTER", "Measurement", "MeasuredRun",
           "read_csv", "read_trace", "is_trace_file"]

MATMUL = "matmul"
TRANSFERS = ("load", "store")
#: Every op kind a measurement row may name.
KINDS = (MATMUL, *VECTOR_PASSES, *TRANSFERS)
#: The ``layout`` of a transfer that gathered its block into the other layout.
STRIDED = "strided"
#: The ``layout`` of a vector kernel that wrote its block in the other layout.
SCATTER = "scatter"
_REQUIRED = ("kind", "dtype", "shape", "duration")
_SKIPPED_CATEGORIES = {"task", "counter", "violation"}


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measured run of one op. ``dims`` is the shape (3 extents for matmul, else 2);
    ``origin`` says where it came from (``file:line`` or ``trace:op``) for the report."""

    kind: str
    dtype: str
    dims: tuple[int, ...]
    units: int
    mode: int
    layout: str
    duration: float
    origin: str


@dataclass(frozen=True, slots=True)
class MeasuredRun:
    """A measured run of a schedule: each op's measured ``(start, end)`` in ticks."""

    schedule: Schedule
    windows: dict[str, tuple[float, float]]
    source: str

    @property
    def makespan(self) -> float:
        return max(end for _, end in self.windows.values()) - self.origin

    @property
    def origin(self) -> float:
        """The first measured start: a trace's clock starts anywhere, the schedule's at 0."""
        return min(start for start, _ in self.windows.values())


# ----------------------------------------------------------------------------- CSV
def _whole(text: str, fail: Any, column: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise fail(column, f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise fail(column, f"must be at least {minimum}, got {value}")
    return value


def _row(row: dict[str, str | None], line: int, source: str) -> Measurement:
    def fail(column: str, message: str) -> InputError:
        return InputError(message, source=source, path=f"line {line}, column {column!r}",
                          rule="MEASUREMENT")

    def cell(column: str) -> str:
        return (row.get(column) or "").strip()

    kind = cell("kind")
    if kind not in KINDS:
        raise fail("kind", f"unknown op kind {kind!r}; known: {', '.join(KINDS)}")
    dtype = cell("dtype")
    if dtype not in DTYPE_BYTES:
        raise fail("dtype", f"unknown element type {dtype!r}; known: {', '.join(DTYPE_BYTES)}")
    rank = 3 if kind == MATMUL else 2
    parts = cell("shape").lower().split("x")
    if len(parts) != rank:
        raise fail("shape", f"{kind} takes {'MxNxK' if rank == 3 else 'ROWSxCOLS'}, got "
                            f"{cell('shape')!r}")
    dims = tuple(_whole(part, fail, "shape", 1) for part in parts)
    try:
        duration = float(cell("duration"))
    except ValueError:
        raise fail("duration", f"expected a number, got {cell('duration')!r}") from None
    if not math.isfinite(duration) or duration <= 0:
        raise fail("duration", f"a duration is a finite number above 0, got {duration}")
    units = _whole(cell("units"), fail, "units", 1) if cell("units") else 1
    mode = _whole(cell("mode"), fail, "mode", 0) if cell("mode") else 0
    layout = cell("layout")
    if layout == STRIDED and kind not in TRANSFERS:
        raise fail("layout", f"{STRIDED!r} is a load or store through a 2-D descriptor; "
                             f"a {kind} row cannot be")
    if layout == SCATTER and kind not in VECTOR_PASSES:
        raise fail("layout", f"{SCATTER!r} is a vector kernel writing the other layout; "
                             f"a {kind} row cannot be")
    return Measurement(kind, dtype, dims, units, mode, layout, duration,
                       f"{source}:{line}")


def read_csv(path: str | os.PathLike[str]) -> list[Measurement]:
    """Every row of a measurements CSV; a bad row is an InputError naming its line.

    Lines starting with ``#`` are comments (a file says where its figures come from)."""
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", source=source, rule="FILE") \
            from None
    text = utf8_text(data, source, "FILE", path="line")
    numbered = [(number, line) for number, line in
                enumerate(text.splitlines(keepends=True), start=1) if not line.startswith("#")]
    try:
        reader = csv.DictReader(line for _, line in numbered)
        columns = [name.strip() for name in reader.fieldnames or ()]
        missing = [name for name in _REQUIRED if name not in columns]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)}; required: "
                             f"{', '.join(_REQUIRED)}", source=source,
                             path=f"line {numbered[0][0] if numbered else 1}",
                             rule="MEASUREMENT")
        reader.fieldnames = columns
        rows = [_row(row, numbered[reader.line_num - 1][0], source) for row in reader]
    except csv.Error as error:
        raise InputError(f"not a CSV file: {error}", source=source, rule="MEASUREMENT") \
            from None
    if not rows:
        raise InputError("no measurement rows", source=source, rule="MEASUREMENT")
    return rows


# ----------------------------------------------------------------------------- trace
def is_trace_file(path: str | os.PathLike[str]) -> bool:
    """A measurements file is a trace when it is JSON (by suffix), else a CSV."""
    return str(path).lower().endswith(".json")


def _events(document: Any, source: str) -> tuple[list[Any], str]:
    if isinstance(document, list):
        return document, "$"
    if isinstance(document, dict) and isinstance(document.get("traceEvents"), list):
        return document["traceEvents"], "$.traceEvents"
    raise InputError("a trace is an array of events or an object with 'traceEvents'",
                     source=source, rule="TRACE")


def _number(event: dict[str, Any], key: str, fail: Any, path: str) -> float:
    value = event.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise fail(json_path(path, key), "expected a finite number of microseconds")
    return float(value)


def read_trace(path: str | os.PathLike[str], schedule: Schedule) -> MeasuredRun:
    """Each op's measured window from a trace of a run of ``schedule``.

    An op drawn on several units (several slices) spans from its first slice's start to
    its last slice's end. Refused (InputError, rule ``TRACE``): a slice that names no op
    of the schedule, a negative or non-finite duration, an unmatched ``B``/``E``, a
    trace whose ``otherData.problem`` names another problem, an op that never appears.
    """
    source = str(path)
    document = load_json_file(path)

    def fail(where: str, message: str) -> InputError:
        return InputError(message, source=source, path=where, rule="TRACE")

    other = document.get("otherData") if isinstance(document, dict) else None
    if isinstance(other, dict) and other.get("problem") not in (None, schedule.problem.name):
        raise fail("$.otherData.problem", f"a trace of problem {other['problem']!r}, but the "
                                          f"schedule answers {schedule.problem.name!r}")
    events, root = _events(document, source)
    ticks_per_us = float(1 / (microseconds_per_tick(schedule.target.time_unit) or 1))
    tasks = set(schedule.problem.tasks)
    windows: dict[str, tuple[float, float]] = {}
    open_slices: dict[tuple[Any, Any], list[tuple[str | None, float, str]]] = defaultdict(list)

    def record(name: str, start: float, end: float, where: str) -> None:
        if name not in schedule.ops:
            raise fail(json_path(where, "name"), f"op {name!r} is not in the schedule "
                                                 f"(a trace of another schedule?)")
        if end < start:
            raise fail(where, f"op {name!r} has a negative duration")
        first, last = windows.get(name, (start, end))
        windows[name] = (min(first, start), max(last, end))

    marked = any(isinstance(e, dict) and e.get("cat") == "op" for e in events)
    for index, event in enumerate(events):
        where = json_path(root, index)
        if not isinstance(event, dict):
            raise fail(where, "an event is a JSON object")
        phase = event.get("ph")
        if phase not in ("X", "B", "E"):
            continue
        thread = open_slices[(event.get("pid"), event.get("tid"))]
        if phase == "E":
            if not thread:
                raise fail(where, "an 'E' event without its 'B'")
            begun, start, at = thread.pop()
            if begun is not None:
                record(begun, start, _number(event, "ts", fail, where) * ticks_per_us, at)
            continue
        name, category = event.get("name"), event.get("cat")
        if not isinstance(name, str):
            raise fail(json_path(where, "name"), "a slice needs a name")
        # Passed over: summaries and counters, a runtime's own slices beside ones marked
        # "op", and a task's summary slice (named by a task, not an op).
        ignored = (category in _SKIPPED_CATEGORIES or (marked and category != "op")
                   or (name in tasks and name not in schedule.ops))
        start = 0.0 if ignored else _number(event, "ts", fail, where) * ticks_per_us
        if phase == "B":
            thread.append((None if ignored else name, start, where))
        elif not ignored:
            dur = _number(event, "dur", fail, where) * ticks_per_us
            if dur < 0:
                raise fail(json_path(where, "dur"), f"negative duration {event['dur']}")
            record(name, start, start + dur, where)
    unmatched = [at for stack in open_slices.values() for _, _, at in stack]
    if unmatched:
        raise fail(unmatched[0], "a 'B' event without its 'E'")
    missing = [name for name in schedule.ops if name not in windows]
    if missing:
        raise fail(root, f"{len(missing)} op(s) of the schedule never appear in the trace, "
                         f"e.g. {missing[0]!r} (a trace of another schedule?)")
    return MeasuredRun(schedule, windows, source)
