"""``npu-program/1`` (FORMATS.md, section "Program") as a typed dataclass, read and written.

A program fixes orders, not times: per lane unit a queue of ops in issue order, and waits
across queues. The reader checks what a consumer needs to use the document at all (shape,
names that exist, queue names of real units); whether the queues match the schedule and
the waits make it legal is the checker's job (``schedcheck verify-program``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from models.errors import InputError
from models.formats import Schedule, schedule_from_dict, schedule_to_dict
from models.jsonio import json_path, load_json_file

__all__ = ["PROGRAM_FORMAT", "Program", "queue_name", "parse_queue_name",
           "program_from_dict", "program_to_dict", "read_program"]

PROGRAM_FORMAT = "npu-program/1"
_QUEUE = re.compile(r"^(.+)\.(0|[1-9][0-9]*)$")


@dataclass(frozen=True, slots=True)
class Program:
    """Queues per lane unit (``KIND.INDEX`` -> ops in issue order) and waits (op -> ops it
    waits for), with the schedule they were lowered from."""

    schedule: Schedule
    queues: dict[str, tuple[str, ...]]
    waits: dict[str, tuple[str, ...]]
    meta: dict[str, Any] | None = None

    @property
    def wait_count(self) -> int:
        return sum(len(preds) for preds in self.waits.values())

    def queue_edges(self) -> list[tuple[str, str]]:
        """Every queue succession ``(before, after)``: the orders a unit gives for free."""
        return [(q[i], q[i + 1]) for q in self.queues.values() for i in range(len(q) - 1)]

    def wait_edges(self) -> list[tuple[str, str]]:
        """Every wait as ``(waited for, waiter)``."""
        return [(pred, op) for op, preds in self.waits.items() for pred in preds]


def queue_name(kind: str, index: int) -> str:
    return f"{kind}.{index}"


def parse_queue_name(name: str) -> tuple[str, int] | None:
    """``"HVX.3"`` -> ``("HVX", 3)``; ``None`` when the name is not ``KIND.INDEX``."""
    match = _QUEUE.match(name)
    return (match.group(1), int(match.group(2))) if match else None


def _fail(source: str, path: str, message: str) -> InputError:
    return InputError(message, source=source, path=path, rule="PROGRAM_FORMAT")


def _names(value: Any, path: str, known: dict[str, Any], source: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _fail(source, path, "expected an array of op names")
    for i, name in enumerate(value):
        if not isinstance(name, str) or name not in known:
            raise _fail(source, json_path(path, i), f"{name!r} is not an op of the schedule")
    if len(set(value)) != len(value):
        raise _fail(source, path, "an op is listed twice")
    return tuple(value)


def program_from_dict(document: Any, source: str = "<program>") -> Program:
    """Read an ``npu-program/1`` document strictly; :class:`InputError` names the path."""
    if not isinstance(document, dict):
        raise _fail(source, "$", "expected an object")
    if document.get("format") != PROGRAM_FORMAT:
        raise _fail(source, "$.format", f"expected {PROGRAM_FORMAT!r}")
    for key in ("schedule", "queues", "waits"):
        if key not in document:
            raise _fail(source, "$", f"missing required key {key!r}")
    for key in document:
        if key not in ("format", "schedule", "queues", "waits", "meta"):
            raise _fail(source, json_path("$", key), f"unknown key {key!r}")
    try:
        schedule = schedule_from_dict(document["schedule"], source)
    except InputError as error:
        raise InputError(error.message, source=source, path="$.schedule" + error.path[1:],
                         rule=error.rule) from None
    lanes = schedule.target.lanes
    queues: dict[str, tuple[str, ...]] = {}
    if not isinstance(document["queues"], dict):
        raise _fail(source, "$.queues", "expected an object")
    for name, ops in document["queues"].items():
        path = json_path("$.queues", name)
        unit = parse_queue_name(name)
        if unit is None or unit[0] not in lanes or unit[1] >= lanes[unit[0]]:
            raise _fail(source, path, f"{name!r} is not a lane unit KIND.INDEX of the target")
        queues[name] = _names(ops, path, schedule.ops, source)
    waits: dict[str, tuple[str, ...]] = {}
    if not isinstance(document["waits"], dict):
        raise _fail(source, "$.waits", "expected an object")
    for name, preds in document["waits"].items():
        path = json_path("$.waits", name)
        if name not in schedule.ops:
            raise _fail(source, path, f"{name!r} is not an op of the schedule")
        waits[name] = _names(preds, path, schedule.ops, source)
    meta = document.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise _fail(source, "$.meta", "expected an object")
    return Program(schedule, queues, waits, meta)


def program_to_dict(program: Program) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format": PROGRAM_FORMAT, "schedule": schedule_to_dict(program.schedule),
        "queues": {name: list(ops) for name, ops in program.queues.items()},
        "waits": {name: list(preds) for name, preds in program.waits.items() if preds}}
    if program.meta is not None:
        document["meta"] = program.meta
    return document


def read_program(path: str | os.PathLike[str]) -> Program:
    source = "<stdin>" if str(path) == "-" else str(path)
    return program_from_dict(load_json_file(path), source)
