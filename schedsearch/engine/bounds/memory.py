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
  respects (:func:`necessary_edges`): ``after`` edges, the only write a buffer read can
  see to that read (buffer RAW), and every writer of a DDR ``output``/``temp`` region
  to its readers (DDR RAW);
- *resources*: the accessors' work on each lane kind and budget divided by its capacity
  (they all run inside the window), and the shortest durations of the accessors that in
  every usable mode take more than half of one lane kind or budget (no two overlap).

The second part, ``exclusion:M``, counts what cannot run beside what. Two ops are
*apart* when no legal schedule runs them at the same time: the buffers of ``M`` they
access together need more than ``round_up(C, A)`` bytes (their rounded sizes, each buffer
once; by the padding argument above), or one must end before the other starts (a path of
necessary edges). Take a set ``X`` of ops pairwise apart (found greedily, largest
footprint first) and the ops ``Y`` apart from every op of ``X``: the windows of ``X`` are
disjoint, and ``Y`` runs only outside them, so::

    T >= sum over X of its shortest durations + the least time Y needs on the resources

(lane and budget work over capacity, and chains of ops that take more than half of one
resource). On an RMSNorm whose input and output blocks fill most of VTCM, ``X`` is its
compute ops and ``Y`` every DMA transfer: they cannot overlap at all. Any such ``X``
gives a valid figure, so :mod:`schedsearch.engine.bounds.memory_parts` tries a few (a smaller op in
``X`` can leave ``Y`` empty) and keeps the best.

Only necessary orderings are used: the search's own derived order of the writers of
shared bytes (:mod:`schedsearch.engine.hazards`) is one choice among several, so a bound built
on it would hold only for schedules that make the same choice.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

from models.formats import Mode, Problem, Target
from models.validate import usable_modes
from schedsearch.engine.bounds.phases import forced_edges

__all__ = ["MemoryVolume", "Exclusion", "exclusion_sets", "reach_bits", "ordered_pairs",
           "usable_or_all", "usable_by_op", "necessary_edges", "shortest_lifetimes",
           "memory_volumes", "exclusion_bound"]


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


def necessary_edges(problem: Problem) -> set[tuple[str, str]]:
    """Pairs ``(pred, succ)`` of op names with ``succ.start >= pred.end`` in every legal
    schedule: :func:`~schedsearch.engine.bounds.phases.forced_edges` by name."""
    names = list(problem.ops)
    return {(names[pred], names[succ]) for pred, succ in forced_edges(problem).tolist()}


def usable_or_all(modes: tuple[Mode, ...], target: Target) -> list[Mode]:
    """An op's usable modes (all of them if none is: validation reports that)."""
    usable = usable_modes(modes, target)
    return [modes[i] for i in usable] or list(modes)


def usable_by_op(problem: Problem, target: Target) -> dict[str, list[Mode]]:
    """:func:`usable_or_all` of every op, found once for all the memory parts."""
    return {name: usable_or_all(op.modes, target) for name, op in problem.ops.items()}


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
                       edges: set[tuple[str, str]] | None = None,
                       usable: dict[str, list[Mode]] | None = None) -> dict[str, int]:
    """Per buffer, the least length of its ``[alloc, free)`` window in any legal schedule
    (see the module docstring); ``edges`` defaults to :func:`necessary_edges`."""
    edges = necessary_edges(problem) if edges is None else edges
    usable = usable_by_op(problem, target) if usable is None else usable
    graph = nx.DiGraph()
    graph.add_nodes_from(problem.ops)
    graph.add_edges_from(edges)
    rank = {name: i for i, name in enumerate(nx.topological_sort(graph))}
    shortest = {name: min(mode.duration for mode in usable[name]) for name in problem.ops}
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
        span = _resource_span(((name, usable[name]) for name in ops), target)
        lives[buffer] = max(max(finish.values(), default=0), span)
    return lives


def memory_volumes(problem: Problem, target: Target,
                   edges: set[tuple[str, str]] | None = None,
                   usable: dict[str, list[Mode]] | None = None) -> list[MemoryVolume]:
    """Per memory of the target that some buffer uses, its :class:`MemoryVolume`."""
    lives = shortest_lifetimes(problem, target, edges, usable)
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


def reach_bits(problem: Problem, edges: set[tuple[str, str]]
               ) -> tuple[dict[str, int], dict[str, int]]:
    """Per op, the ops that must end before it starts and those that must start after it
    ends (paths of necessary edges), each as a bit set over op indices."""
    index = {name: i for i, name in enumerate(problem.ops)}
    graph = nx.DiGraph()
    graph.add_nodes_from(problem.ops)
    graph.add_edges_from(edges)
    order = list(nx.topological_sort(graph))
    after: dict[str, int] = {}
    for name in reversed(order):
        bits = 0
        for succ in graph.successors(name):
            bits |= after[succ] | (1 << index[succ])
        after[name] = bits
    before: dict[str, int] = {}
    for name in order:
        bits = 0
        for pred in graph.predecessors(name):
            bits |= before[pred] | (1 << index[pred])
        before[name] = bits
    return before, after


def ordered_pairs(problem: Problem, edges: set[tuple[str, str]]) -> dict[str, int]:
    """Per op, the ops ordered with it by necessary edges (before it or after it), as a
    bit set over op indices."""
    before, after = reach_bits(problem, edges)
    return {name: after[name] | before[name] for name in problem.ops}


@dataclass(frozen=True, slots=True)
class Exclusion:
    """The sets behind ``exclusion:M``: ``chosen`` (X, pairwise apart), ``rest`` (Y, apart
    from every op of X), and the memory's figures they were found with: its rounded
    ``space``, each buffer's ``rounded`` size, the buffers of M each op ``held`` and its
    ``footprint`` (their rounded sizes summed)."""

    chosen: list[str]
    rest: list[str]
    space: int
    rounded: dict[str, int]
    held: dict[str, frozenset[str]]
    footprint: dict[str, int]


def exclusion_sets(problem: Problem, target: Target, memory: str,
                   edges: set[tuple[str, str]],
                   ordered: dict[str, int] | None = None, least: int = 0) -> Exclusion:
    """X and Y of the ``exclusion:M`` part for ``memory`` (see the module docstring);
    ``ordered`` is :func:`ordered_pairs` when the caller has it. X is drawn from the ops
    of footprint at least ``least`` (and more than half the space)."""
    spec = target.memories[memory]
    space = _round_up(spec.capacity_bytes, spec.alignment_bytes)
    rounded = {name: _round_up(b.size, spec.alignment_bytes)
               for name, b in problem.buffers.items() if b.memory == memory}
    names = list(problem.ops)
    index = {name: i for i, name in enumerate(names)}
    held = {name: frozenset(a.buffer for a in (*op.reads, *op.writes)
                            if a.buffer is not None and a.buffer in rounded)
            for name, op in problem.ops.items()}
    footprint = {name: sum(rounded[b] for b in buffers) for name, buffers in held.items()}
    users: dict[str, list[str]] = defaultdict(list)
    for name, buffers in held.items():
        for b in buffers:
            users[b].append(name)
    if ordered is None:
        ordered = ordered_pairs(problem, edges)

    def together(a: str, b: str) -> int:
        """The rounded bytes ``a`` and ``b`` hold together."""
        return footprint[a] + footprint[b] - sum(rounded[x] for x in held[a] & held[b])

    # X: ops of more than half the space each (so pairwise apart unless they share
    # buffers), largest first, kept when apart from every op already kept.
    chosen: list[str] = []
    bits = 0
    kept: set[str] = set()  # the buffers X's ops hold
    smallest = space
    for name in sorted((n for n in names if 2 * footprint[n] > space
                        and footprint[n] >= least),
                       key=lambda n: (-footprint[n], index[n])):
        shared = sum(rounded[b] for b in held[name] & kept)
        if footprint[name] + smallest - shared <= space and not all(
                together(name, o) > space or ordered[name] >> index[o] & 1
                for b in held[name] & kept for o in users[b] if bits >> index[o] & 1):
            continue
        chosen.append(name)
        bits |= 1 << index[name]
        kept |= held[name]
        smallest = footprint[name]
    rest: list[str] = []
    if chosen:
        # Y: apart from every op of X. Of the X ops that share no buffer with y, those
        # of footprint <= space - footprint(y) are apart from y only if ordered with it;
        # those that share one are checked one by one.
        by_size = sorted(chosen, key=footprint.__getitem__)
        sizes = [footprint[x] for x in by_size]
        prefix = [0]
        for x in by_size:
            prefix.append(prefix[-1] | 1 << index[x])
        for name in names:
            if bits >> index[name] & 1:
                continue
            need = prefix[bisect.bisect_right(sizes, space - footprint[name])]
            for o in {o for b in held[name] & kept for o in users[b]
                      if bits >> index[o] & 1}:
                if together(name, o) > space:
                    need &= ~(1 << index[o])
                else:
                    need |= 1 << index[o]
            if need & ~ordered[name] == 0:
                rest.append(name)
    return Exclusion(chosen, rest, space, rounded, held, footprint)


def exclusion_bound(target: Target, sets: Exclusion, usable: dict[str, list[Mode]]) -> int:
    """The ``exclusion:M`` part for the memory of ``sets`` (see the module docstring)."""
    if not sets.chosen:
        return 0
    shortest = sum(min(m.duration for m in usable[x]) for x in sets.chosen)
    return shortest + _resource_span(((name, usable[name]) for name in sets.rest), target)
