"""Strict reading of a schedule file and the FORMAT rule.

Two kinds of bad input are told apart. A document that cannot be used at all (not JSON,
not an object, a wrong ``format`` tag on the schedule or on its embedded target or
problem, a file above :data:`MAX_INPUT_BYTES`) raises :class:`UnusableInput`; the CLI
prints its one line and exits 2. Everything else that does not match FORMATS.md (missing
or unknown keys, wrong types, dangling names, boxes of the wrong rank, byte ranges outside
their buffer, buffers placed zero times or unknown ones placed) is a ``FORMAT`` violation
whose message starts with the JSON path; the faulty element is left out of the
:class:`~checker.model.Model` and its section is marked as not intact.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from checker.model import (
    Box,
    Buffer,
    BufferAccess,
    BufferPlacement,
    Memory,
    Mode,
    Model,
    OpDef,
    Placement,
    Task,
    Tensor,
    TensorAccess,
)
from checker.report import Violation, plural

__all__ = ["MAX_INPUT_BYTES", "MAX_INT", "UnusableInput", "read_json", "parse_json",
           "build_model", "no_gc"]

#: Files above this size are refused before reading (a schedule of 100k ops is ~60 MB).
MAX_INPUT_BYTES = 128 * 1024 * 1024
#: Every figure is a signed 64-bit integer.
MAX_INT = 2**63 - 1
MIN_INT = -(2**63)

SCHEDULE_FORMAT = "npu-schedule/1"
TARGET_FORMAT = "npu-target/1"
PROBLEM_FORMAT = "npu-problem/1"
ROLES = ("input", "output", "temp")


class UnusableInput(ValueError):
    """Input that cannot be checked at all; ``str()`` is ``SOURCE: PATH: RULE: message``."""

    def __init__(self, message: str, *, source: str = "<input>", path: str = "$",
                 rule: str = "FORMAT") -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.path = path
        self.rule = rule

    def __str__(self) -> str:
        return f"{self.source}: {self.path}: {self.rule}: {self.message}"

    def attributed(self, source: str) -> UnusableInput:
        """The same error, naming ``source`` (the file is known only to the caller)."""
        return UnusableInput(self.message, source=source, path=self.path, rule=self.rule)


# ----------------------------------------------------------------------------- JSON
@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: building a million small acyclic objects
    otherwise triggers full collections over and over (measured: 5-10x slower at 100k ops).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {json.dumps(key)}")
            seen.add(key)
    return result


def parse_json(data: bytes | str, source: str = "<input>") -> Any:
    """Parse JSON strictly: no NaN/Infinity, no duplicate keys, no runaway nesting."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise UnusableInput(f"not UTF-8 text (byte {error.start})", source=source,
                                rule="JSON") from None
    if not data.strip():
        raise UnusableInput("the input is empty", source=source, rule="JSON")
    try:
        with no_gc():
            return json.loads(data, parse_constant=_refuse_constant,
                              parse_float=_finite_float, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise UnusableInput(f"not valid JSON: {error.msg} at line {error.lineno} column "
                            f"{error.colno}", source=source, rule="JSON") from None
    except RecursionError:
        raise UnusableInput("not usable JSON: nesting too deep", source=source,
                            rule="JSON") from None
    except ValueError as error:  # our hooks, and integers with thousands of digits
        raise UnusableInput(f"not usable JSON: {error}", source=source, rule="JSON") from None


def read_json(path: str | os.PathLike[str], limit: int | None = None) -> Any:
    """Read and parse a file (``-`` is standard input), refusing anything above ``limit``
    bytes (default :data:`MAX_INPUT_BYTES`) before reading it."""
    source = "<stdin>" if str(path) == "-" else str(path)
    limit = MAX_INPUT_BYTES if limit is None else limit
    try:
        if str(path) == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            file = Path(path)
            if file.is_dir():
                raise UnusableInput("is a directory", source=source, rule="FILE")
            if file.stat().st_size > limit:
                raise UnusableInput(f"larger than the limit of {limit} bytes",
                                    source=source, rule="SIZE")
            with file.open("rb") as stream:
                data = stream.read(limit + 1)
    except OSError as error:
        raise UnusableInput(f"cannot read: {error.strerror or error}", source=source,
                            rule="FILE") from None
    if len(data) > limit:
        raise UnusableInput(f"larger than the limit of {limit} bytes", source=source,
                            rule="SIZE")
    return parse_json(data, source)


# ----------------------------------------------------------------------------- paths
def _key(parent: str, key: str | int) -> str:
    """Extend a JSON path: names that are not identifiers go in brackets, quoted."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if key.isidentifier():
        return f"{parent}.{key}"
    return f"{parent}[{json.dumps(key)}]"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def _fast_box(value: Any, shape: tuple[int, ...] | None = None) -> Box | None:
    """``value`` itself if it is a well-formed box (inside a tensor of ``shape``, if given:
    same rank, ``0 <= lo`` and ``hi <= extent``), else ``None`` (the slow path says why).

    The fast checks here and below build no JSON paths: paths are made only for errors.
    The box is not copied (the model keeps the document's own lists: a box of rank 64 as
    64 tuples was 0.7 GB at 64k ops), and each dimension is looked at once: unpacking
    ``(lo, hi)`` fails on anything but a pair, and the pair must hold two integers.
    """
    if type(value) is not list:
        return None
    try:
        if shape is None:
            for lo, hi in value:
                if type(lo) is not int or type(hi) is not int or \
                        not MIN_INT <= lo < hi <= MAX_INT:
                    return None
        elif len(value) != len(shape):
            return None
        else:
            for (lo, hi), extent in zip(value, shape):  # noqa: B905 - lengths compared
                if type(lo) is not int or type(hi) is not int or not 0 <= lo < hi <= extent:
                    return None
    except (TypeError, ValueError):  # a dimension that is not a pair
        return None
    return value


def _fast_counts(value: Any, known: dict[str, int], minimum: int) -> bool:
    if type(value) is not dict:
        return False
    for name, count in value.items():
        if name not in known or type(count) is not int or not minimum <= count <= MAX_INT:
            return False
    return True


def _fast_ints(values: Any) -> bool:
    if type(values) is not list:
        return False
    return all(type(v) is int and MIN_INT <= v <= MAX_INT for v in values)


class _Bad(Exception):
    """Raised inside an element's reader to drop that element (the violation is recorded)."""


class _Builder:
    """Reads the document section by section, recording FORMAT violations as it goes."""

    def __init__(self) -> None:
        self.model = Model()
        self.violations: list[Violation] = []
        self.buffer_index: dict[str, int] = {}  # set once the buffers are read
        self.access_log = self.model.access_log

    # -- recording
    def fail(self, section: str | None, path: str, message: str, *, ops: tuple[str, ...] = (),
             buffers: tuple[str, ...] = (), tensors: tuple[str, ...] = ()) -> _Bad:
        if section is not None:
            self.model.intact.discard(section)
        self.violations.append(Violation("FORMAT", f"{path}: {message}", ops, buffers,
                                         tensors))
        return _Bad()

    # -- typed access; each raises _Bad after recording
    def obj(self, section: str | None, value: Any, path: str, required: tuple[str, ...],
            optional: frozenset[str], **names: tuple[str, ...]) -> dict[str, Any]:
        if type(value) is not dict:
            raise self.fail(section, path, f"expected an object, got {_kind(value)}", **names)
        missing = [key for key in required if key not in value]
        if missing:
            raise self.fail(section, path, f"missing required key {missing[0]!r}", **names)
        if len(value) > len(required):
            for key in value:
                if key not in optional and key not in required:
                    self.fail(section, _key(path, key), f"unknown key {key!r}", **names)
            if "meta" in value and "meta" in optional and type(value["meta"]) is not dict:
                self.fail(section, _key(path, "meta"),
                          f"expected an object, got {_kind(value['meta'])}", **names)
        return value

    def keys(self, doc: dict[str, Any], path: str, required: dict[str, str | None],
             optional: frozenset[str]) -> None:
        """Check a document's own keys; a missing one breaks the section it maps to."""
        for key, section in required.items():
            if key not in doc:
                self.fail(section, path, f"missing required key {key!r}")
        for key in doc:
            if key not in required and key not in optional:
                self.fail(None, _key(path, key), f"unknown key {key!r}")
        if "meta" in doc:
            self.free(None, doc["meta"], _key(path, "meta"))

    def mapping(self, section: str | None, value: Any, path: str) -> dict[str, Any]:
        if type(value) is not dict:
            raise self.fail(section, path, f"expected an object, got {_kind(value)}")
        if "" in value:
            self.fail(section, _key(path, ""), "names must be non-empty strings")
        return value

    def array(self, section: str | None, value: Any, path: str,
              **names: tuple[str, ...]) -> list[Any]:
        if type(value) is not list:
            raise self.fail(section, path, f"expected an array, got {_kind(value)}", **names)
        return value

    def integer(self, section: str | None, value: Any, path: str, minimum: int | None = None,
                **names: tuple[str, ...]) -> int:
        if type(value) is not int:
            raise self.fail(section, path, f"expected an integer, got {_kind(value)}",
                            **names)
        if value > MAX_INT or value < MIN_INT:
            raise self.fail(section, path, "integer does not fit in 64 bits", **names)
        if minimum is not None and value < minimum:
            raise self.fail(section, path, f"must be >= {minimum}, got {value}", **names)
        return value

    def string(self, section: str | None, value: Any, path: str,
               **names: tuple[str, ...]) -> str:
        if type(value) is not str or not value:
            raise self.fail(section, path, f"expected a non-empty string, got {_kind(value)}",
                            **names)
        return value

    def free(self, section: str | None, value: Any, path: str) -> None:
        if type(value) is not dict:
            self.fail(section, path, f"expected an object, got {_kind(value)}")

    def box(self, section: str, value: Any, path: str, **names: tuple[str, ...]) -> Box:
        fast = _fast_box(value)
        return fast if fast is not None else self.checked_box(section, value, path, **names)

    def checked_box(self, section: str, value: Any, path: str,
                    **names: tuple[str, ...]) -> Box:
        """:meth:`box` with a JSON path for each fault (the slow path)."""
        dims = self.array(section, value, path, **names)
        for i, dim in enumerate(dims):
            if type(dim) is not list or len(dim) != 2:
                raise self.fail(section, _key(path, i), "an interval is [lo, hi)", **names)
            lo = self.integer(section, dim[0], _key(_key(path, i), 0), **names)
            hi = self.integer(section, dim[1], _key(_key(path, i), 1), **names)
            if hi <= lo:
                raise self.fail(section, _key(path, i), f"interval [{lo}, {hi}) is empty "
                                "(need lo < hi)", **names)
        return dims

    def tensor_box(self, section: str, tensor: str, value: Any, path: str,
                   **names: tuple[str, ...]) -> Box:
        shape = self.model.tensors[tensor].shape
        box = _fast_box(value, shape)
        if box is not None:
            return box
        return self.checked_tensor_box(section, tensor, value, path, **names)

    def checked_tensor_box(self, section: str, tensor: str, value: Any, path: str,
                           **names: tuple[str, ...]) -> Box:
        """:meth:`tensor_box` with a JSON path for each fault (the slow path)."""
        shape = self.model.tensors[tensor].shape
        box = self.checked_box(section, value, path, **names)
        if len(box) != len(shape):
            raise self.fail(section, path, f"box has rank {len(box)} but tensor {tensor!r} "
                            f"has rank {len(shape)}", **names)
        for i, ((lo, hi), extent) in enumerate(zip(box, shape, strict=True)):
            if lo < 0 or hi > extent:
                raise self.fail(section, _key(path, i), f"[{lo}, {hi}) lies outside tensor "
                                f"{tensor!r} extent {extent}", **names)
        return box

    def counts(self, section: str, value: Any, path: str, known: dict[str, int] | None,
               what: str, minimum: int, **names: tuple[str, ...]) -> dict[str, int]:
        """A map of target names (lanes or budgets) to integers of at least ``minimum``."""
        if type(value) is not dict:
            raise self.fail(section, path, f"expected an object, got {_kind(value)}", **names)
        for name, count in value.items():
            if known is not None and name not in known:
                raise self.fail(section, _key(path, name), f"unknown {what} {name!r}",
                                **names)
            self.integer(section, count, _key(path, name), minimum, **names)
        return value

    # -- sections
    def target(self, doc: dict[str, Any]) -> None:
        m = self.model
        p = "$.target"
        self.keys(doc, p, {"format": None, "name": None, "lanes": "lanes"},
                  frozenset({"time_unit", "budgets", "memories", "costs", "meta"}))
        for key in ("name", "time_unit"):
            if key in doc:
                with contextlib.suppress(_Bad):
                    self.string(None, doc[key], _key(p, key))
        if "costs" in doc:
            self.free(None, doc["costs"], f"{p}.costs")
        for section, key, minimum in (("lanes", "lanes", 1), ("budgets", "budgets", 1)):
            table: dict[str, int] = {}
            try:
                raw = self.mapping(section, doc.get(key, {}), _key(p, key))
                for name, count in raw.items():
                    with contextlib.suppress(_Bad):
                        table[name] = self.integer(section, count, _key(_key(p, key), name),
                                                   minimum)
            except _Bad:
                pass
            setattr(m, section, table)
        try:
            memories = self.mapping("memories", doc.get("memories", {}), f"{p}.memories")
        except _Bad:
            memories = {}
        for name, value in memories.items():
            path = _key(f"{p}.memories", name)
            try:
                d = self.obj("memories", value, path, ("capacity_bytes",),
                             frozenset({"alignment_bytes", "meta"}))
                m.memories[name] = Memory(
                    self.integer("memories", d["capacity_bytes"], f"{path}.capacity_bytes", 1),
                    self.integer("memories", d.get("alignment_bytes", 1),
                                 f"{path}.alignment_bytes", 1))
            except _Bad:
                pass

    def problem(self, doc: dict[str, Any]) -> None:
        p = "$.problem"
        self.keys(doc, p, {"format": None, "name": None, "ops": "ops"},
                  frozenset({"tensors", "tasks", "buffers", "after", "meta"}))
        if "name" in doc:
            with contextlib.suppress(_Bad):
                self.string(None, doc["name"], f"{p}.name")
        self.tensors(doc.get("tensors", {}), f"{p}.tensors")
        self.tasks(doc.get("tasks", {}), f"{p}.tasks")
        self.buffers(doc.get("buffers", {}), f"{p}.buffers")
        if "ops" in doc:
            self.ops(doc["ops"], f"{p}.ops")
        self.after(doc.get("after", []), f"{p}.after")

    def tensors(self, value: Any, p: str) -> None:
        try:
            table = self.mapping("tensors", value, p)
        except _Bad:
            return
        optional = frozenset({"meta"})
        for name, t in table.items():
            path = _key(p, name)
            names = {"tensors": (name,)}
            try:
                d = self.obj("tensors", t, path, ("shape", "dtype", "role"), optional, **names)
                shape = tuple(self.integer("tensors", n, _key(f"{path}.shape", i), 1, **names)
                              for i, n in enumerate(self.array("tensors", d["shape"],
                                                               f"{path}.shape", **names)))
                self.string("tensors", d["dtype"], f"{path}.dtype", **names)
                role = d["role"]
                if role not in ROLES:
                    raise self.fail("tensors", f"{path}.role", f"role must be one of "
                                    f"{', '.join(ROLES)}, got {json.dumps(role)[:40]}", **names)
                self.model.tensors[name] = Tensor(shape, role)
            except _Bad:
                pass

    def tasks(self, value: Any, p: str) -> None:
        try:
            table = self.mapping("tasks", value, p)
        except _Bad:
            return
        optional = frozenset({"space", "outputs", "params", "meta"})
        tensors = self.model.tensors
        for name, t in table.items():
            path = _key(p, name)
            try:
                d = self.obj("tasks", t, path, ("kind",), optional)
                self.string("tasks", d["kind"], f"{path}.kind")
                if "params" in d:
                    self.free("tasks", d["params"], f"{path}.params")
                space = self.box("tasks", d["space"], f"{path}.space") if "space" in d \
                    else None
                outputs = None
                if "outputs" in d:
                    outputs = {}
                    raw = self.mapping("tasks", d["outputs"], f"{path}.outputs")
                    for tensor, box in raw.items():
                        out_path = _key(f"{path}.outputs", tensor)
                        if tensor not in tensors:
                            if "tensors" in self.model.intact:
                                raise self.fail("tasks", out_path, f"unknown tensor {tensor!r}",
                                                tensors=(tensor,))
                            raise _Bad()
                        outputs[tensor] = self.tensor_box("tasks", tensor, box, out_path,
                                                          tensors=(tensor,))
                self.model.tasks[name] = Task(space, outputs)
            except _Bad:
                self.model.intact.discard("tasks")

    def buffers(self, value: Any, p: str) -> None:
        try:
            table = self.mapping("buffers", value, p)
        except _Bad:
            return
        optional = frozenset({"align", "meta"})
        memories = self.model.memories
        for name, b in table.items():
            if type(b) is dict and b.keys() <= _BUFFER_KEYS and \
                    type(b.get("memory")) is str and b["memory"] in memories \
                    and type(b.get("meta", _EMPTY)) is dict:
                size, align = b.get("size"), b.get("align", 1)
                if type(size) is int and type(align) is int and 1 <= size <= MAX_INT and \
                        1 <= align <= MAX_INT:
                    self.model.buffers[name] = Buffer(b["memory"], size, align)
                    continue
            path = _key(p, name)
            names = {"buffers": (name,)}
            try:
                d = self.obj("buffers", b, path, ("memory", "size"), optional, **names)
                memory = self.string("buffers", d["memory"], f"{path}.memory", **names)
                if memory not in memories:
                    if "memories" in self.model.intact:
                        raise self.fail("buffers", f"{path}.memory",
                                        f"unknown memory {memory!r}", **names)
                    raise _Bad()
                self.model.buffers[name] = Buffer(
                    memory, self.integer("buffers", d["size"], f"{path}.size", 1, **names),
                    self.integer("buffers", d.get("align", 1), f"{path}.align", 1, **names))
            except _Bad:
                self.model.intact.discard("buffers")

    def ops(self, value: Any, p: str) -> None:
        try:
            table = self.mapping("ops", value, p)
        except _Bad:
            return
        m = self.model
        m.op_names = list(table)
        optional = frozenset({"space", "reads", "writes", "meta"})
        self.buffer_index = {buffer: i for i, buffer in enumerate(m.buffers)}
        log = m.access_log
        logged, ends = log.buffer, log.ends
        for name, o in table.items():
            mark = len(logged)
            fast = self.fast_op(o)
            if fast is not None:
                m.ops[name] = fast
                ends.append(len(logged))
                continue
            log.truncate(mark)
            path = _key(p, name)
            try:
                if type(o) is dict and o.keys() <= _OP_KEYS and "task" in o and "modes" in o:
                    d = o
                else:
                    d = self.obj("ops", o, path, ("task", "modes"), optional, ops=(name,))
                m.ops[name] = self.op(name, d, path)
                ends.append(len(logged))
            except _Bad:
                log.truncate(mark)
                m.intact.discard("ops")

    def fast_op(self, o: Any) -> OpDef | None:
        """Take a well-formed op without building paths; ``None`` if anything is off (the
        slow path below then says what, with the JSON path)."""
        m = self.model
        if type(o) is not dict or not o.keys() <= _OP_KEYS or \
                type(o.get("meta", _EMPTY)) is not dict:
            return None
        task, modes_raw = o.get("task"), o.get("modes")
        if type(task) is not str or task not in m.tasks or type(modes_raw) is not list or \
                not modes_raw:
            return None
        lanes, budgets = m.lanes, m.budgets
        modes = []
        for d in modes_raw:
            if type(d) is not dict or not d.keys() <= _MODE_KEYS or \
                    type(d.get("meta", _EMPTY)) is not dict:
                return None
            duration = d.get("duration")
            wanted, draws = d.get("lanes", _EMPTY), d.get("budgets", _EMPTY)
            if type(duration) is not int or not 0 <= duration <= MAX_INT or \
                    wanted is not _EMPTY and not _fast_counts(wanted, lanes, 1) or \
                    draws is not _EMPTY and not _fast_counts(draws, budgets, 0):
                return None
            modes.append(Mode(duration, wanted, draws))
        space = None
        if "space" in o:
            space = _fast_box(o["space"])
            if space is None:
                return None
        op = OpDef(task, modes, space, [], [], [], [])
        fast_access = self.fast_access
        for key, tensors, buffers, write in (
                ("reads", op.tensor_reads, op.buffer_reads, False),
                ("writes", op.tensor_writes, op.buffer_writes, True)):
            accesses = o.get(key, _NONE)
            if accesses is _NONE:
                continue
            if type(accesses) is not list:
                return None
            for access in accesses:
                if type(access) is not dict or not fast_access(access, tensors, buffers, write):
                    return None
        return op

    def op(self, name: str, d: dict[str, Any], path: str) -> OpDef:
        m = self.model
        names = {"ops": (name,)}
        if "meta" in d and type(d["meta"]) is not dict:
            raise self.fail("ops", f"{path}.meta", f"expected an object, got "
                            f"{_kind(d['meta'])}", **names)
        task = d["task"]
        if type(task) is not str or task not in m.tasks:
            if type(task) is str and task and "tasks" not in m.intact:
                raise _Bad()
            self.string("ops", task, f"{path}.task", **names)
            raise self.fail("ops", f"{path}.task", f"unknown task {task!r}", **names)
        modes_raw = d["modes"]
        if type(modes_raw) is not list:
            self.array("ops", modes_raw, f"{path}.modes", **names)
        modes = [self.mode(mode, path, i, names) for i, mode in enumerate(modes_raw)]
        if not modes:
            raise self.fail("ops", f"{path}.modes", "an op needs at least one mode", **names)
        space = self.box("ops", d["space"], f"{path}.space", **names) if "space" in d else None
        op = OpDef(task, modes, space, [], [], [], [])
        for key, tensors, buffers, write in (
                ("reads", op.tensor_reads, op.buffer_reads, False),
                ("writes", op.tensor_writes, op.buffer_writes, True)):
            if key not in d:
                continue
            accesses = d[key]
            if type(accesses) is not list:
                self.array("ops", accesses, f"{path}.{key}", **names)
            for i, access in enumerate(accesses):
                self.access(access, path, key, i, names, tensors, buffers, write)
        return op

    def mode(self, value: Any, path: str, i: int, names: dict[str, tuple[str, ...]]) -> Mode:
        m = self.model
        if type(value) is dict and value.keys() <= _MODE_KEYS and "duration" in value:
            d = value
        else:
            d = self.obj("ops", value, _key(f"{path}.modes", i), ("duration",), _MODE_KEYS,
                         **names)
        duration = d["duration"]
        if type(duration) is not int or not 0 <= duration <= MAX_INT:
            self.integer("ops", duration, f"{_key(f'{path}.modes', i)}.duration", 0, **names)
        lanes = budgets = _EMPTY
        if "lanes" in d:
            lanes = self.checked_counts(d["lanes"], path, i, "lanes", m.lanes, "lane kind",
                                        names)
        if "budgets" in d:
            budgets = self.checked_counts(d["budgets"], path, i, "budgets", m.budgets,
                                          "budget", names)
        if "meta" in d and type(d["meta"]) is not dict:
            raise self.fail("ops", f"{_key(f'{path}.modes', i)}.meta", "expected an object",
                            **names)
        return Mode(duration, lanes, budgets)

    def checked_counts(self, value: Any, path: str, i: int, key: str, known: dict[str, int],
                       what: str, names: dict[str, tuple[str, ...]]) -> dict[str, int]:
        """A mode's lane demands (each >= 1) or budget draws (each >= 0)."""
        minimum = 1 if key == "lanes" else 0
        if _fast_counts(value, known, minimum):
            return value
        section = "lanes" if key == "lanes" else "budgets"
        if section not in self.model.intact and type(value) is dict and \
                any(name not in known for name in value):
            raise _Bad()  # the target's table is broken: the name may well exist
        return self.counts("ops", value, f"{_key(f'{path}.modes', i)}.{key}", known, what,
                           minimum, **names)

    def access(self, value: Any, path: str, key: str, i: int,
               names: dict[str, tuple[str, ...]], tensors: list[TensorAccess],
               buffers: list[BufferAccess], write: bool) -> None:
        m = self.model
        if type(value) is dict and self.fast_access(value, tensors, buffers, write):
            return
        apath = _key(f"{path}.{key}", i)
        if type(value) is not dict:
            raise self.fail("ops", apath, f"expected an object, got {_kind(value)}", **names)
        keys = value.keys()
        if "buffer" in value and keys <= _BUFFER_ACCESS_KEYS:
            buffer = value["buffer"]
            if type(buffer) is not str or buffer not in m.buffers:
                self.string("ops", buffer, f"{apath}.buffer", **names)
                if "buffers" not in m.intact:
                    raise _Bad()
                raise self.fail("ops", f"{apath}.buffer", f"unknown buffer {buffer!r}",
                                buffers=(buffer,), **names)
            size = m.buffers[buffer].size
            lo, hi = 0, size
            if "bytes" in value:
                span = value["bytes"]
                if type(span) is not list or len(span) != 2:
                    raise self.fail("ops", f"{apath}.bytes", "a byte range is [lo, hi)",
                                    buffers=(buffer,), **names)
                lo = self.integer("ops", span[0], f"{apath}.bytes[0]", **names)
                hi = self.integer("ops", span[1], f"{apath}.bytes[1]", **names)
                if not 0 <= lo < hi <= size:
                    raise self.fail("ops", f"{apath}.bytes", f"[{lo}, {hi}) is empty or does "
                                    f"not lie inside buffer {buffer!r} of {plural(size, 'byte')}",
                                    buffers=(buffer,), **names)
            tag = value.get("value")
            if "value" in value and (type(tag) is not str or not tag):
                raise self.fail("ops", f"{apath}.value", f"expected a non-empty string, got "
                                f"{_kind(tag)}", buffers=(buffer,), **names)
            if "meta" in value and type(value["meta"]) is not dict:
                raise self.fail("ops", f"{apath}.meta", "expected an object", **names)
            self.log(buffer, lo, hi, tag, write)
            buffers.append(BufferAccess(buffer, lo, hi, tag))
            return
        if "tensor" in value and "buffer" not in value and keys <= _TENSOR_ACCESS_KEYS:
            tensor = value["tensor"]
            if type(tensor) is not str or tensor not in m.tensors:
                self.string("ops", tensor, f"{apath}.tensor", **names)
                if "tensors" not in m.intact:
                    raise _Bad()
                raise self.fail("ops", f"{apath}.tensor", f"unknown tensor {tensor!r}",
                                tensors=(tensor,), **names)
            if "box" not in value:
                raise self.fail("ops", apath, "a tensor access needs a 'box'",
                                tensors=(tensor,), **names)
            if "meta" in value and type(value["meta"]) is not dict:
                raise self.fail("ops", f"{apath}.meta", "expected an object", **names)
            tensors.append(TensorAccess(tensor, self.tensor_box(
                "ops", tensor, value["box"], f"{apath}.box", tensors=(tensor,), **names)))
            return
        if ("tensor" in value) == ("buffer" in value):
            raise self.fail("ops", apath, "an access names exactly one of 'tensor' or "
                            "'buffer'", **names)
        allowed = _BUFFER_ACCESS_KEYS if "buffer" in value else _TENSOR_ACCESS_KEYS
        extra = sorted(k for k in keys if k not in allowed)
        raise self.fail("ops", _key(apath, extra[0]), f"key {extra[0]!r} does not belong to "
                        f"a {'buffer' if 'buffer' in value else 'tensor'} access", **names)

    def log(self, buffer: str, lo: int, hi: int, value: str | None, write: bool) -> None:
        """Log a buffer access for :mod:`checker.columns` (:class:`AccessLog`)."""
        log = self.access_log
        log.buffer.append(self.buffer_index[buffer])
        log.lo.append(lo)
        log.hi.append(hi)
        log.value.append(value)
        log.write.append(write)

    def fast_access(self, value: dict[str, Any], tensors: list[TensorAccess],
                    buffers: list[BufferAccess], write: bool) -> bool:
        """Take a well-formed access without building paths; ``False`` if anything is off."""
        if "meta" in value and type(value["meta"]) is not dict:
            return False
        buffer = value.get("buffer")
        if buffer is not None:
            definition = self.model.buffers.get(buffer) if type(buffer) is str else None
            if definition is None or not value.keys() <= _BUFFER_ACCESS_KEYS:
                return False
            span = value.get("bytes")
            if span is None:
                if "bytes" in value:
                    return False
                lo, hi = 0, definition.size
            elif type(span) is list and len(span) == 2 and type(span[0]) is int and \
                    type(span[1]) is int and 0 <= span[0] < span[1] <= definition.size:
                lo, hi = span
            else:
                return False
            tag = value.get("value")
            if tag is None:
                if "value" in value:
                    return False
            elif type(tag) is not str or not tag:
                return False
            log = self.access_log  # self.log inline: this runs once per access
            log.buffer.append(self.buffer_index[buffer])
            log.lo.append(lo)
            log.hi.append(hi)
            log.value.append(tag)
            log.write.append(write)
            buffers.append(BufferAccess(buffer, lo, hi, tag))
            return True
        tensor = value.get("tensor")
        definition = self.model.tensors.get(tensor) if type(tensor) is str else None
        if definition is None or not value.keys() <= _TENSOR_ACCESS_KEYS:
            return False
        box = _fast_box(value.get("box"), definition.shape)
        if box is None:
            return False
        tensors.append(TensorAccess(tensor, box))
        return True

    def after(self, value: Any, p: str) -> None:
        try:
            edges = self.array("after", value, p)
        except _Bad:
            return
        known = self.model.op_names
        names = set(known) if known is not None else set()
        for i, edge in enumerate(edges):
            if type(edge) is list and len(edge) == 2 and type(edge[0]) is str and \
                    type(edge[1]) is str and edge[0] in names and edge[1] in names and \
                    edge[0] != edge[1]:
                self.model.after.append((edge[0], edge[1]))
                continue
            path = _key(p, i)
            if type(edge) is not list or len(edge) != 2:
                self.fail("after", path, "an edge is [pred, succ]")
                continue
            try:
                for j, name in enumerate(edge):
                    self.string("after", name, _key(path, j))
                    if name not in names:
                        if known is None:
                            raise _Bad()
                        raise self.fail("after", _key(path, j), f"unknown op {name!r}",
                                        ops=(name,))
                if edge[0] == edge[1]:
                    raise self.fail("after", path, f"an edge from op {edge[0]!r} to itself",
                                    ops=(edge[0],))
                self.model.after.append((edge[0], edge[1]))
            except _Bad:
                self.model.intact.discard("after")

    def schedule(self, doc: dict[str, Any]) -> None:
        m = self.model
        self.keys(doc, "$", {"format": None, "target": None, "problem": None,
                             "ops": "schedule.ops", "buffers": "schedule.buffers",
                             "makespan": "makespan"}, frozenset({"meta"}))
        if "makespan" in doc:
            with contextlib.suppress(_Bad):
                m.makespan = self.integer("makespan", doc["makespan"], "$.makespan")
        if "ops" in doc:
            self.placements(doc["ops"])
        if "buffers" in doc:
            self.buffer_placements(doc["buffers"])

    def placements(self, value: Any) -> None:
        m = self.model
        try:
            table = self.mapping("schedule.ops", value, "$.ops")
        except _Bad:
            return
        m.placed_names = list(table)
        lanes = m.lanes
        lanes_intact = "lanes" in m.intact
        for name, o in table.items():
            if type(o) is dict and o.keys() <= _PLACEMENT_KEYS:
                mode, start, end = o.get("mode"), o.get("start"), o.get("end")
                units = o.get("units", _EMPTY)
                if type(mode) is int and type(start) is int and type(end) is int and \
                        MIN_INT <= mode <= MAX_INT and MIN_INT <= start <= MAX_INT and \
                        MIN_INT <= end <= MAX_INT and type(units) is dict and \
                        type(o.get("meta", _EMPTY)) is dict:
                    for lane, indices in units.items():
                        if lane not in lanes:
                            break
                        if type(indices) is list and len(indices) == 1:  # one unit, inline
                            unit = indices[0]
                            if type(unit) is not int or not MIN_INT <= unit <= MAX_INT:
                                break
                        elif not _fast_ints(indices):
                            break
                    else:
                        m.placements[name] = Placement(mode, start, end, units)
                        continue
            path = _key("$.ops", name)
            names = {"ops": (name,)}
            try:
                if not (type(o) is dict and o.keys() <= _PLACEMENT_KEYS and "mode" in o and
                        "start" in o and "end" in o):
                    self.obj("schedule.ops", o, path, ("mode", "start", "end"),
                             _PLACEMENT_KEYS, **names)
                mode, start, end = o["mode"], o["start"], o["end"]
                if not (type(mode) is int and type(start) is int and type(end) is int and
                        min(mode, start, end) >= MIN_INT and max(mode, start, end) <= MAX_INT):
                    for key in ("mode", "start", "end"):
                        self.integer("schedule.ops", o[key], f"{path}.{key}", **names)
                units: dict[str, list[int]] = {}
                if "units" in o:
                    raw = o["units"]
                    if type(raw) is not dict:
                        raise self.fail("schedule.ops", f"{path}.units", f"expected an "
                                        f"object, got {_kind(raw)}", **names)
                    for lane, indices in raw.items():
                        lane_path = _key(f"{path}.units", lane)
                        if lane not in lanes:
                            if not lanes_intact:
                                raise _Bad()
                            raise self.fail("schedule.ops", lane_path,
                                            f"unknown lane kind {lane!r}", **names)
                        self.array("schedule.ops", indices, lane_path, **names)
                        for k, unit in enumerate(indices):
                            self.integer("schedule.ops", unit, _key(lane_path, k), **names)
                        units[lane] = indices
                if "meta" in o and type(o["meta"]) is not dict:
                    raise self.fail("schedule.ops", f"{path}.meta", "expected an object",
                                    **names)
                m.placements[name] = Placement(mode, start, end, units)
            except _Bad:
                m.intact.discard("schedule.ops")

    def buffer_placements(self, value: Any) -> None:
        m = self.model
        try:
            table = self.mapping("schedule.buffers", value, "$.buffers")
        except _Bad:
            return
        optional = frozenset({"meta"})
        for name, b in table.items():
            if name in m.buffers and type(b) is dict and b.keys() <= _BUFFER_PLACEMENT_KEYS \
                    and type(b.get("meta", _EMPTY)) is dict:
                offset, alloc, free = b.get("offset"), b.get("alloc"), b.get("free")
                if type(offset) is int and type(alloc) is int and type(free) is int and \
                        MIN_INT <= offset <= MAX_INT and MIN_INT <= alloc <= MAX_INT and \
                        MIN_INT <= free <= MAX_INT:
                    m.buffer_places[name] = BufferPlacement(offset, alloc, free)
                    continue
            path = _key("$.buffers", name)
            names = {"buffers": (name,)}
            try:
                if name not in m.buffers:
                    if "buffers" in m.intact:
                        raise self.fail("schedule.buffers", path, f"buffer {name!r} is placed "
                                        "but the problem has no such buffer", **names)
                    raise _Bad()
                d = self.obj("schedule.buffers", b, path, ("offset", "alloc", "free"),
                             optional, **names)
                m.buffer_places[name] = BufferPlacement(
                    *(self.integer("schedule.buffers", d[key], f"{path}.{key}", **names)
                      for key in ("offset", "alloc", "free")))
            except _Bad:
                pass
        for name in m.buffers:
            if name not in table:
                self.fail("schedule.buffers", "$.buffers", f"buffer {name!r} of the problem "
                          "is not placed", buffers=(name,))


_EMPTY: dict[str, Any] = {}
_NONE = object()
_OP_KEYS = frozenset({"task", "modes", "space", "reads", "writes", "meta"})
_MODE_KEYS = frozenset({"duration", "lanes", "budgets", "meta"})
_BUFFER_ACCESS_KEYS = frozenset({"buffer", "bytes", "value", "meta"})
_TENSOR_ACCESS_KEYS = frozenset({"tensor", "box", "meta"})
_PLACEMENT_KEYS = frozenset({"mode", "start", "end", "units", "meta"})
_BUFFER_KEYS = frozenset({"memory", "size", "align", "meta"})
_BUFFER_PLACEMENT_KEYS = frozenset({"offset", "alloc", "free", "meta"})


def _embedded(document: Any, key: str, expected: str) -> dict[str, Any]:
    value = document.get(key)
    if type(value) is not dict:
        what = "missing" if key not in document else f"{_kind(value)}, not an object"
        raise UnusableInput(f"the embedded {key} is {what}", path=_key("$", key))
    tag = value.get("format")
    if tag != expected:
        raise UnusableInput(f"expected format {expected!r}, got {json.dumps(tag)[:60]}",
                            path=f"$.{key}.format")
    return value


def build_model(document: Any) -> tuple[Model, list[Violation]]:
    """Read a parsed schedule document into a :class:`Model` plus its FORMAT violations.

    Raises :class:`UnusableInput` when the document is not an ``npu-schedule/1`` object
    embedding an ``npu-target/1`` and an ``npu-problem/1`` object.
    """
    if type(document) is not dict:
        raise UnusableInput(f"expected an object, got {_kind(document)}")
    tag = document.get("format")
    if tag != SCHEDULE_FORMAT:
        raise UnusableInput(f"expected format {SCHEDULE_FORMAT!r}, got "
                            f"{json.dumps(tag)[:60]}", path="$.format")
    target = _embedded(document, "target", TARGET_FORMAT)
    problem = _embedded(document, "problem", PROBLEM_FORMAT)
    builder = _Builder()
    builder.target(target)
    builder.problem(problem)
    builder.schedule(document)
    return builder.model, builder.violations
