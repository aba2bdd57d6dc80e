"""A tuned workload written back as a TOML workload file (``schedsearch tune -o X.toml``).

The tuner's answer is a configuration; written as a workload (every task with its chosen
tile sizes, units and depth), it is something every other command takes as it is
(``solve``, ``compare``, ``tile``), and a diff against the original says what changed.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

from models.workload import WORKLOAD_FORMAT, Workload

__all__ = ["tuned_workload", "workload_toml"]


def tuned_workload(workload: Workload, chosen: dict[str, dict[str, Any]],
                   target: str) -> Workload:
    """``workload`` with each task's parameters set to ``chosen[task]``, on ``target``."""
    tasks = tuple(replace(task, params={**task.params, **chosen.get(task.name, {})})
                  for task in workload.tasks)
    return replace(workload, target=target, tasks=tasks)


def _value(value: Any) -> str:
    """A TOML value: strings as basic strings (JSON's escapes are TOML's), numbers,
    booleans, arrays of those."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML workloads hold finite numbers only, got {value!r}")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise ValueError(f"cannot write {value!r} in a workload file")


def workload_toml(workload: Workload) -> str:
    """The TOML text of ``workload``: ``tomllib`` reads it back to the same tasks."""
    lines = [f"format = {_value(WORKLOAD_FORMAT)}", f"name = {_value(workload.name)}",
             f"target = {_value(workload.target)}"]
    for task in workload.tasks:
        lines += ["", "[[tasks]]", f"name = {_value(task.name)}", f"kind = {_value(task.kind)}"]
        lines += [f"{key} = {_value(value)}" for key, value in task.params.items()]
    return "\n".join(lines) + "\n"
