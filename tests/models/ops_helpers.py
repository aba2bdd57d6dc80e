"""Tiling a single task for the operator tests."""

from __future__ import annotations

from typing import Any

from models.formats import Problem
from models.ops import KINDS
from models.ops.params import read_params
from models.targets import load_target
from models.workload import Workload, WorkloadTask, tile


def one_task(kind: str, target: str = "hexagon-v75", name: str = "t0",
             **params: Any) -> Problem:
    """The problem of a workload holding one task of ``kind``."""
    task = WorkloadTask(name, kind, read_params(KINDS[kind].PARAMS, params, name, "$", "<t>"))
    return tile(Workload("w", target, (task,)), load_target(target))
