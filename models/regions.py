"""Which writes of a DDR tensor a read box meets, without trying every write.

Both the derived precedences of the search (:mod:`schedsearch.engine.hazards`) and the memory
bound's necessary edges (:mod:`schedsearch.engine.bounds.memory`) need, for every read of a tensor,
the writes whose boxes intersect it. Trying every pair is quadratic: 2.4 million box tests and
5 s at 7,806 ops on the tight RMSNorm -> DDR -> copy chain. Sorting the writes by where
their boxes start in the first dimension, with the running maximum of where they end,
gives the candidates of a read by bisection, and only those are tested.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Generic, TypeVar

from models.formats import Box

__all__ = ["BoxIndex", "boxes_intersect"]

T = TypeVar("T")


def boxes_intersect(a: Box, b: Box) -> bool:
    """Whether two boxes of the same rank share an element."""
    return all(lo1 < hi2 and lo2 < hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b, strict=True))


class BoxIndex(Generic[T]):
    """The writes of one tensor (a key and a box each), indexed by the first dimension.
    A write or read without a box stands for the whole tensor."""

    def __init__(self, writes: Iterable[tuple[T, Box]]) -> None:
        listed = list(writes)
        self._everywhere = [(k, key) for k, (key, box) in enumerate(listed) if not box]
        boxed = sorted(((box[0][0], k, key, box) for k, (key, box) in enumerate(listed)
                        if box), key=lambda w: (w[0], w[1]))
        self._starts = [start for start, _, _, _ in boxed]
        self._writes = [(k, key, box) for _, k, key, box in boxed]
        self._reach: list[int] = []  # the largest first-dimension end up to each write
        for _, _, box in self._writes:
            self._reach.append(max(box[0][1], self._reach[-1] if self._reach else box[0][1]))
        self._all = [key for key, _ in listed]

    def intersecting(self, box: Box) -> list[T]:
        """The keys of the writes whose boxes meet ``box``, in the order they were given."""
        if not box:
            return list(self._all)
        found = list(self._everywhere)
        j = bisect.bisect_left(self._starts, box[0][1]) - 1
        while j >= 0 and self._reach[j] > box[0][0]:
            k, key, written = self._writes[j]
            if boxes_intersect(written, box):
                found.append((k, key))
            j -= 1
        found.sort(key=lambda item: item[0])
        return [key for _, key in found]
