"""Happens-before of a program: queue successions and waits, decided per pair.

``a -> b`` when a path of orders (queue successions and waits) leads from ``a`` to ``b``.
The ops are covered by *chains*, paths of the order graph built greedily in topological
order (an op continues the chain of a predecessor that is still its chain's tail,
preferring its queue predecessor, so a queue of one unit is usually one chain). Each
chain with a column gets, for every op, a vector-clock entry: the highest position in
that chain among the ops that are the op itself or happen before it. With ``a`` at
position ``i`` of a chain with a column, ``a -> b`` iff ``clock[b][chain] >= i`` and
``a != b``.

The clock table is ops x columns, so columns are capped (:data:`CLOCK_CELLS`): with
many chains (thousands of units each holding a few ops), only the longest get one, and
a chain of one op never does. From an op whose chain has no column, the successors are
searched, never past ``b`` in topological order, and an op with a column answers for
everything after it at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["CLOCK_CELLS", "Graph"]

#: A graph with more than n / _DEEP topological levels gets its clocks one edge at a time.
_DEEP = 16
#: Most entries of the clock table (ops x chains with a column): 32 MB of int32.
CLOCK_CELLS = 1 << 23


class Graph:
    """Orders over ``n`` ops: queues (lists of op indices) and extra ``(before, after)``
    edges. :attr:`cycle` is one cycle (op indices, each before the next) or ``None``;
    :meth:`before`, :attr:`chain` and :attr:`position` are only meaningful without one."""

    def __init__(self, n: int, queues: Sequence[Sequence[int]],
                 edges: Sequence[tuple[int, int]]) -> None:
        self.n = n
        heads: list[int] = []
        tails: list[int] = []
        for queue in queues:
            heads.extend(queue[:-1])
            tails.extend(queue[1:])
        for a, b in edges:  # after the queue successions: a chain prefers its queue
            heads.append(a)
            tails.append(b)
        head = np.asarray(heads, dtype=np.int64)
        tail = np.asarray(tails, dtype=np.int64)
        self.head, self.tail = head, tail
        by_head = np.argsort(head, kind="stable")
        self.out_start = np.searchsorted(head[by_head], np.arange(n + 1))
        self.out = tail[by_head]
        self.topo, level, self.cycle = self._kahn()
        self.rank = np.empty(n, dtype=np.int64)
        self.rank[self.topo] = np.arange(len(self.topo))
        self.chain = np.zeros(n, dtype=np.int64)
        self.position = np.zeros(n, dtype=np.int64)
        self.column = np.full(n, -1, dtype=np.int64)
        self.clock = np.full((n, 1), -1, dtype=np.int32)
        if self.cycle is None:
            self._cover_with_chains()
            self._clocks(level)

    def _kahn(self) -> tuple[np.ndarray, np.ndarray, list[int] | None]:
        """Topological order and levels (Kahn's algorithm, one pass over the edges), or
        the nodes left over and one cycle among them."""
        n = self.n
        missing = np.bincount(self.tail, minlength=n).tolist()
        starts, out = self.out_start.tolist(), self.out.tolist()
        level = [0] * n
        order = [v for v in range(n) if not missing[v]]
        for v in order:  # grows while it is read
            next_level = level[v] + 1
            for w in out[starts[v]:starts[v + 1]]:
                if level[w] < next_level:
                    level[w] = next_level
                missing[w] -= 1
                if not missing[w]:
                    order.append(w)
        topo = np.asarray(order, dtype=np.int64)
        if len(order) == n:
            return topo, np.asarray(level, dtype=np.int64), None
        stuck = np.asarray(missing) > 0
        pred = {}
        for a, b in zip(self.head.tolist(), self.tail.tolist(), strict=True):
            if stuck[a] and stuck[b] and b not in pred:
                pred[b] = a
        node = int(np.flatnonzero(stuck)[0])
        seen: dict[int, int] = {}
        walk: list[int] = []
        while node not in seen:
            seen[node] = len(walk)
            walk.append(node)
            node = pred[node]
        return topo, np.asarray(level, dtype=np.int64), walk[seen[node]:][::-1]

    def _cover_with_chains(self) -> None:
        """Greedy chains in topological order: each op continues the chain of its first
        predecessor (queue successions come first) that is still the tail of its chain,
        or starts a new chain. The longest chains get clock columns, as many as
        :data:`CLOCK_CELLS` allows."""
        by_tail = np.argsort(self.tail, kind="stable")
        starts = np.searchsorted(self.tail[by_tail], np.arange(self.n + 1)).tolist()
        preds = self.head[by_tail].tolist()
        self._pred_start, self._preds = starts, preds
        chain, position = [0] * self.n, [0] * self.n
        extended = [False] * self.n
        lengths: list[int] = []
        for v in self.topo.tolist():
            for u in preds[starts[v]:starts[v + 1]]:
                if not extended[u]:
                    extended[u] = True
                    chain[v] = c = chain[u]
                    position[v] = lengths[c]
                    lengths[c] += 1
                    break
            else:
                chain[v] = len(lengths)
                lengths.append(1)
        self.chain = np.asarray(chain, dtype=np.int64)
        self.position = np.asarray(position, dtype=np.int64)
        sizes = np.asarray(lengths, dtype=np.int64)
        room = max(CLOCK_CELLS // max(self.n, 1), 1)
        worth = np.flatnonzero(sizes > 1)  # from a chain of one op, a search is a step
        kept = worth[np.argsort(-sizes[worth], kind="stable")[:room]]
        columns = np.full(len(sizes), -1, dtype=np.int64)
        columns[kept] = np.arange(len(kept))
        self.column = columns[self.chain]
        self.width = len(kept)

    def _clocks(self, level: np.ndarray) -> None:
        """Each op's clock: its own position in its chain's column, then the element-wise
        maximum over its predecessors, one NumPy reduction per topological level (or, in
        a deep graph, per edge in topological order)."""
        self.clock = np.full((self.n, max(self.width, 1)), -1, dtype=np.int32)
        own = np.flatnonzero(self.column >= 0)
        self.clock[own, self.column[own]] = self.position[own]
        head, tail = self.head, self.tail
        if not len(head):
            return
        levels = int(level.max()) + 1
        if levels * _DEEP > self.n:  # deep and narrow: one edge at a time beats a level
            clock = self.clock
            for v in self.topo.tolist():
                row = clock[v]
                for u in self._preds[self._pred_start[v]:self._pred_start[v + 1]]:
                    np.maximum(row, clock[u], out=row)
            return
        order = np.argsort(level[tail], kind="stable")
        h, t, lv = head[order], tail[order], level[tail[order]]
        cuts = np.flatnonzero(np.diff(lv)) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(lv)], strict=True):
            np.maximum.at(self.clock, t[lo:hi], self.clock[h[lo:hi]])

    def before(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``a[i] -> b[i]`` for each i."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        out = np.zeros(a.size, dtype=bool)
        col = self.column[a]
        kept = col >= 0
        out[kept] = (self.clock[b[kept], col[kept]] >= self.position[a[kept]]) & \
            (a[kept] != b[kept])
        for i in np.flatnonzero(~kept).tolist():
            out[i] = self._search(int(a[i]), int(b[i]))
        return out

    def _search(self, a: int, b: int) -> bool:
        """``a -> b`` for an op ``a`` whose chain has no column: a search of its
        successors that stops at ``b``'s topological rank and at ops with a column."""
        rank_b = self.rank[b]
        stack = [a]
        seen = {a}
        while stack:
            node = stack.pop()
            for nxt in self.out[self.out_start[node]:self.out_start[node + 1]].tolist():
                if nxt == b:
                    return True
                if nxt in seen or self.rank[nxt] > rank_b:
                    continue
                seen.add(nxt)
                column = self.column[nxt]
                if column < 0:
                    stack.append(nxt)
                elif self.clock[b, column] >= self.position[nxt]:
                    return True
        return False
