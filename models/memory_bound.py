"""The memory part of the lower bound: address space times time, per memory.

Why. Where on-chip memory binds, a schedule waits for space, not for lanes or bandwidth,
and a bound that knows only lanes and budgets makes such a schedule look bad when it is
good (or good when it is bad). The part here is the memory analogue of the lane work
bound: a memory of capacity ``C`` offers at most ``C * T`` byte-ticks over a makespan
``T``, and every buffer must hold its bytes for at least its *shortest lifetime*.

The rule, for each memory ``M`` with alignment ``A`` (``memory:M``)::

    T >= ceil( sum over buffers b of M of round_up(size_b, A) * life_b  /  round_up(C, A) )

Padding. Every offset in ``M`` is a multiple of ``A`` (MEM_RANGE), so of the buffers live
at one instant, sorted by offset, each ends at most at the next one's offset rounded down,
i.e. takes ``round_up(size, A)`` bytes of address space, and the top one ends within
``round_up(C, A)``. Their rounded sizes therefore sum to at most ``round_up(C, A)``.

Shortest lifetime ``life_b``. A buffer's window ``[alloc, free)`` contains the window of
every op that accesses it (LIFETIME), so it lasts at least as long as any chain of its
accessors that must run one after another, each at its shortest usable mode. Two kinds of
chain are counted, and the larger is taken:

- *precedence*: the longest path among the accessors along edges every legal schedule
  respects (:func:`necessary_edges`): ``after`` edges, the single writer of a value to
  its readers (buffer RAW), and every writer of a DDR ``output``/``temp`` region to its
  readers (DDR RAW);
- *resources*: the accessors' work on each lane kind and budget divided by its capacity
  (they all run inside the window), and the shortest durations of the accessors that in
  every usable mode take more than half of one lane kind or budget (no two overlap).

Only necessary orderings are used: the search's own derived order of the writers of
shared bytes (:mod:`schedsearch.hazards`) is one choice among several, so a bound built
on it would hold only for schedules that make the same choice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

from models.formats import Access, Box, Mode, Problem, Target
from models.validate import usable_modes

__all__ = ["MemoryVolume", "necessary_edges", "shortest_lifetimes", "memory_volumes",
           "memory_bound_parts"]


@dataclass(frozen=True, slots=True)
class MemoryVolume:
    """One memory's figures: byte-ticks its buffers need at least (sizes rounded up to the
    alignment), the address space it offers (capacity rounded up), and the bound
    ``ceil(volume / space)``."""

    memory: str
    volume: int
    space: int

    @property
    def bound(self) -> int:
        return -(-self.volume // self.space) if self.space else 0


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def _boxes_intersect(a: Box, b: Box) -> bool:
    return all(lo1 < hi2 and lo2 < hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b, strict=True))


def _byte_range(access: Access, size: int) -> tuple[int, int]:
    return access.bytes if access.bytes is not None else (0, size)


def necessary_edges(problem: Problem) -> set[tuple[str, str]]:
    """Pairs ``(pred, succ)`` with ``succ.start >= pred.end`` in every legal schedule:
    ``after`` edges; buffer RAW where exactly one op writes the value a read expects (with
    bytes covering the read), since STALE_READ wants that write to have ended; DDR RAW
    from every write of an ``output``/``temp`` region to every read intersecting it."""
    edges = set(problem.after)
    writers: dict[tuple[str, str], list[tuple[str, tuple[int, int]]]] = defaultdict(list)
    tensor_writes: dict[str, list[tuple[str, Box]]] = defaultdict(list)
    for name, op in problem.ops.items():
        for access in op.writes:
            if access.buffer is not None and access.value is not None:
                size = problem.buffers[access.buffer].size
                writers[(access.buffer, access.value)].append(
                    (name, _byte_range(access, size)))
            elif access.tensor is not None and access.box is not None:
                tensor_writes[access.tensor].append((name, access.box))
    for name, op in problem.ops.items():
        for access in op.reads:
            if access.buffer is not None and access.value is not None:
                found = writers.get((access.buffer, access.value), [])
                lo, hi = _byte_range(access, problem.buffers[access.buffer].size)
                if len(found) == 1 and found[0][0] != name and \
                        found[0][1][0] <= lo and hi <= found[0][1][1]:
                    edges.add((found[0][0], name))
            elif access.tensor is not None and access.box is not None and \
                    problem.tensors[access.tensor].role in ("output", "temp"):
                edges.update((writer, name) for writer, box in tensor_writes[access.tensor]
                             if writer != name and _boxes_intersect(box, access.box))
    return edges


def _modes(modes: tuple[Mode, ...], target: Target) -> list[Mode]:
    usable = usable_modes(modes, target)
    return [modes[i] for i in usable] or list(modes)


def _resource_span(accessors: Iterable[tuple[str, list[Mode]]], target: Target) -> int:
    """The least time that ``accessors`` (each with its usable modes) need together on the
    target's lanes and budgets: work over capacity, and the chain of ops that each take
    more than half of one resource in every mode."""
    span = 0
    resources = [("lanes", k, n) for k, n in target.lanes.items()]
    resources += [("budgets", b, c) for b, c in target.budgets.items()]
    listed = list(accessors)
    for table, name, capacity in resources:
        if capacity <= 0:
            continue
        work = chain = 0
        for _, modes in listed:
            asks = [getattr(mode, table).get(name, 0) for mode in modes]
            work += min(mode.duration * ask for mode, ask in zip(modes, asks, strict=True))
            if all(2 * ask > capacity for ask in asks):
                chain += min(mode.duration for mode in modes)
        span = max(span, -(-work // capacity), chain)
    return span


def shortest_lifetimes(problem: Problem, target: Target,
                       edges: set[tuple[str, str]] | None = None) -> dict[str, int]:
    """Per buffer, the least length of its ``[alloc, free)`` window in any legal schedule
    (see the module docstring); ``edges`` defaults to :func:`necessary_edges`."""
    edges = necessary_edges(problem) if edges is None else edges
    graph = nx.DiGraph()
    graph.add_nodes_from(problem.ops)
    graph.add_edges_from(edges)
    rank = {name: i for i, name in enumerate(nx.topological_sort(graph))}
    shortest = {name: min(mode.duration for mode in _modes(op.modes, target))
                for name, op in problem.ops.items()}
    accessors: dict[str, set[str]] = defaultdict(set)
    for name, op in problem.ops.items():
        for access in (*op.reads, *op.writes):
            if access.buffer is not None:
                accessors[access.buffer].add(name)
    lives = {}
    for buffer in problem.buffers:
        ops = sorted(accessors.get(buffer, ()), key=rank.__getitem__)
        among = set(ops)
        finish: dict[str, int] = {}
        for name in ops:  # longest path among the accessors, direct edges only
            start = max((finish[p] for p in graph.predecessors(name) if p in among),
                        default=0)
            finish[name] = start + shortest[name]
        span = _resource_span(((name, _modes(problem.ops[name].modes, target))
                               for name in ops), target)
        lives[buffer] = max(max(finish.values(), default=0), span)
    return lives


def memory_volumes(problem: Problem, target: Target) -> list[MemoryVolume]:
    """Per memory of the target that some buffer uses, its :class:`MemoryVolume`."""
    lives = shortest_lifetimes(problem, target)
    volume: dict[str, int] = defaultdict(int)
    for name, buffer in problem.buffers.items():
        memory = target.memories[buffer.memory]
        volume[buffer.memory] += _round_up(buffer.size, memory.alignment_bytes) * lives[name]
    result = []
    for name in sorted(volume):
        memory = target.memories[name]
        result.append(MemoryVolume(name, volume[name],
                                   _round_up(memory.capacity_bytes, memory.alignment_bytes)))
    return result


def memory_bound_parts(problem: Problem, target: Target) -> dict[str, int]:
    """The ``memory:M`` parts of :func:`models.bounds.lower_bound`, one per used memory."""
    return {f"memory:{v.memory}": v.bound for v in memory_volumes(problem, target)}

