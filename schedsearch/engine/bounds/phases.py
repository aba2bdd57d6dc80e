"""Bound parts for the time a lane kind must wait: ``head_tail:K`` and ``phases:K``.

Why. ``lane:K`` assumes the units of K can be busy from time 0 to the end. On a
matrix-bound layer they cannot: the first weights must arrive before any GEMM starts, the
last results must be stored after the last one ends, and an RMSNorm or a softmax that
every later GEMM tile depends on leaves the matrix engine idle while it runs. These parts
add the waits that every legal schedule has.

Forced order. Only orderings that every legal schedule respects are used
(:func:`forced_edges`): ``after`` edges; buffer RAW where exactly one other op writes bytes
covering a read with a value it may see (STALE_READ: the write a read sees has ended
before it starts, and it covers the bytes and holds the value, unless either has none);
DDR RAW from every write of an ``output``/``temp`` region to every read meeting it. Not
the orders of the writers of shared bytes that :mod:`schedsearch.engine.hazards` picks:
those are one choice among several. Each op lasts at least ``d(i)``, its shortest usable
mode; its work on K, ``w(i)``, is the least ``duration * units of K`` over its usable
modes (the units it holds, for at least that long). The K-ops are those with ``w > 0``;
``c`` is the count of K.

``head(i)`` is the longest forced path from time 0 to the start of ``i``; ``tail(i)``
from the end of ``i`` to the end of the schedule; ``path(x, y)`` from the end of ``x`` to
the end of ``y`` (all at shortest durations). In any legal schedule, ``start(i) >=
head(i)``, ``end(i) <= makespan - tail(i)`` and ``end(y) >= end(x) + path(x, y)``.

``head_tail:K``: every K-op runs inside ``[min head, makespan - min tail]`` (over the
K-ops), and the units of K do at most ``c`` unit-ticks of work per tick, so::

    makespan >= min head + ceil(sum of w / c) + min tail

``phases:K``: a *gate* is an op that is not a K-op. For a gate ``g``, with ``E(g)`` a
lower bound on its end, the K-ops that must start after ``g`` ends (its K-descendants
``D``) run inside ``[min over D of max(head(s), E(g) + path to start(s)), makespan -
min tail]``, and the K-ops that must end before ``g`` ends (K-ancestors ``A``) inside
``[.., end(g) - min over A of path(s, g)]``. Between two gates ``g' -> g`` the K-ops that
descend from ``g'`` and are ancestors of ``g`` (a *segment*) are caught in between, so::

    E(g) >= max(head(g) + d(g),
                E(g') + path(g', g),
                min over S of max(head(s), E(g') + path(g' to s's start))
                  + ceil(w(S) / c) + min over S of path(s, g))        for each g' -> g
    makespan >= E(g) + [the same for the K-descendants of g, with min tail]

with the segment before the first gate bounded from the heads. This is a longest path
over the gates (a chain ``g1 -> g2 -> ... -> gm`` cuts K's work into phases and adds the
forced waits between them); each step holds for every legal schedule, so ``E(g) <=
end(g)`` by induction, and any set of gates gives a valid figure. K-ops that are in no
segment of the chain only make it weaker. ``phases:K`` is at least ``head_tail:K``.

Speed. Which gates to try is a heuristic (:func:`_choose_gates`): up to
:data:`MAX_GATES` per kind, ranked by the shortest forced wait through the gate minus
the K work unordered with it over ``c`` (counted on a :func:`_sample` of the K-ops), one
per distinct split of the sample into ancestors and descendants. Paths from and to all
chosen gates are found at once, as a matrix of ops by gates, one vectorised step per
dependency level (:class:`_Pass`); the chain is then one pass over the gates in
dependency order, each step vectorised over the earlier gates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from models.formats import Box, Problem, Target
from models.regions import BoxIndex

__all__ = ["MAX_GATES", "SAMPLE", "ForcedOrder", "OpTables", "forced_edges", "forced_order",
           "op_tables", "phase_parts"]

#: Gates tried per lane kind. The chain's longest path costs ``O(K-ops * gates^2)``;
#: 32 keeps a 10,000-op layer within a few tens of milliseconds per kind.
MAX_GATES = 32

#: K-ops that stand for all of them when gates are chosen (:func:`_sample`): the bit sets
#: of who depends on whom then take 32 bytes per op whatever the size of the problem.
SAMPLE = 256

#: "Unreachable" in the path matrices: far below any path, and no sum overflows int64.
_NONE = np.iinfo(np.int64).min // 4
#: "No such path" for shortest paths: above any sum of durations, and no sum overflows.
_FAR = np.iinfo(np.int64).max // 4


def _ceil_div(work: np.ndarray | int, count: int) -> np.ndarray | int:
    return -(-work // count)


def _only_writer(writes: Iterable[tuple[int, int, int, str | None]], reader: int,
                 lo: int, hi: int, value: str | None) -> int | None:
    """The one op other than ``reader`` among ``writes`` (op, bytes, value) whose write a
    read of bytes ``[lo, hi)`` expecting ``value`` may see, or None if there are several
    (or none)."""
    found = None
    for op, written_lo, written_hi, written in writes:
        if op != reader and written_lo <= lo and hi <= written_hi and \
                (written is None or value is None or written == value):
            if found is not None and found != op:
                return None
            found = op
    return found


def forced_edges(problem: Problem) -> np.ndarray:
    """Pairs ``(pred, succ)`` of op indices (problem order) with ``start(succ) >=
    end(pred)`` in every legal schedule (see the module docstring): an array of shape
    ``(edges, 2)``, sorted, without duplicates."""
    index = {name: i for i, name in enumerate(problem.ops)}
    edges = {(index[a], index[b]) for a, b in problem.after}
    writes: dict[str, list[tuple[int, int, int, str | None]]] = defaultdict(list)
    tensor_writes: dict[str, list[tuple[int, Box]]] = defaultdict(list)
    for i, op in enumerate(problem.ops.values()):
        for access in op.writes:
            if access.buffer is not None:
                lo, hi = access.bytes or (0, problem.buffers[access.buffer].size)
                writes[access.buffer].append((i, lo, hi, access.value))
            elif access.tensor is not None and problem.tensors[access.tensor].role != "input":
                tensor_writes[access.tensor].append((i, access.box or ()))
    regions = {tensor: BoxIndex(found) for tensor, found in tensor_writes.items()}
    for i, op in enumerate(problem.ops.values()):
        for access in op.reads:
            if access.buffer is not None:
                lo, hi = access.bytes or (0, problem.buffers[access.buffer].size)
                writer = _only_writer(writes.get(access.buffer, ()), i, lo, hi, access.value)
                if writer is not None:
                    edges.add((writer, i))
            elif access.tensor is not None and access.tensor in regions:
                edges.update((w, i) for w in regions[access.tensor].intersecting(
                    access.box or ()) if w != i)
    pairs = np.array(list(edges), dtype=np.int64).reshape(-1, 2)
    return np.unique(pairs, axis=0) if len(pairs) else pairs


@dataclass(frozen=True, slots=True)
class _Pass:
    """The edges of one sweep in dependency order: per level, ``sources`` sorted by the
    node they feed, the ``offsets`` where each such node's run starts (for ``reduceat``)
    and the ``targets``, one per run."""

    groups: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]

    def run(self, state: np.ndarray, fold: np.ufunc,
            into: Callable[[np.ndarray, np.ndarray], None]) -> None:
        """For each level in turn, fold ``state`` over each node's feeding nodes and hand
        the result to ``into(targets, folded)``, which updates ``state``."""
        for sources, offsets, targets in self.groups:
            into(targets, fold.reduceat(state[sources], offsets, axis=0))


def _pass(levels: np.ndarray, feeding: np.ndarray, fed: np.ndarray, backward: bool) -> _Pass:
    order = np.lexsort((fed, -levels[fed] if backward else levels[fed]))
    feeding, fed = feeding[order], fed[order]
    key = levels[fed]
    groups = []
    for cut in np.split(np.arange(len(fed)), np.flatnonzero(np.diff(key)) + 1):
        if len(cut) == 0:
            continue
        targets, offsets = np.unique(fed[cut], return_index=True)
        groups.append((feeding[cut], offsets, targets))
    return _Pass(tuple(groups))


@dataclass(frozen=True, slots=True)
class ForcedOrder:
    """The forced edges over ops in problem order, the shortest usable ``duration`` of
    each op, each op's ``head`` and ``tail`` (see the module docstring), its ``level``
    (the most edges on a path to it: a predecessor's is lower) and the two
    sweeps that find paths (``forward`` feeds each op from its predecessors, ``backward``
    from its successors)."""

    duration: np.ndarray
    head: np.ndarray
    tail: np.ndarray
    level: np.ndarray
    forward: _Pass
    backward: _Pass

    @property
    def n_ops(self) -> int:
        return len(self.duration)


def _ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(starts[k], stops[k])`` over ``k``."""
    lengths = stops - starts
    shift = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return shift + np.arange(lengths.sum())


def _levels(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """Each node's depth (the most edges on a path to it), or None on a cycle."""
    indegree = np.bincount(dst, minlength=n)
    order = np.argsort(src, kind="stable")
    bounds = np.searchsorted(src[order], np.arange(n + 1))
    level = np.zeros(n, dtype=np.int64)
    frontier = np.flatnonzero(indegree == 0)
    placed = depth = 0
    while len(frontier):
        placed += len(frontier)
        level[frontier] = depth
        fed = dst[order[_ranges(bounds[frontier], bounds[frontier + 1])]]
        np.subtract.at(indegree, fed, 1)
        fed = np.unique(fed)
        frontier = fed[indegree[fed] == 0]
        depth += 1
    return level if placed == n else None


@dataclass(frozen=True, slots=True)
class OpTables:
    """Per op (problem order): the shortest usable ``duration`` and, per lane kind, the
    least ``duration * units`` over its usable modes (``work``). A mode is usable when it
    asks no more units than the target has (UNITS) and, unless it takes no time, draws no
    more than each budget's capacity."""

    duration: np.ndarray
    work: dict[str, np.ndarray]


def op_tables(problem: Problem, target: Target) -> OpTables:
    lanes, budgets = target.lanes, target.budgets
    duration = []
    work: dict[str, list[int]] = {kind: [] for kind in lanes}
    for op in problem.ops.values():
        usable = op.modes if len(op.modes) == 1 else [
            m for m in op.modes
            if all(n <= lanes.get(k, 0) for k, n in m.lanes.items())
            and (m.duration == 0  # an empty window draws nothing (FORMATS.md)
                 or all(n <= budgets.get(b, 0) for b, n in m.budgets.items()))] \
            or op.modes  # none usable: validation reports it (FIT)
        duration.append(min(m.duration for m in usable))
        for kind, column in work.items():
            column.append(min(m.duration * m.lanes.get(kind, 0) for m in usable))
    return OpTables(np.array(duration, dtype=np.int64),
                     {kind: np.array(column, dtype=np.int64) for kind, column in work.items()})


def forced_order(problem: Problem, duration: np.ndarray) -> ForcedOrder | None:
    """The :class:`ForcedOrder` of ``problem`` with each op's shortest ``duration``, or
    None if the forced edges form a cycle (then no legal schedule exists, and other
    checks say why)."""
    n = len(problem.ops)
    pairs = forced_edges(problem)
    src, dst = pairs[:, 0], pairs[:, 1]
    levels = _levels(n, src, dst)
    if levels is None:
        return None
    forward, backward = _pass(levels, src, dst, False), _pass(levels, dst, src, True)
    end = duration.copy()  # head + duration

    def to_end(targets: np.ndarray, folded: np.ndarray) -> None:
        end[targets] = folded + duration[targets]

    forward.run(end, np.maximum, to_end)
    rest = duration.copy()  # duration + tail

    def to_rest(targets: np.ndarray, folded: np.ndarray) -> None:
        rest[targets] = folded + duration[targets]

    backward.run(rest, np.maximum, to_rest)
    return ForcedOrder(duration, end - duration, rest - duration, levels, forward,
                       backward)


def _k_reach(order: ForcedOrder, kops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node, the K-ops it depends on and the K-ops that depend on it, as packed bit
    sets over ``kops`` (a K-op's own bit is set in both)."""
    own = np.zeros((order.n_ops, (len(kops) + 7) // 8), dtype=np.uint8)
    position = np.arange(len(kops))
    own[kops, position >> 3] = (1 << (position & 7)).astype(np.uint8)
    before, after = own, own.copy()

    def union_into(bits: np.ndarray) -> Callable[[np.ndarray, np.ndarray], None]:
        def into(targets: np.ndarray, folded: np.ndarray) -> None:
            bits[targets] |= folded
        return into

    order.forward.run(before, np.bitwise_or, union_into(before))
    order.backward.run(after, np.bitwise_or, union_into(after))
    return before, after


def _k_gaps(order: ForcedOrder, is_k: np.ndarray) -> np.ndarray:
    """Per node, the shortest forced path from the end of a K-op it depends on, through
    it, to the start of a K-op that depends on it (:data:`_FAR` where there is none): a
    quick lower estimate of the wait it forces on K."""
    duration = order.duration

    def nearest(sweep: _Pass) -> np.ndarray:
        """Shortest path from a K-op's end to the node's start (forward), or from the
        node's end to a K-op's start (backward)."""
        through = np.where(is_k, 0, _FAR)  # the same, through the node itself
        reach = np.full(order.n_ops, _FAR)

        def into(targets: np.ndarray, folded: np.ndarray) -> None:
            reach[targets] = folded
            through[targets] = np.where(is_k[targets], 0,
                                        np.minimum(folded + duration[targets], _FAR))

        sweep.run(through, np.minimum, into)
        return reach

    return np.minimum(nearest(order.forward) + duration + nearest(order.backward), _FAR)


def _weighed(bits: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Per row of packed bit sets over the K-ops, the sum of ``weight`` over its members:
    one table of 256 sums per byte position, gathered and added up."""
    width = bits.shape[1]
    padded = np.zeros(width * 8, dtype=np.float64)
    padded[:len(weight)] = weight
    members = (np.arange(256)[:, None] >> np.arange(8)) & 1  # byte value -> its bits
    table = members @ padded.reshape(width, 8).T  # (256, width)
    return table[bits, np.arange(width)].sum(axis=1)


def _sample(order: ForcedOrder, work: np.ndarray, kops: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """At most :data:`SAMPLE` K-ops standing for all of them: the K-ops in order of head
    cut into runs of about equal length, the middle one of each run weighing the run's
    work. Splits and unordered work are then counted on them alone."""
    ranked = kops[np.argsort(order.head[kops], kind="stable")]
    cuts = np.unique(np.linspace(0, len(ranked), min(len(ranked), SAMPLE) + 1).astype(int))
    return ranked[(cuts[:-1] + cuts[1:]) // 2], np.add.reduceat(work[ranked], cuts[:-1])


def _choose_gates(order: ForcedOrder, work: np.ndarray, kops: np.ndarray, count: int,
                  limit: int) -> np.ndarray:
    """Up to ``limit`` gates for kind K, best first by a quick estimate of what each adds
    alone: the shortest wait it forces (:func:`_k_gaps`) minus the K work unordered with
    it over ``count`` (on a :func:`_sample` of the K-ops); one per distinct split of the
    sample into its ancestors and descendants, and only those with both."""
    is_k = work > 0
    candidates = np.flatnonzero(~is_k)
    sample, weight = _sample(order, work, kops)
    before, after = _k_reach(order, sample)
    ordered = (_weighed(before[candidates], weight.astype(np.float64))
               + _weighed(after[candidates], weight.astype(np.float64)))
    gain = _k_gaps(order, is_k)[candidates] - (weight.sum() - ordered) / count
    useful = (gain > 0) & before[candidates].any(axis=1) & after[candidates].any(axis=1)
    ranked = candidates[useful][np.argsort(-gain[useful], kind="stable")]
    chosen: list[int] = []
    splits: set[bytes] = set()
    for gate in ranked:
        if len(chosen) == limit:
            break
        split = before[gate].tobytes() + after[gate].tobytes()
        if split not in splits:
            splits.add(split)
            chosen.append(int(gate))
    return np.array(chosen, dtype=np.int64)


def _chain_bound(order: ForcedOrder, work: np.ndarray, kops: np.ndarray, count: int,
                 gates: np.ndarray) -> int:
    """The longest chain of ``gates`` (see ``phases:K`` in the module docstring); 0
    without gates. Paths from and to every gate are found in one sweep each, as matrices
    of nodes by gates."""
    if not len(gates):
        return 0
    duration, head, tail = order.duration, order.head, order.tail
    columns = np.arange(len(gates))
    from_gate = np.full((order.n_ops, len(gates)), _NONE)  # gate's end -> node's end
    from_gate[gates, columns] = 0
    to_gate = np.full((order.n_ops, len(gates)), _NONE)  # node's start -> gate's end
    to_gate[gates, columns] = duration[gates]

    def longer(paths: np.ndarray) -> Callable[[np.ndarray, np.ndarray], None]:
        def into(targets: np.ndarray, folded: np.ndarray) -> None:
            paths[targets] = np.maximum(paths[targets], folded + duration[targets, None])
        return into

    order.forward.run(from_gate, np.maximum, longer(from_gate))
    order.backward.run(to_gate, np.maximum, longer(to_gate))
    k_duration = duration[kops, None]
    after_gate = from_gate[kops] >= 0  # (K-ops, gates): the K-op depends on the gate
    gate_to_start = from_gate[kops] - k_duration  # gate's end -> K-op's start
    before_gate = to_gate[kops] >= 0  # the gate depends on the K-op
    end_to_gate = to_gate[kops] - k_duration  # K-op's end -> gate's end
    between = from_gate[gates]  # [b, a]: gate a's end -> gate b's end
    w, k_head, k_tail = work[kops], head[kops], tail[kops]
    earliest = np.full((len(kops), len(gates)), _FAR)  # K-op start, given the gate's end
    end = np.zeros(len(gates), dtype=np.int64)  # E(gate)
    best = 0
    for j in np.argsort(order.level[gates], kind="stable"):  # predecessors first
        gate = gates[j]
        ancestors = before_gate[:, j]
        bound = head[gate] + duration[gate]
        if ancestors.any():
            bound = max(bound, k_head[ancestors].min() + _ceil_div(w[ancestors].sum(), count)
                        + end_to_gate[ancestors, j].min())
        earlier = np.flatnonzero(between[j] >= 0)
        earlier = earlier[earlier != j]
        if len(earlier):
            bound = max(bound, int((end[earlier] + between[j, earlier]).max()))
            segment = after_gate[:, earlier] & ancestors[:, None]
            some = segment.any(axis=0)
            if some.any():
                segment = segment[:, some]
                first = np.where(segment, earliest[:, earlier[some]], _FAR).min(axis=0)
                last = np.where(segment, end_to_gate[:, j, None], _FAR).min(axis=0)
                phase = first + _ceil_div(w @ segment, count) + last
                bound = max(bound, int(phase.max()))
        end[j] = bound
        descendants = after_gate[:, j]
        earliest[:, j] = np.where(descendants, np.maximum(k_head, bound + gate_to_start[:, j]),
                                  _FAR)
        best = max(best, bound + tail[gate])
        if descendants.any():
            best = max(best, int(earliest[descendants, j].min()
                                 + _ceil_div(w[descendants].sum(), count)
                                 + k_tail[descendants].min()))
    return int(best)


def phase_parts(problem: Problem, target: Target, *, max_gates: int = MAX_GATES,
                forced: tuple[OpTables, ForcedOrder | None] | None = None
                ) -> dict[str, int]:
    """``head_tail:K`` and ``phases:K`` for each lane kind K that some op works on (see
    the module docstring); none if the forced edges form a cycle (no legal schedule).
    ``forced`` is the problem's :func:`op_tables` and :func:`forced_order` when the
    caller already has them."""
    if forced is None:
        tables = op_tables(problem, target)
        forced = tables, forced_order(problem, tables.duration)
    tables, order = forced
    if order is None:
        return {}
    parts: dict[str, int] = {}
    for kind, count in target.lanes.items():
        work = tables.work[kind]
        kops = np.flatnonzero(work > 0)
        if not len(kops):
            continue
        head_tail = int(order.head[kops].min() + _ceil_div(int(work[kops].sum()), count)
                        + order.tail[kops].min())
        gates = _choose_gates(order, work, kops, count, max_gates)
        parts[f"head_tail:{kind}"] = head_tail
        parts[f"phases:{kind}"] = max(head_tail,
                                      _chain_bound(order, work, kops, count, gates))
    return parts
