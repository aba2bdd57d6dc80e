"""The three file formats of ../shared/FORMATS.md as plain dataclasses, read and written.

Reading is strict: the JSON Schemas of :mod:`models.schema` state the shape (unknown
keys, wrong types, figures out of range), and the code here checks only what a schema
cannot (names that must exist, ``lo < hi``, boxes inside shapes, byte ranges inside
buffers, every buffer placed once); each fault is an :class:`InputError` naming the
file, the JSON path and the rule. Writing gives back exactly the document shape
FORMATS.md specifies, so ``write(read(x)) == x`` for any valid ``x`` without defaults
filled in.

Nothing here decides legality of a schedule: that is the checker's job. The readers check
what a producer or consumer of these files needs to be able to use them at all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from models import schema
from models.errors import InputError
from models.jsonio import json_path, load_json_file
from models.schema import PROBLEM_FORMAT, SCHEDULE_FORMAT, TARGET_FORMAT

__all__ = [
    "TARGET_FORMAT", "PROBLEM_FORMAT", "SCHEDULE_FORMAT", "Box", "Memory", "Target",
    "Tensor", "Task", "Buffer", "Mode", "Access", "Op", "Problem", "OpPlacement",
    "BufferPlacement", "Schedule", "target_from_dict", "target_to_dict",
    "problem_from_dict", "problem_to_dict", "schedule_from_dict", "schedule_to_dict",
    "read_problem", "read_schedule", "read_target_file",
]

#: A box: one half-open ``(lo, hi)`` interval per dimension.
Box = tuple[tuple[int, int], ...]
TENSOR_ROLES = ("input", "output", "temp")


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True, slots=True)
class Memory:
    capacity_bytes: int
    alignment_bytes: int = 1
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Target:
    """A hardware description: lane kinds with unit counts, fluid budgets, memories."""

    name: str
    lanes: dict[str, int]
    budgets: dict[str, int]
    memories: dict[str, Memory]
    time_unit: str = "ns"
    costs: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Tensor:
    shape: tuple[int, ...]
    dtype: str
    role: str
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Task:
    kind: str
    space: Box | None = None
    outputs: dict[str, Box] | None = None
    params: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Buffer:
    memory: str
    size: int
    align: int = 1
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Mode:
    """One way to run an op: its duration, whole lane units held, budget draws."""

    duration: int
    lanes: dict[str, int] = field(default_factory=dict)
    budgets: dict[str, int] = field(default_factory=dict)
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Access:
    """A read or write: a DDR ``tensor`` region (``box``) or a ``buffer`` byte range."""

    tensor: str | None = None
    box: Box | None = None
    buffer: str | None = None
    bytes: tuple[int, int] | None = None
    value: str | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Op:
    task: str
    modes: tuple[Mode, ...]
    reads: tuple[Access, ...] = ()
    writes: tuple[Access, ...] = ()
    space: Box | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    name: str
    tensors: dict[str, Tensor]
    tasks: dict[str, Task]
    buffers: dict[str, Buffer]
    ops: dict[str, Op]
    after: tuple[tuple[str, str], ...] = ()
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class OpPlacement:
    mode: int
    start: int
    end: int
    units: dict[str, tuple[int, ...]] = field(default_factory=dict)
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class BufferPlacement:
    offset: int
    alloc: int
    free: int
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Schedule:
    target: Target
    problem: Problem
    ops: dict[str, OpPlacement]
    buffers: dict[str, BufferPlacement]
    makespan: int
    meta: dict[str, Any] | None = None


# ----------------------------------------------------------------------------- reading
class _Refs:
    """The checks no schema can state, on a document its schema has already accepted:
    names that must exist, intervals with ``lo < hi``, boxes of their tensor's rank
    inside its shape, byte ranges inside their buffer. Failures are FORMAT errors."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> InputError:
        return InputError(message, source=self.source, path=path, rule="FORMAT")

    def known(self, name: str, table: Mapping[str, Any], path: str, what: str) -> str:
        if name not in table:
            raise self.fail(path, f"unknown {what} {name!r}")
        return name

    def interval(self, value: list[int], path: str) -> tuple[int, int]:
        lo, hi = value
        if hi <= lo:
            raise self.fail(path, f"interval [{lo}, {hi}) is empty (need lo < hi)")
        return lo, hi

    def box(self, value: list[list[int]], path: str) -> Box:
        return tuple(self.interval(dim, json_path(path, i)) for i, dim in enumerate(value))

    def tensor_box(self, tensor: Tensor, name: str, value: list[list[int]],
                   path: str) -> Box:
        box = self.box(value, path)
        if len(box) != len(tensor.shape):
            raise self.fail(path, f"box has rank {len(box)}, tensor {name!r} has rank "
                                  f"{len(tensor.shape)}")
        for i, ((lo, hi), extent) in enumerate(zip(box, tensor.shape, strict=True)):
            if lo < 0 or hi > extent:
                raise self.fail(json_path(path, i), f"[{lo}, {hi}) exceeds tensor {name!r} "
                                                    f"extent {extent}")
        return box


#: The most units of one lane kind this tool takes (a program has a queue per unit, a
#: trace a track per unit); far above any NPU's few engines per kind. The format itself
#: sets no limit, and ``schedcheck`` takes any count.
MAX_LANE_UNITS = 1 << 16


def _target(d: dict[str, Any], source: str, root: str = "$") -> Target:
    """Build a target from a document its schema accepted; only the tool's own limit on
    lane units is left to check (rule ``SIZE``)."""
    for kind, count in d["lanes"].items():
        if count > MAX_LANE_UNITS:
            raise InputError(f"{count:,} units of lane kind {kind!r}: this tool takes at most "
                             f"{MAX_LANE_UNITS:,} per kind (a program has a queue per unit)",
                             source=source, path=json_path(json_path(root, "lanes"), kind),
                             rule="SIZE")
    return Target(
        name=d["name"], time_unit=d.get("time_unit", "ns"), lanes=dict(d["lanes"]),
        budgets=dict(d.get("budgets", {})),
        memories={name: Memory(m["capacity_bytes"], m.get("alignment_bytes", 1), m.get("meta"))
                  for name, m in d.get("memories", {}).items()},
        costs=d.get("costs", {}), meta=d.get("meta"))


def _problem(d: dict[str, Any], r: _Refs, root: str, target: Target | None) -> Problem:
    """Build a problem from a document its schema accepted, checking cross-references."""
    tensors = {name: Tensor(tuple(t["shape"]), t["dtype"], t["role"], t.get("meta"))
               for name, t in d.get("tensors", {}).items()}

    def task(t: dict[str, Any], path: str) -> Task:
        outputs = None
        if "outputs" in t:
            outputs = {}
            for name, box in t["outputs"].items():
                out_path = json_path(json_path(path, "outputs"), name)
                r.known(name, tensors, out_path, "tensor")
                outputs[name] = r.tensor_box(tensors[name], name, box, out_path)
        space = r.box(t["space"], json_path(path, "space")) if "space" in t else None
        return Task(t["kind"], space, outputs, t.get("params"), t.get("meta"))

    tasks = {name: task(t, json_path(f"{root}.tasks", name))
             for name, t in d.get("tasks", {}).items()}
    memories = target.memories if target is not None else None
    buffers = {}
    for name, b in d.get("buffers", {}).items():
        if memories is not None:
            r.known(b["memory"], memories, json_path(json_path(f"{root}.buffers", name),
                                                     "memory"), "memory")
        buffers[name] = Buffer(b["memory"], b["size"], b.get("align", 1), b.get("meta"))

    def access(a: dict[str, Any], path: str) -> Access:
        if "tensor" in a:
            name = r.known(a["tensor"], tensors, json_path(path, "tensor"), "tensor")
            return Access(tensor=name, box=r.tensor_box(tensors[name], name, a["box"],
                                                        json_path(path, "box")),
                          meta=a.get("meta"))
        name = r.known(a["buffer"], buffers, json_path(path, "buffer"), "buffer")
        byte_range = None
        if "bytes" in a:
            byte_range = r.interval(a["bytes"], json_path(path, "bytes"))
            if byte_range[0] < 0 or byte_range[1] > buffers[name].size:
                lo, hi = byte_range
                raise r.fail(json_path(path, "bytes"), f"[{lo}, {hi}) does not lie inside "
                                                       f"buffer {name!r} of {buffers[name].size} "
                                                       "bytes")
        return Access(buffer=name, bytes=byte_range, value=a.get("value"), meta=a.get("meta"))

    def mode(m: dict[str, Any], path: str) -> Mode:
        if target is not None:
            for key, table, what in (("lanes", target.lanes, "lane kind"),
                                     ("budgets", target.budgets, "budget")):
                for name in m.get(key, {}):
                    r.known(name, table, json_path(json_path(path, key), name), what)
        return Mode(m["duration"], dict(m.get("lanes", {})), dict(m.get("budgets", {})),
                    m.get("meta"))

    def op(o: dict[str, Any], path: str) -> Op:
        r.known(o["task"], tasks, json_path(path, "task"), "task")
        modes_path = json_path(path, "modes")
        return Op(task=o["task"],
                  modes=tuple(mode(m, json_path(modes_path, i))
                              for i, m in enumerate(o["modes"])),
                  reads=tuple(access(a, json_path(json_path(path, "reads"), i))
                              for i, a in enumerate(o.get("reads", []))),
                  writes=tuple(access(a, json_path(json_path(path, "writes"), i))
                               for i, a in enumerate(o.get("writes", []))),
                  space=r.box(o["space"], json_path(path, "space")) if "space" in o else None,
                  meta=o.get("meta"))

    ops = {name: op(o, json_path(f"{root}.ops", name)) for name, o in d["ops"].items()}
    for i, edge in enumerate(d.get("after", [])):
        for j, name in enumerate(edge):
            r.known(name, ops, json_path(json_path(f"{root}.after", i), j), "op")
    return Problem(name=d["name"], tensors=tensors, tasks=tasks, buffers=buffers, ops=ops,
                   after=tuple((a, b) for a, b in d.get("after", [])), meta=d.get("meta"))


def target_from_dict(document: Any, source: str = "<target>") -> Target:
    """Read an ``npu-target/1`` document."""
    schema.check(document, TARGET_FORMAT, source)
    return _target(document, source)


def problem_from_dict(document: Any, source: str = "<problem>",
                      target: Target | None = None) -> Problem:
    """Read an ``npu-problem/1`` document; with ``target``, lane/budget/memory names are checked."""
    schema.check(document, PROBLEM_FORMAT, source)
    return _problem(document, _Refs(source), "$", target)


def schedule_from_dict(document: Any, source: str = "<schedule>") -> Schedule:
    """Read an ``npu-schedule/1`` document, with its embedded target and problem."""
    schema.check(document, SCHEDULE_FORMAT, source)
    r = _Refs(source)
    target = _target(document["target"], source, "$.target")
    problem = _problem(document["problem"], r, "$.problem", target)
    ops = {}
    for name, p in document["ops"].items():
        units_path = json_path(json_path("$.ops", name), "units")
        for lane in p.get("units", {}):
            r.known(lane, target.lanes, json_path(units_path, lane), "lane kind")
        ops[name] = OpPlacement(p["mode"], p["start"], p["end"],
                                {lane: tuple(u) for lane, u in p.get("units", {}).items()},
                                p.get("meta"))
    buffers = {}
    for name, b in document["buffers"].items():
        if name not in problem.buffers:
            raise r.fail(json_path("$.buffers", name), f"buffer {name!r} is placed but the "
                                                       "problem has no such buffer")
        buffers[name] = BufferPlacement(b["offset"], b["alloc"], b["free"], b.get("meta"))
    for name in problem.buffers:
        if name not in buffers:
            raise r.fail("$.buffers", f"buffer {name!r} of the problem is not placed")
    return Schedule(target=target, problem=problem, ops=ops, buffers=buffers,
                    makespan=document["makespan"], meta=document.get("meta"))


# ----------------------------------------------------------------------------- writing
def _box_out(box: Box) -> list[list[int]]:
    return [[lo, hi] for lo, hi in box]


def _with_meta(d: dict[str, Any], meta: dict[str, Any] | None) -> dict[str, Any]:
    if meta is not None:
        d["meta"] = meta
    return d


def target_to_dict(target: Target) -> dict[str, Any]:
    d: dict[str, Any] = {"format": TARGET_FORMAT, "name": target.name,
                         "time_unit": target.time_unit, "lanes": dict(target.lanes),
                         "budgets": dict(target.budgets),
                         "memories": {name: _with_meta({"capacity_bytes": m.capacity_bytes,
                                                        "alignment_bytes": m.alignment_bytes},
                                                       m.meta)
                                      for name, m in target.memories.items()},
                         "costs": target.costs}
    return _with_meta(d, target.meta)


def _access_out(access: Access) -> dict[str, Any]:
    if access.tensor is not None:
        return _with_meta({"tensor": access.tensor, "box": _box_out(access.box or ())},
                          access.meta)
    d: dict[str, Any] = {"buffer": access.buffer}
    if access.bytes is not None:
        d["bytes"] = list(access.bytes)
    if access.value is not None:
        d["value"] = access.value
    return _with_meta(d, access.meta)


def _op_out(op: Op) -> dict[str, Any]:
    d: dict[str, Any] = {"task": op.task}
    if op.space is not None:
        d["space"] = _box_out(op.space)
    modes = []
    for mode in op.modes:
        m: dict[str, Any] = {"duration": mode.duration}
        if mode.lanes:
            m["lanes"] = dict(mode.lanes)
        if mode.budgets:
            m["budgets"] = dict(mode.budgets)
        modes.append(_with_meta(m, mode.meta))
    d["modes"] = modes
    if op.reads:
        d["reads"] = [_access_out(a) for a in op.reads]
    if op.writes:
        d["writes"] = [_access_out(a) for a in op.writes]
    return _with_meta(d, op.meta)


def _task_out(task: Task) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": task.kind}
    if task.space is not None:
        d["space"] = _box_out(task.space)
    if task.outputs is not None:
        d["outputs"] = {name: _box_out(box) for name, box in task.outputs.items()}
    if task.params is not None:
        d["params"] = task.params
    return _with_meta(d, task.meta)


def problem_to_dict(problem: Problem) -> dict[str, Any]:
    d: dict[str, Any] = {
        "format": PROBLEM_FORMAT, "name": problem.name,
        "tensors": {name: _with_meta({"shape": list(t.shape), "dtype": t.dtype,
                                      "role": t.role}, t.meta)
                    for name, t in problem.tensors.items()},
        "tasks": {name: _task_out(t) for name, t in problem.tasks.items()},
        "buffers": {name: _with_meta({"memory": b.memory, "size": b.size, "align": b.align},
                                     b.meta)
                    for name, b in problem.buffers.items()},
        "ops": {name: _op_out(op) for name, op in problem.ops.items()},
        "after": [list(edge) for edge in problem.after]}
    return _with_meta(d, problem.meta)


def schedule_to_dict(schedule: Schedule) -> dict[str, Any]:
    d: dict[str, Any] = {
        "format": SCHEDULE_FORMAT, "target": target_to_dict(schedule.target),
        "problem": problem_to_dict(schedule.problem),
        "ops": {name: _with_meta({"mode": p.mode, "start": p.start, "end": p.end,
                                  "units": {lane: list(u) for lane, u in p.units.items()}},
                                 p.meta)
                for name, p in schedule.ops.items()},
        "buffers": {name: _with_meta({"offset": b.offset, "alloc": b.alloc, "free": b.free},
                                     b.meta)
                    for name, b in schedule.buffers.items()},
        "makespan": schedule.makespan}
    return _with_meta(d, schedule.meta)


# ----------------------------------------------------------------------------- files
def _source_name(path: str | os.PathLike[str]) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


def read_target_file(path: str | os.PathLike[str]) -> Target:
    return target_from_dict(load_json_file(path), _source_name(path))


def read_problem(path: str | os.PathLike[str], target: Target | None = None) -> Problem:
    return problem_from_dict(load_json_file(path), _source_name(path), target)


def read_schedule(path: str | os.PathLike[str]) -> Schedule:
    return schedule_from_dict(load_json_file(path), _source_name(path))
