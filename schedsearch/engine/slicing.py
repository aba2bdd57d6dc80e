"""Problem slicing: one task's sub-problem, the order tasks run in, the edges between them.

Why here. The search runs each task alone for its tasks-in-sequence candidate and its
per-task memory checks, and the execution paths build separate kernels from the same
slices; both need one definition of what a task's kernel holds and in which order the
kernels run. It sits in the engine, below every feature, so that the search never
imports a feature to get it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from models.errors import InputError
from models.formats import Op, Problem, Target
from schedsearch.engine import hazards
from schedsearch.engine.instance import build_instance

__all__ = ["cross_task_edges", "restrict", "task_order"]


def _refuse_shared_buffers(problem: Problem) -> None:
    """InputError (rule ``KERNELS``) naming the first buffer two tasks use."""
    owner: dict[str, str] = {}
    for name, op in problem.ops.items():
        for access in (*op.reads, *op.writes):
            if access.buffer is None:
                continue
            first = owner.setdefault(access.buffer, op.task)
            if first != op.task:
                raise InputError(f"buffer {access.buffer!r} is used by tasks {first!r} and "
                                 f"{op.task!r}; kernels cannot share on-chip buffers",
                                 source=problem.name, path=f"$.ops[{name!r}]",
                                 rule="KERNELS")


def cross_task_edges(problem: Problem) -> list[tuple[str, str]]:
    """Dependencies between ops of different tasks: ``after`` edges and DDR RAW pairs.

    A buffer shared by two tasks would tie two kernels' on-chip state together, which
    separate kernels cannot express, so it is an :class:`InputError` (rule ``KERNELS``).
    """
    _refuse_shared_buffers(problem)
    edges = {(a, b) for a, b in problem.after
             if problem.ops[a].task != problem.ops[b].task}
    writes: dict[str, list[tuple[tuple[tuple[int, int], ...], str]]] = {}
    for name, op in problem.ops.items():
        for access in op.writes:
            if access.tensor is not None and access.box is not None:
                writes.setdefault(access.tensor, []).append((access.box, name))
    for name, op in problem.ops.items():
        for access in op.reads:
            if access.tensor is None or access.box is None:
                continue
            for box, writer in writes.get(access.tensor, []):
                if problem.ops[writer].task != op.task and _intersects(box, access.box):
                    edges.add((writer, name))
    return sorted(edges)


def task_order(problem: Problem, target: Target) -> list[str]:
    """The order separate kernels run in: the tasks with ops, one after another, in the
    order the barriers of ``granularity="task"`` use (:func:`schedsearch.engine.hazards.task_order`:
    dependency order, ties by problem order). A buffer shared by two tasks is refused
    (rule ``KERNELS``, as in :func:`cross_task_edges`); a cycle is an InputError."""
    _refuse_shared_buffers(problem)
    try:
        return hazards.task_order(build_instance(problem, target))
    except InputError as error:
        raise error.with_source(problem.name) from None


def restrict(problem: Problem, task: str,
             lanes: Mapping[str, int] | None = None) -> tuple[Problem, dict[str, list[int]]]:
    """The problem a separate kernel for ``task`` solves, and each op's mode index map.

    Ops, buffers and tensors are those of the task; a tensor the task reads but does not
    write is an input of the kernel (its producer ran earlier). With ``lanes`` (the
    units the kernel holds), modes asking for a lane kind it holds none of are dropped;
    ``modes[op][i]`` is the original index of the kernel's mode ``i``.
    """
    ops: dict[str, Op] = {}
    modes: dict[str, list[int]] = {}
    for name, op in problem.ops.items():
        if op.task != task:
            continue
        keep = [i for i, mode in enumerate(op.modes)
                if lanes is None or all(lanes.get(kind, 0) >= n
                                        for kind, n in mode.lanes.items() if n > 0)]
        if not keep:
            raise InputError(f"op {name!r} has no mode that fits the lane share "
                             f"{dict(lanes or {})}", source=problem.name, rule="KERNELS")
        ops[name] = replace(op, modes=tuple(op.modes[i] for i in keep))
        modes[name] = keep
    accesses = [a for op in ops.values() for a in (*op.reads, *op.writes)]
    written = {a.tensor for op in ops.values() for a in op.writes if a.tensor is not None}
    touched_tensors = {a.tensor for a in accesses}
    touched_buffers = {a.buffer for a in accesses}
    tensors = {name: (t if name in written else replace(t, role="input"))
               for name, t in problem.tensors.items() if name in touched_tensors}
    buffers = {name: b for name, b in problem.buffers.items() if name in touched_buffers}
    after = tuple((a, b) for a, b in problem.after if a in ops and b in ops)
    sub = Problem(name=f"{problem.name}/{task}", tensors=tensors,
                  tasks={task: problem.tasks[task]}, buffers=buffers, ops=ops, after=after,
                  meta=problem.meta)
    return sub, modes


def _intersects(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> bool:
    return all(lo1 < hi2 and lo2 < hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b, strict=True))
