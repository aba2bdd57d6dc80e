"""Checks that a problem can be scheduled on a target at all, before any search.

The format reader checks a problem on its own; this module checks it against a target:
every lane, budget and memory it names exists (``FORMAT``), every op has a mode that asks
no more than the target has and no buffer outgrows its memory (``FIT``), and the
``after`` edges have no cycle (``CYCLE``). A problem that passes may still be hard to
schedule, but it is never impossible for these reasons.
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass

import networkx as nx

from models.errors import InputError
from models.formats import Mode, Problem, Target
from models.jsonio import json_path

__all__ = ["Finding", "find_problem_error", "validate_problem", "after_graph",
           "placed_bytes", "usable_modes"]


@dataclass(frozen=True, slots=True)
class Finding:
    """Why a problem cannot run: a JSON path, a rule, a sentence, and the task concerned."""

    path: str
    rule: str
    message: str
    task: str | None = None


def after_graph(problem: Problem) -> nx.DiGraph:
    """The ops as nodes and the ``after`` edges as arcs."""
    graph = nx.DiGraph()
    graph.add_nodes_from(problem.ops)
    graph.add_edges_from(problem.after)
    return graph


def placed_bytes(sizes: list[int], alignment: int) -> int:
    """The least address span that buffers of these sizes need together in a memory whose
    offsets are all multiples of ``alignment``.

    Every buffer starts at a multiple of ``alignment``, so each buffer below the top one
    is followed by padding up to the next multiple; the top one needs only its size:
    ``sum(round_up(size)) - max(round_up(size) - size)``. (A buffer with a larger alignment
    of its own may leave more padding, never less, so this stays a lower bound.)
    """
    if not sizes:
        return 0
    rounded = [-(-size // alignment) * alignment for size in sizes]
    return sum(rounded) - max(r - size for r, size in zip(rounded, sizes, strict=True))


def usable_modes(modes: tuple[Mode, ...], target: Target) -> list[int]:
    """Indices of the modes that ask no more of any lane kind or budget than the target
    has. Only these can ever run; an op needs at least one (rule ``FIT``). A mode of
    duration 0 draws nothing at any instant (FORMATS.md: an empty window), so its budget
    draws never keep it out; its lanes still must exist in the number it lists."""
    def fits(mode: Mode) -> bool:
        return (all(n <= target.lanes.get(k, 0) for k, n in mode.lanes.items())
                and (mode.duration == 0
                     or all(n <= target.budgets.get(b, 0) for b, n in mode.budgets.items())))
    return [i for i, mode in enumerate(modes) if fits(mode)]


def find_problem_error(problem: Problem, target: Target) -> Finding | None:
    """The first reason ``problem`` cannot run on ``target``, or None."""
    buffer_task: dict[str, str] = {}
    for op in problem.ops.values():
        for access in (*op.reads, *op.writes):
            if access.buffer is not None:
                buffer_task.setdefault(access.buffer, op.task)

    for name, buffer in problem.buffers.items():
        path = json_path(json_path("$.buffers", name), "memory")
        if buffer.memory not in target.memories:
            return Finding(path, "FORMAT", f"unknown memory {buffer.memory!r}; the target "
                           f"has {', '.join(target.memories) or 'none'}", buffer_task.get(name))
        capacity = target.memories[buffer.memory].capacity_bytes
        if buffer.size > capacity:
            return Finding(json_path(json_path("$.buffers", name), "size"), "FIT",
                           f"buffer of {buffer.size} bytes is larger than {buffer.memory} "
                           f"({capacity} bytes)", buffer_task.get(name))
    for name, op in problem.ops.items():
        too_big: Finding | None = None
        for i, mode in enumerate(op.modes):
            for table, asked, what in ((target.lanes, mode.lanes, "lane kind"),
                                       (target.budgets, mode.budgets, "budget")):
                for resource, amount in asked.items():
                    if resource in table and amount <= table[resource]:
                        continue  # the usual case: no path to spell out
                    key = "lanes" if what == "lane kind" else "budgets"
                    path = json_path(json_path(json_path(json_path(
                        json_path("$.ops", name), "modes"), i), key), resource)
                    if resource not in table:
                        return Finding(path, "FORMAT", f"unknown {what} {resource!r}; the "
                                       f"target has {', '.join(table) or 'none'}", op.task)
                    if too_big is None:
                        too_big = Finding(path, "FIT", f"mode asks {amount} of {what} "
                                          f"{resource!r}, the target has {table[resource]}"
                                          f", and no other mode of the op fits", op.task)
        if too_big is not None and not usable_modes(op.modes, target):
            return too_big
        by_memory: dict[str, list[int]] = {}
        for buffer in dict.fromkeys(a.buffer for a in (*op.reads, *op.writes) if a.buffer):
            b = problem.buffers[buffer]
            by_memory.setdefault(b.memory, []).append(b.size)
        for memory, items in by_memory.items():
            limits = target.memories[memory]
            need = placed_bytes(items, limits.alignment_bytes)
            capacity = limits.capacity_bytes
            if need > capacity:
                return Finding(json_path("$.ops", name), "FIT", f"the {len(items)} buffers "
                               f"this op accesses need {need} bytes of {memory} together "
                               f"(aligned), more than its {capacity} bytes", op.task)
    # the standard library's topological sorter says quickly whether there is a cycle
    # (networkx builds a graph object first); networkx then names one
    sorter = graphlib.TopologicalSorter({name: () for name in problem.ops})
    for pred, succ in problem.after:
        sorter.add(succ, pred)
    try:
        sorter.prepare()
    except graphlib.CycleError:
        cycle = [edge[0] for edge in nx.find_cycle(after_graph(problem))]
        return Finding("$.after", "CYCLE", "after edges form a cycle: "
                       + " -> ".join([*cycle, cycle[0]]), problem.ops[cycle[0]].task)
    return None


def validate_problem(problem: Problem, target: Target, source: str = "<problem>") -> None:
    """Raise :class:`InputError` (rule ``FORMAT``, ``FIT`` or ``CYCLE``) if ``problem``
    cannot run on ``target``; see :func:`find_problem_error`."""
    finding = find_problem_error(problem, target)
    if finding is not None:
        raise InputError(finding.message, source=source, path=finding.path, rule=finding.rule)
