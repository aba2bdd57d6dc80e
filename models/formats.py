"""The three file formats of ../shared/FORMATS.md as plain dataclasses, read and written.

Reading is strict (unknown keys, wrong types, dangling names and out-of-range figures are
each an :class:`InputError` naming the file, the JSON path and the rule); writing gives
back exactly the document shape FORMATS.md specifies, so ``write(read(x)) == x`` for any
valid ``x`` without defaults filled in.

Nothing here decides legality of a schedule: that is the checker's job. The readers check
what a producer or consumer of these files needs to be able to use them at all.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.errors import InputError
from models.jsonio import MAX_INT, json_path, load_json_file

__all__ = [
    "TARGET_FORMAT", "PROBLEM_FORMAT", "SCHEDULE_FORMAT", "Box", "Memory", "Target",
    "Tensor", "Task", "Buffer", "Mode", "Access", "Op", "Problem", "OpPlacement",
    "BufferPlacement", "Schedule", "target_from_dict", "target_to_dict",
    "problem_from_dict", "problem_to_dict", "schedule_from_dict", "schedule_to_dict",
    "read_problem", "read_schedule", "read_target_file", "write_json_atomic",
]

TARGET_FORMAT = "npu-target/1"
PROBLEM_FORMAT = "npu-problem/1"
SCHEDULE_FORMAT = "npu-schedule/1"

#: A box: one half-open ``(lo, hi)`` interval per dimension.
Box = tuple[tuple[int, int], ...]
TENSOR_ROLES = ("input", "output", "temp")


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True, slots=True)
class Memory:
    capacity_bytes: int
    alignment_bytes: int = 1


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


@dataclass(frozen=True, slots=True)
class Access:
    """A read or write: a DDR ``tensor`` region (``box``) or a ``buffer`` byte range."""

    tensor: str | None = None
    box: Box | None = None
    buffer: str | None = None
    bytes: tuple[int, int] | None = None
    value: str | None = None


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


@dataclass(frozen=True, slots=True)
class BufferPlacement:
    offset: int
    alloc: int
    free: int


@dataclass(frozen=True, slots=True)
class Schedule:
    target: Target
    problem: Problem
    ops: dict[str, OpPlacement]
    buffers: dict[str, BufferPlacement]
    makespan: int
    meta: dict[str, Any] | None = None


# ----------------------------------------------------------------------------- reading
class _Reader:
    """Typed access to a JSON document that reports failures with their JSON path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str, rule: str = "FORMAT") -> InputError:
        return InputError(message, source=self.source, path=path, rule=rule)

    def obj(self, value: Any, path: str, required: tuple[str, ...],
            optional: tuple[str, ...] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {_kind(value)}")
        for key in required:
            if key not in value:
                raise self.fail(path, f"missing required key {key!r}")
        allowed = set(required) | set(optional)
        for key in value:
            if key not in allowed:
                raise self.fail(json_path(path, key), f"unknown key {key!r}")
        return value

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {_kind(value)}")
        for key in value:
            if not key:
                raise self.fail(path, "names must be non-empty strings")
        return value

    def array(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected an array, got {_kind(value)}")
        return value

    def integer(self, value: Any, path: str, *, minimum: int | None = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"expected an integer, got {_kind(value)}")
        if abs(value) > MAX_INT:
            raise self.fail(path, "integer does not fit in 64 bits")
        if minimum is not None and value < minimum:
            raise self.fail(path, f"must be >= {minimum}, got {value}")
        return value

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, f"expected a non-empty string, got {_kind(value)}")
        return value

    def free_object(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {_kind(value)}")
        return value

    def format_tag(self, document: Any, expected: str) -> None:
        if not isinstance(document, dict):
            raise self.fail("$", f"expected an object, got {_kind(document)}")
        tag = document.get("format")
        if tag != expected:
            raise self.fail("$.format", f"expected format {expected!r}, got {tag!r}")

    def interval(self, value: Any, path: str) -> tuple[int, int]:
        pair = self.array(value, path)
        if len(pair) != 2:
            raise self.fail(path, "an interval is [lo, hi)")
        lo = self.integer(pair[0], json_path(path, 0))
        hi = self.integer(pair[1], json_path(path, 1))
        if hi < lo:
            raise self.fail(path, f"interval [{lo}, {hi}) has hi < lo")
        return lo, hi

    def box(self, value: Any, path: str) -> Box:
        dims = self.array(value, path)
        return tuple(self.interval(dim, json_path(path, i)) for i, dim in enumerate(dims))

    def named(self, value: Any, path: str,
              read_one: Callable[[Any, str], Any]) -> dict[str, Any]:
        return {name: read_one(item, json_path(path, name))
                for name, item in self.mapping(value, path).items()}

    def counts(self, value: Any, path: str, known: Mapping[str, Any], what: str,
               minimum: int = 0) -> dict[str, int]:
        result = {}
        for name, count in self.mapping(value, path).items():
            if name not in known:
                raise self.fail(json_path(path, name), f"unknown {what} {name!r}")
            result[name] = self.integer(count, json_path(path, name), minimum=minimum)
        return result


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def target_from_dict(document: Any, source: str = "<target>") -> Target:
    """Read an ``npu-target/1`` document."""
    r = _Reader(source)
    r.format_tag(document, TARGET_FORMAT)
    d = r.obj(document, "$", ("format", "name", "lanes"),
              ("time_unit", "budgets", "memories", "costs", "meta"))
    lanes = r.named(d["lanes"], "$.lanes", lambda v, p: r.integer(v, p, minimum=1))
    budgets = r.named(d.get("budgets", {}), "$.budgets",
                      lambda v, p: r.integer(v, p, minimum=1))

    def memory(value: Any, path: str) -> Memory:
        m = r.obj(value, path, ("capacity_bytes",), ("alignment_bytes",))
        return Memory(r.integer(m["capacity_bytes"], json_path(path, "capacity_bytes"),
                                minimum=1),
                      r.integer(m.get("alignment_bytes", 1),
                                json_path(path, "alignment_bytes"), minimum=1))

    return Target(
        name=r.string(d["name"], "$.name"),
        time_unit=r.string(d.get("time_unit", "ns"), "$.time_unit"),
        lanes=lanes, budgets=budgets,
        memories=r.named(d.get("memories", {}), "$.memories", memory),
        costs=r.free_object(d.get("costs", {}), "$.costs"),
        meta=r.free_object(d["meta"], "$.meta") if "meta" in d else None)


def problem_from_dict(document: Any, source: str = "<problem>",
                      target: Target | None = None) -> Problem:
    """Read an ``npu-problem/1`` document; with ``target``, lane/budget/memory names are checked."""
    r = _Reader(source)
    r.format_tag(document, PROBLEM_FORMAT)
    d = r.obj(document, "$", ("format", "name", "ops"),
              ("tensors", "tasks", "buffers", "after", "meta"))

    def tensor(value: Any, path: str) -> Tensor:
        t = r.obj(value, path, ("shape", "dtype", "role"), ("meta",))
        shape = tuple(r.integer(n, json_path(json_path(path, "shape"), i))
                      for i, n in enumerate(r.array(t["shape"], json_path(path, "shape"))))
        role = r.string(t["role"], json_path(path, "role"))
        if role not in TENSOR_ROLES:
            raise r.fail(json_path(path, "role"), f"role must be one of {TENSOR_ROLES}")
        return Tensor(shape, r.string(t["dtype"], json_path(path, "dtype")), role,
                      _meta(r, t, path))

    tensors = r.named(d.get("tensors", {}), "$.tensors", tensor)

    def box_in(tensor_name: str, value: Any, path: str) -> Box:
        box = r.box(value, path)
        shape = tensors[tensor_name].shape
        if len(box) != len(shape):
            raise r.fail(path, f"box has rank {len(box)}, tensor {tensor_name!r} has rank "
                               f"{len(shape)}")
        for i, ((_, hi), extent) in enumerate(zip(box, shape, strict=True)):
            if hi > extent:
                raise r.fail(json_path(path, i), f"box exceeds tensor {tensor_name!r} "
                                                 f"extent {extent}")
        return box

    def task(value: Any, path: str) -> Task:
        t = r.obj(value, path, ("kind",), ("space", "outputs", "params", "meta"))
        outputs = None
        if "outputs" in t:
            outputs = {}
            for name, box in r.mapping(t["outputs"], json_path(path, "outputs")).items():
                out_path = json_path(json_path(path, "outputs"), name)
                if name not in tensors:
                    raise r.fail(out_path, f"unknown tensor {name!r}")
                outputs[name] = box_in(name, box, out_path)
        return Task(kind=r.string(t["kind"], json_path(path, "kind")),
                    space=r.box(t["space"], json_path(path, "space")) if "space" in t
                    else None,
                    outputs=outputs,
                    params=r.free_object(t["params"], json_path(path, "params"))
                    if "params" in t else None,
                    meta=_meta(r, t, path))

    tasks = r.named(d.get("tasks", {}), "$.tasks", task)
    memories = target.memories if target else None

    def buffer(value: Any, path: str) -> Buffer:
        b = r.obj(value, path, ("memory", "size"), ("align", "meta"))
        memory = r.string(b["memory"], json_path(path, "memory"))
        if memories is not None and memory not in memories:
            raise r.fail(json_path(path, "memory"), f"unknown memory {memory!r}")
        return Buffer(memory, r.integer(b["size"], json_path(path, "size"), minimum=1),
                      r.integer(b.get("align", 1), json_path(path, "align"), minimum=1),
                      _meta(r, b, path))

    buffers = r.named(d.get("buffers", {}), "$.buffers", buffer)

    def access(value: Any, path: str) -> Access:
        a = r.obj(value, path, (), ("tensor", "box", "buffer", "bytes", "value"))
        if ("tensor" in a) == ("buffer" in a):
            raise r.fail(path, "an access names exactly one of 'tensor' or 'buffer'")
        if "tensor" in a:
            name = r.string(a["tensor"], json_path(path, "tensor"))
            if name not in tensors:
                raise r.fail(json_path(path, "tensor"), f"unknown tensor {name!r}")
            if "box" not in a:
                raise r.fail(path, "a tensor access needs a 'box'")
            if "bytes" in a or "value" in a:
                raise r.fail(path, "'bytes' and 'value' belong to buffer accesses")
            return Access(tensor=name, box=box_in(name, a["box"], json_path(path, "box")))
        name = r.string(a["buffer"], json_path(path, "buffer"))
        if name not in buffers:
            raise r.fail(json_path(path, "buffer"), f"unknown buffer {name!r}")
        if "box" in a:
            raise r.fail(json_path(path, "box"), "'box' belongs to tensor accesses")
        byte_range = None
        if "bytes" in a:
            byte_range = r.interval(a["bytes"], json_path(path, "bytes"))
            if byte_range[1] > buffers[name].size:
                raise r.fail(json_path(path, "bytes"),
                             f"range exceeds buffer {name!r} size {buffers[name].size}")
        value_tag = r.string(a["value"], json_path(path, "value")) if "value" in a else None
        return Access(buffer=name, bytes=byte_range, value=value_tag)

    def mode(value: Any, path: str) -> Mode:
        m = r.obj(value, path, ("duration",), ("lanes", "budgets"))
        lanes_known = target.lanes if target else _Anything()
        budgets_known = target.budgets if target else _Anything()
        return Mode(r.integer(m["duration"], json_path(path, "duration")),
                    r.counts(m.get("lanes", {}), json_path(path, "lanes"), lanes_known,
                             "lane kind"),
                    r.counts(m.get("budgets", {}), json_path(path, "budgets"),
                             budgets_known, "budget"))

    def op(value: Any, path: str) -> Op:
        o = r.obj(value, path, ("task", "modes"), ("space", "reads", "writes", "meta"))
        task_name = r.string(o["task"], json_path(path, "task"))
        if task_name not in tasks:
            raise r.fail(json_path(path, "task"), f"unknown task {task_name!r}")
        modes_path = json_path(path, "modes")
        modes = tuple(mode(m, json_path(modes_path, i))
                      for i, m in enumerate(r.array(o["modes"], modes_path)))
        if not modes:
            raise r.fail(modes_path, "an op needs at least one mode")

        def accesses(key: str) -> tuple[Access, ...]:
            p = json_path(path, key)
            return tuple(access(a, json_path(p, i))
                         for i, a in enumerate(r.array(o.get(key, []), p)))

        return Op(task=task_name, modes=modes, reads=accesses("reads"),
                  writes=accesses("writes"),
                  space=r.box(o["space"], json_path(path, "space")) if "space" in o else None,
                  meta=_meta(r, o, path))

    ops = r.named(d["ops"], "$.ops", op)
    after = []
    for i, edge in enumerate(r.array(d.get("after", []), "$.after")):
        path = json_path("$.after", i)
        pair = r.array(edge, path)
        if len(pair) != 2:
            raise r.fail(path, "an edge is [pred, succ]")
        for j, name in enumerate(pair):
            if r.string(name, json_path(path, j)) not in ops:
                raise r.fail(json_path(path, j), f"unknown op {name!r}")
        after.append((pair[0], pair[1]))
    return Problem(name=r.string(d["name"], "$.name"), tensors=tensors, tasks=tasks,
                   buffers=buffers, ops=ops, after=tuple(after), meta=_meta(r, d, "$"))


class _Anything(dict):
    """A stand-in for a target's name table when no target is known: every name exists."""

    def __contains__(self, key: object) -> bool:
        return True


def _meta(r: _Reader, d: dict[str, Any], path: str) -> dict[str, Any] | None:
    return r.free_object(d["meta"], json_path(path, "meta")) if "meta" in d else None


def _embedded(read: Callable[[], Any], root: str) -> Any:
    """Run a reader on an embedded document, re-rooting its error paths under ``root``."""
    try:
        return read()
    except InputError as error:
        raise InputError(error.message, source=error.source, path=root + error.path[1:],
                         rule=error.rule) from None


def schedule_from_dict(document: Any, source: str = "<schedule>") -> Schedule:
    """Read an ``npu-schedule/1`` document, with its embedded target and problem."""
    r = _Reader(source)
    r.format_tag(document, SCHEDULE_FORMAT)
    d = r.obj(document, "$", ("format", "target", "problem", "ops", "buffers", "makespan"),
              ("meta",))
    target = _embedded(lambda: target_from_dict(d["target"], source), "$.target")
    problem = _embedded(lambda: problem_from_dict(d["problem"], source, target), "$.problem")

    def placement(value: Any, path: str) -> OpPlacement:
        p = r.obj(value, path, ("mode", "start", "end"), ("units",))
        units = {}
        for lane, indices in r.mapping(p.get("units", {}), json_path(path, "units")).items():
            lane_path = json_path(json_path(path, "units"), lane)
            if lane not in target.lanes:
                raise r.fail(lane_path, f"unknown lane kind {lane!r}")
            units[lane] = tuple(r.integer(u, json_path(lane_path, i))
                                for i, u in enumerate(r.array(indices, lane_path)))
        return OpPlacement(r.integer(p["mode"], json_path(path, "mode")),
                           r.integer(p["start"], json_path(path, "start"), minimum=None),
                           r.integer(p["end"], json_path(path, "end"), minimum=None), units)

    def buffer_placement(value: Any, path: str) -> BufferPlacement:
        b = r.obj(value, path, ("offset", "alloc", "free"))
        return BufferPlacement(r.integer(b["offset"], json_path(path, "offset")),
                               r.integer(b["alloc"], json_path(path, "alloc"), minimum=None),
                               r.integer(b["free"], json_path(path, "free"), minimum=None))

    ops = r.named(d["ops"], "$.ops", placement)
    buffers = r.named(d["buffers"], "$.buffers", buffer_placement)
    return Schedule(target=target, problem=problem, ops=ops, buffers=buffers,
                    makespan=r.integer(d["makespan"], "$.makespan", minimum=None),
                    meta=_meta(r, d, "$"))


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
                         "memories": {name: {"capacity_bytes": m.capacity_bytes,
                                             "alignment_bytes": m.alignment_bytes}
                                      for name, m in target.memories.items()},
                         "costs": target.costs}
    return _with_meta(d, target.meta)


def _access_out(access: Access) -> dict[str, Any]:
    if access.tensor is not None:
        return {"tensor": access.tensor, "box": _box_out(access.box or ())}
    d: dict[str, Any] = {"buffer": access.buffer}
    if access.bytes is not None:
        d["bytes"] = list(access.bytes)
    if access.value is not None:
        d["value"] = access.value
    return d


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
        modes.append(m)
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
        "ops": {name: {"mode": p.mode, "start": p.start, "end": p.end,
                       "units": {lane: list(u) for lane, u in p.units.items()}}
                for name, p in schedule.ops.items()},
        "buffers": {name: {"offset": b.offset, "alloc": b.alloc, "free": b.free}
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


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json_atomic(path: str | os.PathLike[str], document: Any) -> None:
    """Write ``document`` whole or not at all: a temporary file renamed over ``path``."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    try:
        os.fchmod(handle, 0o666 & ~_current_umask())  # mkstemp's 0600 is for secrets
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(document, stream, indent=1)
            stream.write("\n")
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
