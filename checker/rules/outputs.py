"""Rules about DDR tensors: outputs written exactly once, and read only once written."""

from __future__ import annotations

from collections import defaultdict

from checker.boxes import Corners, Partition, clip_all, latest_writes, partition, show
from checker.model import Box, Model
from checker.report import Violation

__all__ = ["check_outputs", "check_ddr_raw"]


def check_outputs(m: Model) -> list[Violation]:
    """OUTPUT: (1) per task, its ops' writes to each tensor in its ``outputs`` cover the
    task's output box exactly once (writes are clipped to that box: what lies outside it
    is judged by clause 2); (2) every element of every ``output``/``temp`` tensor is
    written exactly once over all ops; (3) no op writes an ``input`` tensor.
    Like COVERAGE, a property of the problem: unscheduled ops count too.
    """
    writes: dict[str, list[tuple[str, str, Box]]] = defaultdict(list)
    out = []
    for name, op in m.ops.items():
        for access in op.tensor_writes:
            role = m.tensors[access.tensor].role
            if role == "input":
                out.append(Violation("OUTPUT", f"op {name!r} writes {access.tensor}"
                                     f"{show(access.box)}, but {access.tensor!r} is an input",
                                     (name,), tensors=(access.tensor,)))
            else:
                writes[access.tensor].append((name, op.task, access.box))
    # a task writing a whole tensor asks clauses 1 and 2 the same question: answer it once
    answers: dict[tuple[tuple[tuple[int, ...], ...], tuple[int, ...]], Partition] = {}

    def partition_of(region: Box, boxes: list[Box], corners: Corners | None = None
                     ) -> Partition:
        # the model's boxes are alive, so their ids are unique; a region may be a list
        key = (tuple(map(tuple, region)), tuple(map(id, boxes)))
        if key not in answers:
            answers[key] = partition(region, boxes, corners)
        return answers[key]

    for task_name, task in m.tasks.items():
        for tensor, region in (task.outputs or {}).items():
            owned = [box for _, owner, box in writes.get(tensor, []) if owner == task_name]
            clipped, corners = clip_all(owned, region)
            result = partition_of(region, [part for part in clipped if part is not None],
                                  corners)
            if result.gapped:
                where = f", e.g. {tensor}{show(result.gap)}" if result.gap else ""
                out.append(Violation("OUTPUT", f"the ops of task {task_name!r} leave part of "
                                     f"{tensor}{show(region)} unwritten{where}",
                                     tensors=(tensor,)))
    for tensor_name, tensor in m.tensors.items():
        if tensor.role == "input":
            continue
        written = writes.get(tensor_name, [])
        boxes = [box for _, _, box in written]
        result = partition_of(tuple((0, n) for n in tensor.shape), boxes)
        for i, j in result.overlaps:
            a, b = written[j][0], written[i][0]
            out.append(Violation("OUTPUT", f"ops {a!r} and {b!r} both write part of "
                                 f"{tensor_name}{show(boxes[i])}", (a, b),
                                 tensors=(tensor_name,)))
        if result.gapped:
            where = f", e.g. {tensor_name}{show(result.gap)}" if result.gap else ""
            out.append(Violation("OUTPUT", f"part of {tensor.role} tensor {tensor_name!r} is "
                                 f"never written{where}", tensors=(tensor_name,)))
    return out


def check_ddr_raw(m: Model) -> list[Violation]:
    """DDR_RAW: a read of an ``output``/``temp`` tensor region starts no earlier than the
    end of every write that produced any element of it. Per tensor, the latest-ending
    write under each read comes from the compressed grid (or a sweep), not all pairs."""
    writes: dict[str, list[tuple[str, Box, int]]] = defaultdict(list)
    reads: dict[str, list[tuple[str, Box, int]]] = defaultdict(list)
    for name, op, p in m.scheduled():
        for access in op.tensor_writes:
            writes[access.tensor].append((name, access.box, p.end))
        for access in op.tensor_reads:
            if m.tensors[access.tensor].role != "input":
                reads[access.tensor].append((name, access.box, p.start))
    out = []
    for tensor, tensor_reads in reads.items():
        produced = writes.get(tensor, [])
        latest = latest_writes([box for _, box, _ in produced], [end for _, _, end in produced],
                               [box for _, box, _ in tensor_reads])
        for (reader, box, start), found in zip(tensor_reads, latest, strict=True):
            if found is not None and found[0] > start:
                writer = produced[found[1]][0]
                out.append(Violation("DDR_RAW", f"op {reader!r} reads {tensor}{show(box)} from "
                                     f"t={start}, but op {writer!r} writes part of it until "
                                     f"t={found[0]}", (reader, writer), tensors=(tensor,),
                                     time=start))
    return out
