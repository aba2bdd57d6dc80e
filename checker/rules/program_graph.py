"""Happens-before of a program: queue successions and waits, decided per pair in O(1).

Each op gets a topological index (Kahn's order over all orders) and a vector clock: for
each queue, the highest position in that queue among ops that are the op itself or
happen before it. With ``q`` a queue holding ``a`` at position ``i``, ``a -> b`` iff
``clock[b][q] >= i`` and ``a != b`` (a later op of ``q`` that reaches ``b`` is itself
reached from ``a``). Clocks are the element-wise maximum over predecessors, computed in
topological order in one NumPy reduction per topological level.

An op in no queue has no column. Such an op ``a`` reaches ``b`` iff one of the ops that
wait for it is ``b`` or reaches ``b``; those successors are searched (a short walk).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["Graph"]


class Graph:
    """Orders over ``n`` ops: queues (lists of op indices) and extra ``(before, after)``
    edges. :attr:`cycle` is one cycle (op indices, each before the next) or ``None``;
    :meth:`before` is only meaningful without a cycle."""

    def __init__(self, n: int, queues: Sequence[Sequence[int]],
                 edges: Sequence[tuple[int, int]]) -> None:
        self.n = n
        column = np.full(n, -1, dtype=np.int64)
        place = np.full(n, -1, dtype=np.int64)
        heads: list[int] = []
        tails: list[int] = []
        cells = ([], [], [])
        for q, queue in enumerate(queues):
            for i, op in enumerate(queue):
                cells[0].append(op)
                cells[1].append(q)
                cells[2].append(i)
                if column[op] < 0:
                    column[op], place[op] = q, i
            heads.extend(queue[:-1])
            tails.extend(queue[1:])
        for a, b in edges:
            heads.append(a)
            tails.append(b)
        self.column, self.place = column, place
        head = np.asarray(heads, dtype=np.int64)
        tail = np.asarray(tails, dtype=np.int64)
        by_head = np.argsort(head, kind="stable")
        self.out_start = np.searchsorted(head[by_head], np.arange(n + 1))
        self.out = tail[by_head]
        self.head, self.tail = head, tail
        self.topo, level, self.cycle = self._kahn()
        self.rank = np.empty(n, dtype=np.int64)
        self.rank[self.topo] = np.arange(len(self.topo))
        self.clock = np.full((n, max(len(queues), 1)), -1, dtype=np.int64)
        if cells[0]:
            self.clock[np.asarray(cells[0]), np.asarray(cells[1])] = np.asarray(cells[2])
        if self.cycle is None and len(head):
            order = np.argsort(level[tail], kind="stable")
            h, t, lv = head[order], tail[order], level[tail[order]]
            cuts = np.flatnonzero(np.diff(lv)) + 1
            for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(lv)], strict=True):
                np.maximum.at(self.clock, t[lo:hi], self.clock[h[lo:hi]])

    def _kahn(self) -> tuple[np.ndarray, np.ndarray, list[int] | None]:
        """Topological order and levels, or the nodes left over and one cycle among them."""
        n = self.n
        missing = np.bincount(self.tail, minlength=n)
        level = np.zeros(n, dtype=np.int64)
        ready = np.flatnonzero(missing == 0)
        order = []
        while ready.size:
            order.append(ready)
            first, last = self.out_start[ready], self.out_start[ready + 1]
            count = last - first
            total = int(count.sum())
            if not total:
                break
            offsets = np.cumsum(count) - count
            edges = np.repeat(first - offsets, count) + np.arange(total)
            nxt = self.out[edges]
            np.maximum.at(level, nxt, np.repeat(level[ready] + 1, count))
            np.subtract.at(missing, nxt, 1)
            ready = np.unique(nxt[missing[nxt] == 0])
        topo = np.concatenate(order) if order else np.empty(0, dtype=np.int64)
        if len(topo) == n:
            return topo, level, None
        stuck = missing > 0
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
        return topo, level, walk[seen[node]:][::-1]

    def before(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``a[i] -> b[i]`` for each i."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        out = np.zeros(a.size, dtype=bool)
        col = self.column[a]
        queued = col >= 0
        out[queued] = (self.clock[b[queued], col[queued]] >= self.place[a[queued]]) & \
            (a[queued] != b[queued])
        for i in np.flatnonzero(~queued).tolist():
            out[i] = self._walk(int(a[i]), int(b[i]))
        return out

    def _walk(self, a: int, b: int) -> bool:
        stack = [a]
        seen = {a}
        while stack:
            node = stack.pop()
            for nxt in self.out[self.out_start[node]:self.out_start[node + 1]].tolist():
                if nxt == b:
                    return True
                if self.column[nxt] >= 0:
                    if self.clock[b, self.column[nxt]] >= self.place[nxt]:
                        return True
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return False
