"""Small workloads and targets for the tuner tests (fast to tile, screen and search)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from models.formats import Memory, Target
from models.targets import load_target
from models.workload import Workload, workload_from_dict

#: A GEMM and an RMSNorm that finish in a few hundred ops at most, on hexagon-v75.
TINY = {"name": "tiny", "target": "hexagon-v75", "tasks": [
    {"name": "g0", "kind": "gemm", "M": 128, "N": 128, "K": 64},
    {"name": "r0", "kind": "rmsnorm", "rows": 64, "cols": 256}]}


def tiny(**changes: Any) -> Workload:
    """:data:`TINY`, with top-level keys replaced (``name=...``)."""
    return workload_from_dict({**TINY, **changes}, "<tiny>")


def small_vtcm(kib: int) -> Target:
    """hexagon-v75 with only ``kib`` KiB of VTCM: tasks must share on-chip memory."""
    v75 = load_target("hexagon-v75")
    return replace(v75, name=f"hexagon-v75-vtcm{kib}k",
                   memories={"VTCM": Memory(kib * 1024, 2048)})


def configured(workload: Workload, configuration: dict[str, dict[str, Any]]) -> Workload:
    """``workload`` with each task's parameters updated from ``{task: {param: value}}``."""
    return replace(workload, tasks=tuple(
        replace(task, params={**task.params, **configuration[task.name]})
        for task in workload.tasks))
