"""Declared task parameters: each operator states its parameters once, readers check them.

A workload task is a kind plus flat parameters; the operator module's ``PARAMS`` says
which exist, their types, defaults and limits, so a typo or a negative size is reported
with its JSON path instead of surfacing later as a wrong tiling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from models.errors import InputError
from models.jsonio import json_path

__all__ = ["REQUIRED", "Param", "read_params"]

#: Marks a parameter without a default.
REQUIRED = object()


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter: ``kind`` is ``int``, ``number``, ``str`` or ``tensor`` (a tensor name;
    its default may use ``{task}``, the task's name)."""

    kind: str
    default: Any = REQUIRED
    minimum: float | None = None
    choices: tuple[str, ...] | None = None
    help: str = ""


def read_params(spec: dict[str, Param], raw: dict[str, Any], task: str, path: str,
                source: str) -> dict[str, Any]:
    """Check ``raw`` against ``spec`` and fill defaults; InputError names the bad key."""
    def fail(where: str, message: str) -> InputError:
        return InputError(message, source=source, path=where, rule="FORMAT")

    for key in raw:
        if key not in spec:
            raise fail(json_path(path, key), f"unknown parameter {key!r}; known: "
                                             f"{', '.join(spec)}")
    result: dict[str, Any] = {}
    for key, param in spec.items():
        where = json_path(path, key)
        if key not in raw:
            if param.default is REQUIRED:
                raise fail(path, f"missing required parameter {key!r}")
            value = param.default
            result[key] = value.format(task=task) if param.kind == "tensor" else value
            continue
        value = raw[key]
        if param.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise fail(where, f"expected an integer, got {value!r}")
        elif param.kind == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise fail(where, f"expected a number, got {value!r}")
            if not math.isfinite(value):
                raise fail(where, f"expected a finite number, got {value!r}")
        elif not isinstance(value, str) or not value:
            raise fail(where, f"expected a non-empty string, got {value!r}")
        if param.minimum is not None and value < param.minimum:
            raise fail(where, f"must be >= {param.minimum}, got {value}")
        if param.choices is not None and value not in param.choices:
            raise fail(where, f"must be one of {', '.join(param.choices)}, got {value!r}")
        result[key] = value
    return result
