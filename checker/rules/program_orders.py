"""The order rules of a program (FORMATS.md, "Program"): pairs that must happen one
before the other, found by sweeps and decided in batches, never by enumerating all pairs.

Each rule yields :class:`Need` records: ``before`` must happen before ``after`` (or, when
``alternative`` is given, ``alternative[0]`` before ``alternative[1]`` will do instead).
:func:`judge` decides a batch at once with the happens-before graph. Which write a read
sees, which buffer is freed first and which ops write a byte come from the embedded
schedule (verified beforehand with the schedule rules).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

from checker.boxes import intersects, show
from checker.columns import Columns, columns
from checker.model import Box, Model
from checker.rules.program_graph import Graph

__all__ = ["Need", "judge", "after_needs", "buffer_needs", "reuse_needs", "ddr_needs"]


class Need(NamedTuple):
    """``before -> after`` (or ``alternative``) is required by rule ``code``; ``why``
    (a format string and its arguments, formatted only for a failure) says why. A plain
    tuple: a large program has hundreds of thousands of needs."""

    code: str
    before: str
    after: str
    why: tuple[Any, ...]
    buffers: tuple[str, ...] = ()
    tensors: tuple[str, ...] = ()
    alternative: tuple[str, str] | None = None

    def reason(self) -> str:
        return self.why[0].format(*self.why[1:])


_BEFORE, _AFTER = itemgetter(1), itemgetter(2)  # a Need's fields, for C-level maps
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def judge(needs: Iterable[Need], graph: Graph, index: dict[str, int]) -> list[Need]:
    """The needs the graph does not meet (each pair and code once, first reason kept).
    All are decided in one batch; only the failures are made unique (they are few)."""
    listed = list(needs)
    if not listed:
        return []
    # C-level iteration (a generator per need was a fifth of judging 300k needs)
    a = np.fromiter(map(index.__getitem__, map(_BEFORE, listed)), np.int64, len(listed))
    b = np.fromiter(map(index.__getitem__, map(_AFTER, listed)), np.int64, len(listed))
    met = graph.before(a, b)
    alt = [i for i, n in enumerate(listed) if n.alternative is not None and not met[i]]
    if alt:
        x = np.array([index[listed[i].alternative[0]] for i in alt], dtype=np.int64)
        y = np.array([index[listed[i].alternative[1]] for i in alt], dtype=np.int64)
        met[np.asarray(alt)] = graph.before(x, y)
    unique: dict[tuple[str, str, str, tuple[str, str] | None], Need] = {}
    for i in np.flatnonzero(~met).tolist():
        need = listed[i]
        unique.setdefault((need.code, need.before, need.after, need.alternative), need)
    return list(unique.values())


def after_needs(m: Model, graph: Graph, index: dict[str, int]) -> Iterator[Need]:
    """ORDER_AFTER: every ``after`` edge ``a, b`` needs ``a -> b``. The edges are asked
    about in one batch; only the unmet ones become records (met ones would add nothing
    to what :func:`judge` reports)."""
    places, ops = m.placements, m.ops
    edges = [(a, b) for a, b in m.after
             if a in places and b in places and a in ops and b in ops and a != b]
    a = np.fromiter(map(index.__getitem__, map(_FIRST, edges)), np.int64, len(edges))
    b = np.fromiter(map(index.__getitem__, map(_SECOND, edges)), np.int64, len(edges))
    for k in np.flatnonzero(~graph.before(a, b)).tolist():
        yield Need("ORDER_AFTER", *edges[k], ("the problem's after edge asks for it",))


class _Access(NamedTuple):
    op: str
    lo: int
    hi: int
    start: int
    end: int
    write: bool


def _pieces(accesses: list[_Access]) -> Iterator[tuple[int, int, tuple[_Access, ...]]]:
    """Byte pieces that no access boundary splits, with the accesses covering each
    (one sweep over the sorted boundaries). Each piece gets its own tuple: the caller
    keeps them, so the sweep's working list must never be handed out."""
    lo, hi = accesses[0].lo, accesses[0].hi
    if all(a.lo == lo and a.hi == hi for a in accesses):  # the common buffer: one range
        yield lo, hi, tuple(accesses)
        return
    cuts = sorted({a.lo for a in accesses} | {a.hi for a in accesses})
    by_lo = sorted(accesses, key=lambda a: a.lo)
    live: list[_Access] = []
    k = 0
    for lo, hi in zip(cuts, cuts[1:], strict=False):
        live = [a for a in live if a.hi > lo]
        while k < len(by_lo) and by_lo[k].lo <= lo:
            live.append(by_lo[k])
            k += 1
        if live:
            yield lo, hi, tuple(live)


def buffer_needs(m: Model, graph: Graph, index: dict[str, int]) -> Iterator[Need]:
    """ORDER_WAW: any two writers of a byte are ordered. Sorted by topological rank,
    each writer must reach the next; then they form a chain, and where a consecutive
    pair is unordered, that pair is a violation (the later one cannot reach the earlier).

    ORDER_RAW: a read of a byte needs the write it sees (among the other ops' writes of
    the byte, the latest to end by the read's start) before it, and every other writer
    of the byte (the reader aside) before that write or after the read. Where the
    writers form a chain this is: the seen write before the read, and the read before
    the first writer after the seen one in the chain that is not the reader; elsewhere
    each other writer is asked about.
    """
    c = columns(m)
    nodes = np.array([index[name] for name in c.names], dtype=np.int64)
    unclear = ~_ordered_buffers(c, graph, nodes)
    if not unclear.any():
        return
    by_buffer = _accesses_by_buffer(c, unclear)
    rank = graph.rank.tolist()
    pieces = []
    chain_pairs: list[tuple[str, str]] = []
    # the common piece has one writer, so only what it writes is seen: its (writer,
    # reader) pairs are decided in one batch, and records are made for the unmet ones only
    raw_writers: list[int] = []
    raw_readers: list[int] = []
    for buffer, accesses in by_buffer.items():
        for lo, hi, live in _pieces(accesses):
            if len(live) == 1:  # a lone access needs no order
                continue
            writers: dict[str, _Access] = {}
            for a in live:
                if a.write:
                    writers.setdefault(a.op, a)
            chain = list(writers.values())
            pieces.append((buffer, lo, hi, live, chain, len(chain_pairs), len(raw_writers)))
            if len(chain) == 1:
                (w,) = chain
                node = index[w.op]
                for r in live:
                    if not r.write and r.op != w.op and w.end <= r.start:
                        raw_writers.append(node)
                        raw_readers.append(index[r.op])
            elif len(chain) > 1:
                chain.sort(key=lambda a: rank[index[a.op]])
                chain_pairs.extend((x.op, y.op) for x, y in zip(chain, chain[1:], strict=False))
    ordered = graph.before(
        np.fromiter(map(index.__getitem__, map(_FIRST, chain_pairs)), np.int64,
                    len(chain_pairs)),
        np.fromiter(map(index.__getitem__, map(_SECOND, chain_pairs)), np.int64,
                    len(chain_pairs))).tolist()
    raw_met = graph.before(np.asarray(raw_writers, dtype=np.int64),
                           np.asarray(raw_readers, dtype=np.int64)).tolist()
    for buffer, lo, hi, live, chain, first, raw in pieces:
        span = (buffer, lo, hi)
        if len(chain) == 1:
            (w,) = chain
            for r in live:
                if not r.write and r.op != w.op and w.end <= r.start:
                    if not raw_met[raw]:
                        yield Need("ORDER_RAW", w.op, r.op, ("{!r} reads from {!r} bytes [{}, "
                                   "{}) the value {!r} writes", r.op, *span, w.op), (buffer,))
                    raw += 1
            continue
        links = ordered[first:first + max(len(chain) - 1, 0)]
        is_chain = all(links)
        if not is_chain:
            for (x, y), ok in zip(zip(chain, chain[1:], strict=False), links, strict=True):
                if not ok:
                    yield Need("ORDER_WAW", x.op, y.op,
                               ("both write {!r} bytes [{}, {})", *span), (buffer,))
        position = {a.op: k for k, a in enumerate(chain)}
        by_end = sorted(chain, key=lambda a: a.end)
        ends = [a.end for a in by_end]
        for r in live:
            if r.write:
                continue
            i = bisect_right(ends, r.start) - 1
            while i >= 0 and by_end[i].op == r.op:
                i -= 1
            if i < 0:
                continue
            seen = by_end[i].op
            yield Need("ORDER_RAW", seen, r.op, ("{!r} reads from {!r} bytes [{}, {}) the value "
                       "{!r} writes", r.op, *span, seen), (buffer,))
            if is_chain:
                later = [a.op for a in chain[position[seen] + 1:] if a.op != r.op][:1]
            else:
                later = [a.op for a in chain if a.op not in (seen, r.op)]
            for other in later:
                yield Need("ORDER_RAW", r.op, other, ("{!r} overwrites {!r} bytes [{}, {}), "
                           "which {!r} reads from {!r}", other, *span, r.op, seen), (buffer,),
                           alternative=(other, seen))


def _accesses_by_buffer(c: Columns, wanted: np.ndarray) -> dict[str, list[_Access]]:
    """The accesses (with bytes) of the buffers ``wanted`` (a mask over buffer indices),
    per buffer, in the order of a pass over the scheduled ops (each op's reads, then its
    writes)."""
    parts = []
    for write, accesses in ((False, c.reads), (True, c.writes)):
        rows = np.flatnonzero((accesses.lo < accesses.hi) & wanted[accesses.buffer])
        parts.append((write, accesses, rows))
    op = np.concatenate([accesses.op[rows] for _, accesses, rows in parts])
    kind = np.concatenate([np.full(len(rows), write) for write, _, rows in parts])
    row = np.concatenate([rows for _, _, rows in parts])
    order = np.lexsort((row, kind, op))
    by_buffer: dict[str, list[_Access]] = defaultdict(list)
    for i, write, k in zip(op[order].tolist(), kind[order].tolist(), row[order].tolist(),
                           strict=True):
        accesses = c.writes if write else c.reads
        by_buffer[c.buffers[accesses.buffer[k]]].append(_Access(
            c.names[i], int(accesses.lo[k]), int(accesses.hi[k]), int(c.start[i]),
            int(c.end[i]), write))
    return by_buffer


def _ordered_buffers(c: Columns, graph: Graph, nodes: np.ndarray) -> np.ndarray:
    """Per buffer, ``True`` where :func:`buffer_needs` would find every need met: the
    common case, decided in vector passes (``False`` leaves the buffer to the exact pass).
    ``nodes``: each scheduled op's index in ``graph``.

    A buffer qualifies when all its accesses have one byte range (one piece), no op
    writes it twice, its writers ordered by rank each happen before the next (a chain),
    and for each read: the write it sees (the other op's writer ending last by its
    start; ties by rank, as the exact pass breaks them) happens before it, and it happens
    before the next writer along the chain that is not its own op (or that writer before
    the seen one).
    """
    ordered = np.ones(len(c.buffers), dtype=bool)
    r, w = c.reads, c.writes
    r_kept, w_kept = r.lo < r.hi, w.lo < w.hi
    buffer = np.concatenate([r.buffer[r_kept], w.buffer[w_kept]])
    by_buffer = np.argsort(buffer, kind="stable")
    b = buffer[by_buffer]
    lo = np.concatenate([r.lo[r_kept], w.lo[w_kept]])[by_buffer]
    hi = np.concatenate([r.hi[r_kept], w.hi[w_kept]])[by_buffer]
    ordered[b[1:][(b[1:] == b[:-1]) & ((lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1]))]] = False
    w_buffer, w_op = w.buffer[w_kept], w.op[w_kept]
    if len(w_op) == 0:
        return ordered  # no writes, no needs
    w_node, w_end = nodes[w_op], c.end[w_op]
    w_rank = graph.rank[w_node]
    # the chain: writers by rank; an op writing twice sits next to itself
    by_rank = np.lexsort((w_rank, w_buffer))
    chain_buffer, chain_node = w_buffer[by_rank], w_node[by_rank]
    links = np.flatnonzero(chain_buffer[1:] == chain_buffer[:-1])
    met = graph.before(chain_node[links], chain_node[links + 1])
    ordered[chain_buffer[links[~met]]] = False
    r_buffer, r_op = r.buffer[r_kept], r.op[r_kept]
    if len(r_op) == 0:
        return ordered
    # the write each read sees: a search over (buffer, end, rank)
    by_end = np.lexsort((w_rank, w_end, w_buffer))
    end_buffer, end_node = w_buffer[by_end], w_node[by_end]
    r_node, r_start = nodes[r_op], c.start[r_op]
    times, rank = np.unique(np.concatenate([w_end[by_end], r_start]), return_inverse=True)
    keys = end_buffer * len(times) + rank[:len(by_end)]
    k = np.searchsorted(keys, r_buffer * len(times) + rank[len(by_end):], side="right") - 1
    k -= (k >= 0) & (end_buffer[np.maximum(k, 0)] == r_buffer) & \
        (end_node[np.maximum(k, 0)] == r_node)  # its own write: the one before
    seeing = np.flatnonzero((k >= 0) & (end_buffer[np.maximum(k, 0)] == r_buffer))
    seen, reader, buffer = end_node[k[seeing]], r_node[seeing], r_buffer[seeing]
    met = graph.before(seen, reader)
    ordered[buffer[~met]] = False
    # the next writer along the chain after the seen one, the reader's own aside
    place = np.empty(len(by_rank), dtype=np.int64)
    place[by_rank] = np.arange(len(by_rank))
    n = len(by_rank)
    later = place[by_end[k[seeing]]] + 1
    later += (later < n) & (chain_buffer[np.minimum(later, n - 1)] == buffer) & \
        (chain_node[np.minimum(later, n - 1)] == reader)
    asked = np.flatnonzero((later < n) & (chain_buffer[np.minimum(later, n - 1)] == buffer))
    other = chain_node[later[asked]]
    met = graph.before(reader[asked], other) | graph.before(other, seen[asked])
    ordered[buffer[asked][~met]] = False
    return ordered


def reuse_needs(m: Model, graph: Graph, index: dict[str, int]) -> Iterator[Need]:
    """ORDER_REUSE: two buffers of one memory with intersecting bytes: every access of the
    one freed first (ties: allocated first, then by name) before every access of the other.

    Per memory, a sweep over address boundaries keeps the buffers covering each address
    piece; ordered by free, consecutive accessed buffers must be ordered. That suffices:
    two intersecting buffers share a piece, and on it every buffer between them is
    accessed, so their accesses chain; and a consecutive pair is itself a required one.

    A pair of buffers is not asked about all pairs of accessors: along a chain of the
    happens-before cover (:class:`Graph`) every op happens before the later ones, so of
    the first buffer's accessors only the last on each chain needs asking about, and of
    the second buffer's only the first on each chain. Those questions are asked in one
    NumPy batch; only the pairs the graph does not order become :class:`Need` records.
    """
    c = columns(m)
    accessed_buffer = np.concatenate([c.reads.buffer, c.writes.buffer])
    accessed = {c.buffers[b] for b in np.unique(accessed_buffer).tolist()}
    pairs = _reusing_pairs(m, accessed)
    if not pairs:
        return
    buffers = list(dict.fromkeys(b for pair in pairs for b in pair))
    number = {b: i for i, b in enumerate(buffers)}
    # each access's (buffer number, op index), an op maybe twice; the order within a
    # buffer does not matter (_chain_ends sorts)
    buffer_index = {b: i for i, b in enumerate(c.buffers)}
    numbered = np.full(len(c.buffers), -1, dtype=np.int64)
    numbered[[buffer_index[b] for b in buffers]] = np.arange(len(buffers))
    nodes = np.array([index[name] for name in c.names], dtype=np.int64)
    accessor = nodes[np.concatenate([c.reads.op, c.writes.op])]
    owner = numbered[accessed_buffer]
    asked_about = owner >= 0
    owner, ops = owner[asked_about], accessor[asked_about]
    last_start, last_ops = _chain_ends(graph, owner, ops, len(buffers), last=True)
    first_start, first_ops = _chain_ends(graph, owner, ops, len(buffers), last=False)
    firsts = np.fromiter((number[x] for x, _ in pairs), np.int64, len(pairs))
    seconds = np.fromiter((number[y] for _, y in pairs), np.int64, len(pairs))
    pair, a, b = _products(last_start, last_ops, firsts, first_start, first_ops, seconds)
    on, position = graph.chain, graph.position
    asked = (a != b) & ~((on[a] == on[b]) & (position[a] < position[b]))
    pair, a, b = pair[asked], a[asked], b[asked]
    unmet = np.flatnonzero(~graph.before(a, b))
    listed = list(pairs.items())
    names = list(index)
    for k in unmet.tolist():
        (first, second), (memory, lo, hi) = listed[pair[k]]
        yield Need("ORDER_REUSE", names[a[k]], names[b[k]],
                   ("{!r} reuses {} bytes [{}, {}) of {!r}, which is freed first", second,
                    memory, lo, hi, first), (first, second))


def _chain_ends(graph: Graph, owner: np.ndarray, ops: np.ndarray, groups: int, *,
                last: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per group of ``ops`` (``owner``, in any order), the last (or first) op on each chain of
    the cover: the ops grouped in order, and where each group starts (``groups + 1``)."""
    chain, position = graph.chain[ops], graph.position[ops]
    order = np.lexsort((position if last else -position, chain, owner))
    owner, chain = owner[order], chain[order]
    # the last element of each (owner, chain) run: the furthest one along the chain
    end = np.append((owner[1:] != owner[:-1]) | (chain[1:] != chain[:-1]), True)
    kept = order[end]
    return np.searchsorted(owner[end], np.arange(groups + 1)), ops[kept]


def _products(a_start: np.ndarray, a_ops: np.ndarray, a_group: np.ndarray,
              b_start: np.ndarray, b_ops: np.ndarray, b_group: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each k, every (x, y) with x in group ``a_group[k]`` of ``a_ops`` and y in
    group ``b_group[k]`` of ``b_ops``: (k, x, y) as three arrays."""
    a_count = a_start[a_group + 1] - a_start[a_group]
    b_count = b_start[b_group + 1] - b_start[b_group]
    sizes = a_count * b_count
    k = np.repeat(np.arange(len(sizes)), sizes)
    within = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    x = a_ops[a_start[a_group[k]] + within // b_count[k]]
    y = b_ops[b_start[b_group[k]] + within % b_count[k]]
    return k, x, y


def _reusing_pairs(m: Model, accessed: set[str]
                   ) -> dict[tuple[str, str], tuple[str, int, int]]:
    """Consecutive (by free, alloc, name) accessed buffers sharing an address piece, with
    the memory and the first piece they share."""
    by_memory: dict[str, list[tuple[int, int, tuple[int, int, str]]]] = defaultdict(list)
    for name, place in m.buffer_places.items():
        buffer = m.buffers.get(name)
        if buffer is not None and name in accessed:
            by_memory[buffer.memory].append((place.offset, place.offset + buffer.size,
                                             (place.free, place.alloc, name)))
    pairs: dict[tuple[str, str], tuple[str, int, int]] = {}
    for memory, spans in by_memory.items():
        cuts = sorted({lo for lo, _, _ in spans} | {hi for _, hi, _ in spans})
        spans.sort(key=lambda s: s[0])
        live: list[tuple[int, int, tuple[int, int, str]]] = []
        k = 0
        for lo, hi in zip(cuts, cuts[1:], strict=False):
            live = [s for s in live if s[1] > lo]
            while k < len(spans) and spans[k][0] <= lo:
                live.append(spans[k])
                k += 1
            keys = sorted(key for _, _, key in live)
            for x, y in zip(keys, keys[1:], strict=False):
                pairs.setdefault((x[2], y[2]), (memory, lo, hi))
    return pairs


def ddr_needs(m: Model) -> Iterator[Need]:
    """ORDER_DDR: every write of an ``output``/``temp`` tensor region before every read of
    any of it (the op's own accesses aside). Per tensor, a sweep along one dimension pairs
    writes and reads whose intervals on it intersect; the other dimensions filter. The
    dimension is the one with the most distinct intervals, so that tiles cut along any
    axis (not only the first) meet few candidates: a tensor split into n row blocks asks
    about n pairs, not n^2. (Any dimension gives the same answers; this is for speed.)"""
    boxes: dict[str, list[tuple[str, Box, int]]] = defaultdict(list)
    for name, op, _ in m.scheduled():
        for accesses, write in ((op.tensor_writes, 1), (op.tensor_reads, 0)):
            for a in accesses:
                tensor = m.tensors.get(a.tensor)
                if tensor is not None and tensor.role != "input":
                    boxes[a.tensor].append((name, a.box, write))
    for tensor, accesses in boxes.items():
        writes = sum(write for _, _, write in accesses)
        if writes in (0, len(accesses)):
            continue  # only reads, or only writes: no pair to order
        axis = _sweep_axis([box for _, box, _ in accesses])
        items = sorted((tuple(box[axis]) if box else (0, 1), write, name, box)
                       for name, box, write in accesses)
        live_writes: list[tuple[tuple[int, int], int, str, Box]] = []
        live_reads: list[tuple[tuple[int, int], int, str, Box]] = []
        for item in items:
            lo = item[0][0]
            live_writes = [w for w in live_writes if w[0][1] > lo]
            live_reads = [r for r in live_reads if r[0][1] > lo]
            if item[1]:
                matches = [(item, r) for r in live_reads]
                live_writes.append(item)
            else:
                matches = [(w, item) for w in live_writes]
                live_reads.append(item)
            for w, r in matches:
                if w[2] != r[2] and intersects(w[3], r[3]):
                    yield Need("ORDER_DDR", w[2], r[2], ("{!r} reads {}{}, which {!r} writes "
                               "part of", r[2], tensor, show(r[3]), w[2]), tensors=(tensor,))


def _sweep_axis(boxes: list[Box]) -> int:
    """The dimension along which these boxes (of one rank) have the most distinct
    intervals (0 for rank 0)."""
    if not boxes or not boxes[0]:
        return 0
    columns = list(zip(*boxes, strict=True))
    # a column whose intervals all equal its first has one; only the others are hashed
    # (an output of shape [n] + [1] * 63 has one such column, not 64)
    return max(range(len(columns)), key=lambda k: 1 if columns[k].count(columns[k][0]) ==
               len(boxes) else len(set(map(tuple, columns[k]))))
