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

``phases:K``: a *gate* is an op that is not a K-op. Gates are bounded in dependency
order, each ``E(g)`` a lower bound on its end, and every op carries ``est``, a lower
bound on its start: its head, raised to ``E(g) + path(g to its start)`` for every gate
``g`` bounded so far that it depends on. For a gate ``g`` and each resource R (every
lane kind and budget, with capacity ``c_R`` and least work ``w_R``), the ops R works
on that ``g`` waits for and whose ``est`` is at least ``r`` start at ``r`` or later, do
their work on R, and end at least ``path(s, g)`` before ``g`` ends, so::

    E(g) >= max(head(g) + d(g),
                E(g') + path(g', g)                           for each earlier g' -> g,
                r + ceil(w_R(those ops) / c_R) + min path(s, g)     for each R and r)
    makespan >= E(g) + tail(g),
                r + ceil(w_K(ops with est >= r) / c) + min tail     for each r

(the thresholds ``r`` are the ``est`` values themselves: one sort and running sums per
gate and resource). With R = K and ``r`` the earliest start of the K-ops between an
earlier gate and ``g`` (a *segment*), this is the chain of phases: a chain ``g1 -> g2
-> ... -> gm`` cuts K's work into phases and adds the forced waits between them. With R
the DDR bandwidth or the DMA queues it counts the traffic that crosses a phase boundary
(the activations stored and loaded again between two GEMM phases), which a path at the
shortest durations lets run side by side. Each step holds for every legal schedule, so
``E(g) <= end(g)`` and ``est <= start`` by induction, and any set of gates gives a valid
figure; ``phases:K`` is at least ``head_tail:K``.

Speed. Which gates to try is a heuristic (:func:`_choose_gates`): up to
:data:`MAX_GATES` per kind ranked by the shortest forced wait through the gate minus
the K work unordered with it over ``c`` (counted on a :func:`_sample` of the K-ops), one
per distinct split of the sample into ancestors and descendants, and the
:data:`CROSSING_GATES` and :data:`LEAD_GATES` that the traffic across a boundary needs
(:func:`_crossing_gates`). Paths from and to all chosen gates are found at once, as a
matrix of ops by gates, one vectorised step per dependency level (:class:`_Pass`); the
chain is then one pass over the gates in dependency order.
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

#: Gates added per kind for the traffic that crosses phase boundaries
#: (:func:`_crossing_gates`): the chain's cost grows with the gates, and on the bundled
#: prefill layers these many reach most of what a gate per op off K does (Llama-3.2-1B
#: prefill v75: 4,012,637 of 4,015,382 with all 876, at a twentieth of the time).
CROSSING_GATES = 64
LEAD_GATES = 16

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
    each op, each op's ``head`` and ``tail`` (see the module docstring; :mod:`.ends`
    raises them where a small problem proves more), its ``level`` (the most edges on a
    path to it: a predecessor's is lower), the forced ``edges`` (pairs of op indices) and
    the two sweeps that find paths (``forward`` feeds each op from its predecessors, ``backward``
    from its successors)."""

    duration: np.ndarray
    head: np.ndarray
    tail: np.ndarray
    level: np.ndarray
    edges: np.ndarray
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
    least ``duration * units`` over its usable modes (``work``), per budget the least
    ``duration * draw`` (``draw``). A mode is usable when it asks no more units than the
    target has (UNITS) and, unless it takes no time, draws no more than each budget's
    capacity."""

    duration: np.ndarray
    work: dict[str, np.ndarray]
    draw: dict[str, np.ndarray]

    def resources(self, target: Target) -> list[tuple[np.ndarray, int]]:
        """Each lane kind and budget some op uses: its per-op least work and capacity."""
        found = [*((self.work[k], n) for k, n in target.lanes.items()),
                 *((self.draw[b], c) for b, c in target.budgets.items())]
        return [(work, capacity) for work, capacity in found
                if capacity > 0 and work.any()]


def op_tables(problem: Problem, target: Target) -> OpTables:
    lanes, budgets = target.lanes, target.budgets
    duration = []
    work: dict[str, list[int]] = {kind: [] for kind in lanes}
    draw: dict[str, list[int]] = {budget: [] for budget in budgets}
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
        for budget, column in draw.items():
            column.append(min(m.duration * m.budgets.get(budget, 0) for m in usable))
    return OpTables(np.array(duration, dtype=np.int64),
                    {kind: np.array(column, dtype=np.int64) for kind, column in work.items()},
                    {budget: np.array(column, dtype=np.int64)
                     for budget, column in draw.items()})


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
    return ForcedOrder(duration, end - duration, rest - duration, levels, pairs, forward,
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
    """Gates for kind K: up to ``limit`` best first by a quick estimate of what each adds
    alone (:func:`_phase_gates`), then the ops whose bounds carry the other resources'
    work across a phase boundary (:func:`_crossing_gates`); none at all if ``limit`` is 0."""
    if limit == 0:
        return np.zeros(0, dtype=np.int64)
    is_k = work > 0
    candidates = np.flatnonzero(~is_k)
    sample, weight = _sample(order, work, kops)
    before, after = _k_reach(order, sample)
    weight = weight.astype(np.float64)
    ancestors = _weighed(before[candidates], weight)
    descendants = _weighed(after[candidates], weight)
    gain = _k_gaps(order, is_k)[candidates] - (weight.sum() - ancestors - descendants) / count
    phase = _phase_gates(candidates, before, after, gain, limit)
    crossing = _crossing_gates(candidates, ancestors, descendants)
    return np.unique(np.concatenate([phase, crossing]))


def _phase_gates(candidates: np.ndarray, before: np.ndarray, after: np.ndarray,
                 gain: np.ndarray, limit: int) -> np.ndarray:
    """Up to ``limit`` of ``candidates`` by ``gain`` (the shortest wait a gate forces,
    :func:`_k_gaps`, minus the K work unordered with it over the count, on the sample):
    one per distinct split of the sample into its ancestors and descendants, and only
    those with both."""
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


def _crossing_gates(candidates: np.ndarray, ancestors: np.ndarray,
                    descendants: np.ndarray) -> np.ndarray:
    """The :data:`CROSSING_GATES` candidates with the most K work on both sides (the
    smaller of their sampled K ancestors' and descendants' work), and the
    :data:`LEAD_GATES` with no K ancestors and the most K work after them.

    Why. Between two GEMM phases the DDR and the DMA queues carry the activations
    across (a Llama MLP's products, stored and loaded again), and a chain step counts
    that traffic only if the ops it crosses have bounds that know the phase before them
    ran: the loads and vector ops there, each with a split of the K-ops that
    :func:`_phase_gates` keeps only once. Before the first phase, the loads of the
    first RMSNorm likewise. On the bundled prefill layers these raise ``phases:HMX`` by
    0.2-0.4 %, where a gate per op that is not on K raises it by under 0.1 % more at
    twenty times the cost."""
    both = (ancestors > 0) & (descendants > 0)
    ranked = np.argsort(-np.minimum(ancestors, descendants), kind="stable")
    crossing = ranked[both[ranked]][:CROSSING_GATES]
    leads = (ancestors == 0) & (descendants > 0)
    ranked = np.argsort(-descendants, kind="stable")
    return candidates[np.concatenate([crossing, ranked[leads[ranked]][:LEAD_GATES]])]


def _energetic(est: np.ndarray, w: np.ndarray, count: int, rest: np.ndarray) -> int:
    """The largest ``r + ceil(W(r) / count) + min rest`` over thresholds ``r``, where
    ``W(r)`` and the minimum are over the ops with ``est >= r``: those ops start at ``r``
    or later, do their work on ``count`` units, and then need ``rest`` more."""
    order = np.argsort(-est, kind="stable")
    work = np.cumsum(w[order])
    rest = np.minimum.accumulate(rest[order])
    return int((est[order] + _ceil_div(work, count) + rest).max())


@dataclass(slots=True)
class _Caught:
    """One resource (a lane kind or a budget) in a chain of gates: its ops (those with
    least work > 0, ``w``) and ``count``, their forced paths from and to every gate,
    and ``est``: each op's earliest start from its head and the gates bounded so far.
    For the chain's own kind also ``earliest``, per op and gate, its earliest start
    given that gate's bound alone (for the segments between two gates)."""

    w: np.ndarray
    count: int
    head: np.ndarray
    tail: np.ndarray
    after_gate: np.ndarray  # (ops, gates): the op depends on the gate
    gate_to_start: np.ndarray  # the gate's end -> the op's start
    before_gate: np.ndarray  # the gate depends on the op
    end_to_gate: np.ndarray  # the op's end -> the gate's end
    est: np.ndarray
    earliest: np.ndarray | None

    def into_gate(self, j: int, earlier: np.ndarray) -> int:
        """A bound on gate ``j``'s end from this resource's work on the ops it waits for
        (:func:`_energetic`, their path to the gate's end after them) and, with
        ``earliest``, on each segment from one of the ``earlier`` gates; 0 if none."""
        ancestors = self.before_gate[:, j]
        if not ancestors.any():
            return 0
        bound = _energetic(self.est[ancestors], self.w[ancestors], self.count,
                           self.end_to_gate[ancestors, j])
        if self.earliest is None or not len(earlier):
            return bound
        segment = self.after_gate[:, earlier] & ancestors[:, None]
        some = segment.any(axis=0)
        if some.any():
            segment = segment[:, some]
            first = np.where(segment, self.earliest[:, earlier[some]], _FAR).min(axis=0)
            last = np.where(segment, self.end_to_gate[:, j, None], _FAR).min(axis=0)
            phase = first + _ceil_div(self.w @ segment, self.count) + last
            bound = max(bound, int(phase.max()))
        return bound

    def after(self, j: int, bound: int) -> int:
        """Gate ``j`` ends at ``bound`` or later, so its descendants start later; with
        ``earliest``, a bound on the makespan from their work after it (else 0)."""
        descendants = self.after_gate[:, j]
        later = np.where(descendants, np.maximum(self.head, bound + self.gate_to_start[:, j]),
                         _FAR)
        self.est[descendants] = np.maximum(self.est[descendants], later[descendants])
        if self.earliest is None or not descendants.any():
            return 0
        self.earliest[:, j] = later
        return int(later[descendants].min() + _ceil_div(self.w[descendants].sum(), self.count)
                   + self.tail[descendants].min())

    def makespan(self) -> int:
        """A bound on the makespan from this resource's work and its ops' tails."""
        return _energetic(self.est, self.w, self.count, self.tail)


def _chain_bound(order: ForcedOrder, resources: list[tuple[np.ndarray, int]],
                 own: np.ndarray, gates: np.ndarray) -> int:
    """The longest chain of ``gates`` (see ``phases:K`` in the module docstring), each
    step counting the work that gates wait for on every one of ``resources`` (per op
    least work, capacity), and on the chain's kind (its work ``own``, which must be one
    of them) the segments between two gates and the work after the last; 0 without
    gates. (The other resources' work after the gates is ``windows``' and ``energy``'s:
    here it would name K for what K does not do.) Paths from and to every
    gate are found in one sweep each, as matrices of nodes by gates."""
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
    caught = []
    for work, count in resources:
        ops = np.flatnonzero(work > 0)
        own_duration = duration[ops, None]
        caught.append(_Caught(
            work[ops], count, head[ops], tail[ops], from_gate[ops] >= 0,
            from_gate[ops] - own_duration, to_gate[ops] >= 0, to_gate[ops] - own_duration,
            head[ops].copy(),
            np.full((len(ops), len(gates)), _FAR) if work is own else None))
    between = from_gate[gates]  # [b, a]: gate a's end -> gate b's end
    end = np.zeros(len(gates), dtype=np.int64)  # E(gate)
    best = 0
    for j in np.argsort(order.level[gates], kind="stable"):  # predecessors first
        gate = gates[j]
        bound = head[gate] + duration[gate]
        earlier = np.flatnonzero(between[j] >= 0)
        earlier = earlier[earlier != j]
        if len(earlier):
            bound = max(bound, int((end[earlier] + between[j, earlier]).max()))
        bound = max([bound, *(resource.into_gate(j, earlier) for resource in caught)])
        end[j] = bound
        best = max([best, bound + tail[gate], *(resource.after(j, bound) for resource in caught)])
    return int(max([best, *(resource.makespan() for resource in caught
                              if resource.earliest is not None)]))


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
    resources = tables.resources(target)
    for kind, count in target.lanes.items():
        work = tables.work[kind]
        kops = np.flatnonzero(work > 0)
        if not len(kops):
            continue
        head_tail = int(order.head[kops].min() + _ceil_div(int(work[kops].sum()), count)
                        + order.tail[kops].min())
        gates = _choose_gates(order, work, kops, count, max_gates)
        parts[f"head_tail:{kind}"] = head_tail
        parts[f"phases:{kind}"] = max(head_tail, _chain_bound(order, resources, work, gates))
    return parts
