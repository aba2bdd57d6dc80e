"""The records a workload is read into: the tasks, each a kind with its parameters.

Apart from :mod:`models.workload` (which reads workload files, and ONNX models through
:mod:`models.onnx`) so that the ONNX import can build these records without importing
the module that imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["WorkloadTask", "Workload"]


@dataclass(frozen=True, slots=True)
class WorkloadTask:
    """One task: its name, kind and parameters (checked, defaults filled in)."""

    name: str
    kind: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Workload:
    """A workload: its name, the name of its target and its tasks in order."""

    name: str
    target: str
    tasks: tuple[WorkloadTask, ...]
    source: str = "<workload>"
