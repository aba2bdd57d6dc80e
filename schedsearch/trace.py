"""A schedule as a Chrome trace (the JSON trace event format), for Perfetto and chrome://tracing.

A schedule file says *that* it is legal or not; a trace lets a person *see* why: which unit
sat idle, which buffer kept VTCM full, where the DDR budget was drawn to its cap. The
trace holds three processes:

- ``lanes``: one thread per lane unit ("HMX 0", "HVX 0".."HVX 3", "DMA 0"..), in the
  target's order. An op is a complete (``X``) slice on every unit it holds (an op that
  holds two HVX units shows on both), named by the op, with its task, mode, exact tick
  times, budget draws and accesses in ``args``. Ops that hold no unit share a thread
  "no lane"; units outside the target's range get their own thread, so an illegal
  schedule still shows what it says.
- ``tasks``: one thread per task with one slice from its first op's start to its last
  op's end.
- ``memory and budgets``: a counter per memory (live bytes) and per budget (draw).

Violations from the checker's JSON report become instant (``i``) events on the threads of
the ops involved, on the ``memory and budgets`` process for buffers, and globally when
nothing in the schedule can carry them (a missing op, a tensor rule).

Trace timestamps are microseconds; schedule times are integer ticks of the target's
``time_unit``. ``ts``/``dur`` are converted (they may be inexact floats); ``args`` keep
the exact ticks. A unit the converter does not know is shown as one microsecond per tick
and ``otherData`` says so.

The sweeps used here (:func:`step_series`, :func:`live_bytes`, :func:`budget_draw`) and
the lane layout (:func:`lane_tracks`, :func:`op_tracks`) are shared with
:mod:`schedsearch.plot`, so the picture and the trace cannot disagree.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

from checker.report import Violation
from models.errors import InputError
from models.files import write_json_atomic
from models.formats import Access, Mode, Schedule
from models.jsonio import MAX_INT, json_path, load_json_file

__all__ = [
    "Violation", "violations_from_dict", "read_violations", "step_series", "live_bytes",
    "budget_draw", "lane_tracks", "op_tracks", "op_mode", "op_task", "task_spans",
    "microseconds_per_tick", "schedule_to_trace", "write_trace",
]

#: Thread of the ops that hold no lane unit (a mode asking for no lanes, or a bad file).
NO_LANE = "no lane"

_LANES_PID, _TASKS_PID, _RESOURCES_PID = 1, 2, 3
_US_PER_UNIT: dict[str, Fraction] = {
    "ps": Fraction(1, 10**6), "ns": Fraction(1, 1000), "us": Fraction(1), "µs": Fraction(1),
    "ms": Fraction(1000), "s": Fraction(10**6)}


# ----------------------------------------------------------------------------- violations
def violations_from_dict(document: Any, source: str = "<report>") -> list[Violation]:
    """Read the violations of a checker report ``{"legal", "violations": [...], "stats"}``.

    Only ``violations`` is read, and only the keys a trace shows; other keys are the
    checker's business and are passed over, so a richer report still loads.
    """
    def fail(path: str, message: str) -> InputError:
        return InputError(message, source=source, path=path, rule="REPORT")

    if not isinstance(document, dict):
        raise fail("$", "a checker report is a JSON object")
    if "violations" not in document:
        raise fail("$", "missing required key 'violations'")
    entries = document["violations"]
    if not isinstance(entries, list):
        raise fail("$.violations", "expected an array")
    result = []
    for i, entry in enumerate(entries):
        path = json_path("$.violations", i)
        if not isinstance(entry, dict):
            raise fail(path, "a violation is a JSON object")
        texts = {}
        for key in ("code", "message"):
            if not isinstance(entry.get(key), str):
                raise fail(json_path(path, key), f"expected a string {key!r}")
            texts[key] = entry[key]
        names = {}
        for key in ("ops", "buffers", "tensors"):
            value = entry.get(key, [])
            if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
                raise fail(json_path(path, key), "expected an array of names")
            names[key] = tuple(value)
        time = entry.get("time")
        if time is not None and (isinstance(time, bool) or not isinstance(time, int)
                                 or abs(time) > MAX_INT):
            raise fail(json_path(path, "time"), "expected an integer time in ticks or null")
        result.append(Violation(texts["code"], texts["message"], names["ops"],
                                names["buffers"], names["tensors"], time))
    return result


def read_violations(path: str | os.PathLike[str]) -> list[Violation]:
    """Read a checker report file (``schedcheck verify --json``); bad input is an InputError."""
    return violations_from_dict(load_json_file(path), str(path))


# ----------------------------------------------------------------------------- sweeps
def step_series(windows: Iterable[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The level of a quantity held over half-open windows ``(start, end, amount)``.

    Returns ``(time, level)`` at time 0 and at every window boundary, the level being what
    holds from that time until the next sample. Windows are half-open, so whatever ends at
    ``t`` is released before whatever starts at ``t`` is taken: the deltas at one time are
    summed before the level is read. Empty windows (``end <= start``) hold nothing.
    """
    deltas: dict[int, int] = defaultdict(int)
    for start, end, amount in windows:
        if end > start and amount:
            deltas[start] += amount
            deltas[end] -= amount
    times = sorted(deltas)
    series = [] if times and times[0] <= 0 else [(0, 0)]
    level = 0
    for time in times:
        level += deltas[time]
        series.append((time, level))
    return series


def live_bytes(schedule: Schedule) -> dict[str, list[tuple[int, int]]]:
    """Per memory of the target, the sum of the sizes of the buffers live at each time.

    A placement whose buffer the problem does not declare has no known size and is left
    out (the checker reports it as ``FORMAT``).
    """
    windows: dict[str, list[tuple[int, int, int]]] = {m: [] for m in schedule.target.memories}
    for name, placement in schedule.buffers.items():
        buffer = schedule.problem.buffers.get(name)
        if buffer is not None and buffer.memory in windows:
            windows[buffer.memory].append((placement.alloc, placement.free, buffer.size))
    return {memory: step_series(spans) for memory, spans in windows.items()}


def budget_draw(schedule: Schedule) -> dict[str, list[tuple[int, int]]]:
    """Per budget of the target, the sum of the running ops' draws at each time."""
    windows: dict[str, list[tuple[int, int, int]]] = {b: [] for b in schedule.target.budgets}
    for name, placement in schedule.ops.items():
        mode = op_mode(schedule, name)
        if mode is None:
            continue
        for budget, amount in mode.budgets.items():
            if budget in windows:
                windows[budget].append((placement.start, placement.end, amount))
    return {budget: step_series(spans) for budget, spans in windows.items()}


# ----------------------------------------------------------------------------- lanes
def op_mode(schedule: Schedule, name: str) -> Mode | None:
    """The mode an op runs in, or None when the op or its mode index is unknown."""
    op = schedule.problem.ops.get(name)
    index = schedule.ops[name].mode
    if op is None or not 0 <= index < len(op.modes):
        return None
    return op.modes[index]


def op_task(schedule: Schedule, name: str) -> str | None:
    """The task an op belongs to, or None for an op the problem does not declare."""
    op = schedule.problem.ops.get(name)
    return op.task if op is not None else None


def op_tracks(schedule: Schedule, name: str) -> list[str]:
    """The lane threads an op is drawn on: one per unit it holds, or ``NO_LANE``."""
    units = schedule.ops[name].units
    tracks = [f"{kind} {unit}" for kind, indices in units.items() for unit in indices]
    return list(dict.fromkeys(tracks)) or [NO_LANE]


def lane_tracks(schedule: Schedule) -> list[str]:
    """Every lane thread, in the target's lane order, then unit index.

    All units of the target appear (an idle unit is worth seeing), plus any unit an op
    names beyond the target's count, plus ``NO_LANE`` if some op holds no unit.
    """
    units: dict[str, set[int]] = {kind: set(range(count))
                                  for kind, count in schedule.target.lanes.items()}
    no_lane = False
    for placement in schedule.ops.values():
        no_lane = no_lane or not any(placement.units.values())
        for kind, indices in placement.units.items():
            units.setdefault(kind, set()).update(indices)
    tracks = [f"{kind} {unit}" for kind, indices in units.items() for unit in sorted(indices)]
    return tracks + [NO_LANE] if no_lane else tracks


def task_spans(schedule: Schedule) -> dict[str, tuple[int, int]]:
    """Per task with at least one scheduled op: (first op start, last op end)."""
    spans: dict[str, tuple[int, int]] = {}
    for name, placement in schedule.ops.items():
        task = op_task(schedule, name)
        if task is None:
            continue
        first, last = spans.get(task, (placement.start, placement.end))
        spans[task] = (min(first, placement.start), max(last, placement.end))
    return {task: spans[task] for task in schedule.problem.tasks if task in spans}


# ----------------------------------------------------------------------------- trace
def microseconds_per_tick(time_unit: str) -> Fraction | None:
    """How many microseconds one tick of ``time_unit`` lasts; None for an unknown unit."""
    return _US_PER_UNIT.get(time_unit)


def _access_text(access: Access) -> str:
    if access.tensor is not None:
        box = ",".join(f"{lo}:{hi}" for lo, hi in access.box or ())
        return f"{access.tensor}[{box}]"
    text = str(access.buffer)
    if access.bytes is not None:
        text += f"[{access.bytes[0]}:{access.bytes[1]}]"
    if access.value is not None:
        text += f" = {access.value}"
    return text


def schedule_to_trace(schedule: Schedule,
                      violations: Iterable[Violation] | None = None) -> dict[str, Any]:
    """The schedule (and optionally a checker's violations) as a Chrome trace document.

    The result is plain JSON data: ``{"traceEvents": [...], "displayTimeUnit",
    "otherData"}``. See the module docstring for the processes, threads and counters.
    """
    unit = schedule.target.time_unit
    scale = microseconds_per_tick(unit)
    known_unit = scale is not None
    scale = scale if scale is not None else Fraction(1)

    def us(ticks: int) -> int | float:
        value = ticks * scale
        return int(value) if value.denominator == 1 else float(value)

    events: list[dict[str, Any]] = []

    def metadata(name: str, pid: int, tid: int, args: dict[str, Any]) -> None:
        events.append({"name": name, "ph": "M", "ts": 0, "pid": pid, "tid": tid,
                       "args": args})

    def process(pid: int, name: str) -> None:
        metadata("process_name", pid, 0, {"name": name})
        metadata("process_sort_index", pid, 0, {"sort_index": pid})

    def threads(pid: int, names: list[str]) -> dict[str, int]:
        tids = {}
        for index, name in enumerate(names, start=1):
            tids[name] = index
            metadata("thread_name", pid, index, {"name": name})
            metadata("thread_sort_index", pid, index, {"sort_index": index})
        return tids

    process(_LANES_PID, "lanes")
    lane_tid = threads(_LANES_PID, lane_tracks(schedule))
    spans = task_spans(schedule)
    process(_TASKS_PID, "tasks")
    task_tid = threads(_TASKS_PID, list(spans))
    process(_RESOURCES_PID, "memory and budgets")

    for name in sorted(schedule.ops, key=lambda n: (schedule.ops[n].start, n)):
        placement = schedule.ops[name]
        op = schedule.problem.ops.get(name)
        mode = op_mode(schedule, name)
        tracks = op_tracks(schedule, name)
        args: dict[str, Any] = {
            "task": op.task if op else None, "mode": placement.mode,
            "start": placement.start, "end": placement.end, "time_unit": unit,
            "units": [track for track in tracks if track != NO_LANE],
            "duration": mode.duration if mode else None,
            "budgets": dict(mode.budgets) if mode else {},
            "reads": [_access_text(a) for a in op.reads] if op else [],
            "writes": [_access_text(a) for a in op.writes] if op else []}
        for track in tracks:
            events.append({"name": name, "cat": "op", "ph": "X", "ts": us(placement.start),
                           "dur": us(max(0, placement.end - placement.start)),
                           "pid": _LANES_PID, "tid": lane_tid[track], "args": args})

    for task, (start, end) in spans.items():
        events.append({"name": task, "cat": "task", "ph": "X", "ts": us(start),
                       "dur": us(max(0, end - start)), "pid": _TASKS_PID,
                       "tid": task_tid[task],
                       "args": {"kind": schedule.problem.tasks[task].kind, "start": start,
                                "end": end, "time_unit": unit}})

    for series_of, key in ((live_bytes(schedule), "live bytes"),
                           (budget_draw(schedule), "draw")):
        for resource, series in series_of.items():
            for time, level in series:
                events.append({"name": resource, "cat": "counter", "ph": "C", "ts": us(time),
                               "pid": _RESOURCES_PID, "tid": 0, "args": {key: level}})

    for violation in violations or ():
        events.extend(_violation_events(schedule, violation, lane_tid, us))

    other: dict[str, Any] = {"problem": schedule.problem.name,
                             "target": schedule.target.name, "time_unit": unit,
                             "makespan": schedule.makespan}
    if not known_unit:
        other["note"] = f"unknown time unit {unit!r}: one tick is shown as one microsecond"
    return {"traceEvents": events, "displayTimeUnit": "ns" if unit in ("ps", "ns") else "ms",
            "otherData": other}


def _violation_events(schedule: Schedule, violation: Violation, lane_tid: dict[str, int],
                      us: Callable[[int], int | float]) -> list[dict[str, Any]]:
    """Instant events for one violation, on every thread or process it involves.

    Without a time in the report, the instant sits at the earliest start of the ops or
    allocation of the buffers involved (else 0), where a reader would look first.
    """
    ops = [name for name in violation.ops if name in schedule.ops]
    buffers = [name for name in violation.buffers
               if name in schedule.buffers and name in schedule.problem.buffers]
    time = violation.time
    if time is None:
        candidates = ([schedule.ops[n].start for n in ops]
                      + [schedule.buffers[n].alloc for n in buffers])
        time = min(candidates, default=0)
    args = {"code": violation.code, "message": violation.message, "ops": list(violation.ops),
            "buffers": list(violation.buffers), "tensors": list(violation.tensors),
            "time": violation.time}
    base = {"name": violation.code, "cat": "violation", "ph": "i", "ts": us(time),
            "args": args}
    tids = dict.fromkeys(lane_tid[track] for name in ops
                         for track in op_tracks(schedule, name))
    events = [{**base, "s": "t", "pid": _LANES_PID, "tid": tid} for tid in tids]
    if buffers:
        events.append({**base, "s": "p", "pid": _RESOURCES_PID, "tid": 0})
    if not events:
        events.append({**base, "s": "g", "pid": _RESOURCES_PID, "tid": 0})
    return events


def write_trace(trace: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write a trace document whole or not at all; an unwritable path is an InputError."""
    try:
        write_json_atomic(path, trace)
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", source=str(path),
                         rule="FILE") from None
