"""Happens-before over queues and waits, without all pairs: vector clocks per queue.

Nodes are op indices; each queue is a list of nodes in issue order; edges are extra
orders ``(before, after)`` (waits, or anything else a caller adds). A node's clock holds,
for each queue, the largest position in that queue of a node that is the node itself or
happens before it. With ``home(a)`` any queue of ``a`` and ``pos(a)`` its position there,
``a`` happens before ``b`` exactly when ``clock[b][home(a)] >= pos(a)``: a later op of
``a``'s queue that reaches ``b`` is reached from ``a`` by the queue. Clocks are computed
level by level in a topological order, one NumPy reduction per level.

Nodes in no queue have no column; ``a -> b`` is then decided through ``a``'s successors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedsearch.wording import counted

__all__ = ["Cycle", "Reach"]


class Cycle(Exception):
    """The orders form a cycle; ``nodes`` lists one, each before the next."""

    def __init__(self, nodes: list[int]) -> None:
        super().__init__(f"a cycle through {counted(len(nodes), 'node')}")
        self.nodes = nodes


class Reach:
    """Reachability over queue successions plus ``edges``; raises :class:`Cycle`."""

    def __init__(self, n: int, queues: Sequence[Sequence[int]],
                 edges: Sequence[tuple[int, int]]) -> None:
        self.n = n
        self.home = np.full(n, -1, dtype=np.int64)
        self.pos = np.full(n, -1, dtype=np.int64)
        src: list[int] = []
        dst: list[int] = []
        member_nodes: list[int] = []
        member_queue: list[int] = []
        member_pos: list[int] = []
        for q, queue in enumerate(queues):
            for i, node in enumerate(queue):
                member_nodes.append(node)
                member_queue.append(q)
                member_pos.append(i)
                if self.home[node] < 0:
                    self.home[node], self.pos[node] = q, i
                if i:
                    src.append(queue[i - 1])
                    dst.append(node)
        for a, b in edges:
            src.append(a)
            dst.append(b)
        self.src = np.asarray(src, dtype=np.int64)
        self.dst = np.asarray(dst, dtype=np.int64)
        order = np.argsort(self.src, kind="stable")
        self._succ_ptr = np.searchsorted(self.src[order], np.arange(n + 1))
        self._succ = self.dst[order]
        level = self._levels()
        clock = np.full((n, max(len(queues), 1)), -1, dtype=np.int64)
        clock[np.asarray(member_nodes, dtype=np.int64), np.asarray(member_queue, dtype=np.int64)] \
            = np.asarray(member_pos, dtype=np.int64)
        by_level = np.argsort(level[self.dst], kind="stable")
        s, d = self.src[by_level], self.dst[by_level]
        bounds = np.searchsorted(level[d], np.arange(int(level.max(initial=0)) + 2))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            if hi > lo:
                np.maximum.at(clock, d[lo:hi], clock[s[lo:hi]])
        self.clock = clock
        self._frontier: dict[int, np.ndarray] = {}

    def successors(self, node: int) -> np.ndarray:
        return self._succ[self._succ_ptr[node]:self._succ_ptr[node + 1]]

    def _levels(self) -> np.ndarray:
        """Longest-path level of each node from the sources (Kahn); :class:`Cycle` if none."""
        n = self.n
        indeg = np.bincount(self.dst, minlength=n)
        level = np.zeros(n, dtype=np.int64)
        frontier = np.flatnonzero(indeg == 0)
        done = 0
        ptr, succ = self._succ_ptr, self._succ
        while frontier.size:
            done += frontier.size
            starts, ends = ptr[frontier], ptr[frontier + 1]
            counts = ends - starts
            if not counts.sum():
                break
            idx = np.repeat(starts - np.cumsum(counts) + counts, counts) + \
                np.arange(counts.sum())
            targets = succ[idx]
            np.maximum.at(level, targets, np.repeat(level[frontier] + 1, counts))
            np.subtract.at(indeg, targets, 1)
            frontier = np.unique(targets[indeg[targets] == 0])
        if done < n:
            raise Cycle(self._cycle(indeg))
        return level

    def _cycle(self, indeg: np.ndarray) -> list[int]:
        """One cycle among the nodes Kahn could not order (each has a pred among them)."""
        left = indeg > 0
        preds: dict[int, int] = {}
        for a, b in zip(self.src.tolist(), self.dst.tolist(), strict=True):
            if left[a] and left[b]:
                preds.setdefault(b, a)
        node = int(np.flatnonzero(left)[0])
        seen: dict[int, int] = {}
        path: list[int] = []
        while node not in seen:
            seen[node] = len(path)
            path.append(node)
            node = preds[node]
        return path[seen[node]:][::-1]

    def _reaches_from_queueless(self, a: int, b: int) -> bool:
        return any(int(s) == b or self.reaches(int(s), b) for s in self.successors(a))

    def reaches(self, a: int, b: int) -> bool:
        """``a -> b`` by a path of one or more orders (``a != b``)."""
        if self.home[a] < 0:
            return self._reaches_from_queueless(a, b)
        return bool(self.clock[b, self.home[a]] >= self.pos[a]) and a != b

    def reaches_many(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """:meth:`reaches` for each pair ``(a[i], b[i])``."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        home = self.home[a]
        queued = home >= 0
        result = np.zeros(a.size, dtype=bool)
        result[queued] = (self.clock[b[queued], home[queued]] >= self.pos[a[queued]]) & \
            (a[queued] != b[queued])
        for i in np.flatnonzero(~queued).tolist():
            result[i] = self._reaches_from_queueless(int(a[i]), int(b[i]))
        return result
