"""Independent checks of a tiled problem, used by the operator and workload tests.

Written against the problem's data only (not the builder), so that a tiling bug in the
operator library cannot hide in a shared helper.
"""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np

from models.formats import Box, Problem, problem_from_dict, problem_to_dict


def _volume(box: Box) -> int:
    return math.prod(hi - lo for lo, hi in box)


def _inside(inner: Box, outer: Box) -> bool:
    return all(lo >= olo and hi <= ohi
               for (lo, hi), (olo, ohi) in zip(inner, outer, strict=True))


def _overlap(a: Box, b: Box) -> bool:
    return all(lo1 < hi2 and lo2 < hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b, strict=True))


def assert_spaces_partition(problem: Problem) -> None:
    """Per task, its ops' space boxes lie inside the task space, are pairwise disjoint and
    their volumes add up to the task's: together, an exact partition."""
    for name, task in problem.tasks.items():
        boxes = [op.space for op in problem.ops.values() if op.task == name and op.space]
        assert task.space is not None, name
        assert all(_inside(box, task.space) for box in boxes), name
        assert sum(map(_volume, boxes)) == _volume(task.space), name
        for a, b in itertools.combinations(boxes, 2):
            assert not _overlap(a, b), (name, a, b)


def assert_outputs_written_once(problem: Problem) -> None:
    """Every element of each output/temp tensor is written exactly once, each task's
    writes cover its output box exactly once, and no op writes an input tensor."""
    counts = {name: np.zeros(t.shape, dtype=np.int64) for name, t in problem.tensors.items()}
    per_task: dict[tuple[str, str], np.ndarray] = {}
    for op in problem.ops.values():
        for access in op.writes:
            if access.tensor is None:
                continue
            assert problem.tensors[access.tensor].role != "input", access.tensor
            index = tuple(slice(lo, hi) for lo, hi in access.box)
            counts[access.tensor][index] += 1
            key = (op.task, access.tensor)
            per_task.setdefault(key, np.zeros(problem.tensors[access.tensor].shape,
                                              dtype=np.int64))[index] += 1
    for name, tensor in problem.tensors.items():
        if tensor.role != "input":
            assert (counts[name] == 1).all(), name
    for task_name, task in problem.tasks.items():
        for tensor, box in (task.outputs or {}).items():
            written = per_task[(task_name, tensor)]
            index = tuple(slice(lo, hi) for lo, hi in box)
            assert (written[index] == 1).all() and written.sum() == _volume(box), task_name


def assert_reads_ordered_after_writes(problem: Problem) -> None:
    """Every buffer read of a value has exactly one op writing that value to that buffer,
    ordered before it by after edges; every read of a temp tensor region is ordered after
    every op writing part of it."""
    graph = nx.DiGraph(list(problem.after))
    graph.add_nodes_from(problem.ops)
    writers: dict[tuple[str, str | None], list[str]] = {}
    tensor_writes: dict[str, list[tuple[Box, str]]] = {}
    for name, op in problem.ops.items():
        for access in op.writes:
            if access.buffer is not None:
                writers.setdefault((access.buffer, access.value), []).append(name)
            else:
                tensor_writes.setdefault(access.tensor, []).append((access.box, name))
    for name, op in problem.ops.items():
        ancestors = nx.ancestors(graph, name)
        for access in op.reads:
            if access.buffer is not None:
                found = writers.get((access.buffer, access.value), [])
                assert len(found) == 1, (name, access)
                assert found[0] in ancestors, (name, found[0])
            else:
                for box, writer in tensor_writes.get(access.tensor, []):
                    if _overlap(box, access.box):
                        assert writer in ancestors, (name, writer)


def assert_round_trips(problem: Problem) -> None:
    assert problem_from_dict(problem_to_dict(problem)) == problem


def assert_well_tiled(problem: Problem) -> None:
    """All of the above: what the operator library promises for every task."""
    assert nx.is_directed_acyclic_graph(nx.DiGraph(list(problem.after)))
    assert all(mode.duration >= 1 for op in problem.ops.values() for mode in op.modes)
    assert_spaces_partition(problem)
    assert_outputs_written_once(problem)
    assert_reads_ordered_after_writes(problem)
    assert_round_trips(problem)
