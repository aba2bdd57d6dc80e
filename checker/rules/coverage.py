"""The coverage rule: a task's ops split its iteration space exactly."""

from __future__ import annotations

from collections import defaultdict

from checker.boxes import clip_all, partition, show
from checker.model import Box, Model
from checker.report import Violation

__all__ = ["check_coverage"]


def check_coverage(m: Model) -> list[Violation]:
    """COVERAGE: per task with a ``space``, the ``space`` boxes of its ops partition it:
    every op box has the task's rank and lies inside it, no two intersect, and together
    they cover every point. Ops without a ``space`` take no part; empty boxes cover
    nothing. This is a property of the problem alone, so unscheduled ops count too.
    """
    members: dict[str, list[tuple[str, Box]]] = defaultdict(list)
    for name, op in m.ops.items():
        if op.space is not None:
            members[op.task].append((name, op.space))
    out = []
    for task_name, task in m.tasks.items():
        region = task.space
        if region is None:
            continue
        ranked = []
        for name, box in members.get(task_name, []):
            if len(box) != len(region):
                out.append(Violation("COVERAGE", f"op {name!r} has a space of rank {len(box)} "
                                     f"but task {task_name!r} has rank {len(region)}", (name,)))
            else:
                ranked.append((name, box))
        parts, corners = clip_all([box for _, box in ranked], region)
        names, boxes = [], []
        for (name, box), part in zip(ranked, parts, strict=True):
            if part is not box:
                out.append(Violation("COVERAGE", f"op {name!r} computes {show(box)}, outside "
                                     f"the space {show(region)} of task {task_name!r}", (name,)))
            if part is not None:
                names.append(name)
                boxes.append(part)
        result = partition(region, boxes, corners)
        for i, j in result.overlaps:
            out.append(Violation("COVERAGE", f"ops {names[j]!r} and {names[i]!r} of task "
                                 f"{task_name!r} both compute part of {show(boxes[i])}",
                                 (names[j], names[i])))
        if result.gapped:
            where = f", e.g. {show(result.gap)}" if result.gap else ""
            out.append(Violation("COVERAGE", f"the ops of task {task_name!r} leave part of its "
                                 f"space {show(region)} uncovered{where}"))
    return out
