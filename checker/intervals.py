"""A set of byte intervals that come and go, asked "which one meets ``[lo, hi)``?".

The sweeps of the buffer rules (a write racing another, a write during a read) keep the
accesses alive at the current instant and ask, for each new one, which live access
intersects it. Comparing with every live access costs the number alive, so a buffer
with thousands of concurrent accesses (writers of disjoint bytes, say) took quadratic
time. Here every interval that may ever be live gets a fixed slot, in order of ``lo``;
a max tree over the slots holds each live slot's ``hi``. The live intervals meeting
``[lo, hi)`` are those among the slots with ``lo' < hi`` whose ``hi' > lo``: a prefix of
the slots and a maximum, so each question and each change costs ``O(log n)``.
"""

from __future__ import annotations

from bisect import bisect_left

__all__ = ["LiveIntervals"]

_ABSENT = -(1 << 63)


class LiveIntervals:
    """Intervals ``spans[k] = (lo, hi)``, each live or not (none at first)."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        order = sorted(range(len(spans)), key=lambda k: spans[k][0])
        self._slot = [0] * len(spans)
        for slot, k in enumerate(order):
            self._slot[k] = slot
        self._key = order
        self._los = [spans[k][0] for k in order]
        self._his = [spans[k][1] for k in order]
        size = 1
        while size < max(len(spans), 1):
            size *= 2
        self._size = size
        self._tree = [_ABSENT] * (2 * size)

    def add(self, k: int) -> None:
        """Make interval ``k`` live."""
        i = self._slot[k] + self._size
        value = self._his[i - self._size]
        tree = self._tree
        tree[i] = value
        i >>= 1
        while i and tree[i] < value:
            tree[i] = value
            i >>= 1

    def remove(self, k: int) -> None:
        """Make interval ``k`` not live (it may already not be)."""
        i = self._slot[k] + self._size
        tree = self._tree
        if tree[i] == _ABSENT:
            return
        tree[i] = _ABSENT
        i >>= 1
        while i:
            best = max(tree[2 * i], tree[2 * i + 1])
            if tree[i] == best:
                break
            tree[i] = best
            i >>= 1

    def meeting(self, lo: int, hi: int) -> int | None:
        """One live interval that intersects ``[lo, hi)`` (the one reaching furthest among
        those starting below ``hi``), or ``None``."""
        end = bisect_left(self._los, hi)  # slots [0, end) start below hi
        if end == 0:
            return None
        tree, size = self._tree, self._size
        # the O(log n) nodes covering [0, end), left to right
        left, right = size, size + end
        nodes_left, nodes_right = [], []
        while left < right:
            if left & 1:
                nodes_left.append(left)
                left += 1
            if right & 1:
                right -= 1
                nodes_right.append(right)
            left >>= 1
            right >>= 1
        for node in (*nodes_left, *reversed(nodes_right)):
            if tree[node] > lo:
                while node < size:
                    node = 2 * node if tree[2 * node] > lo else 2 * node + 1
                return self._key[node - size]
        return None
