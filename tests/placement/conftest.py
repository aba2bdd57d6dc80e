"""Shared helpers: an independent brute-force oracle for the smallest capacity."""

from __future__ import annotations

import itertools

from schedsearch.placement import PlacementBuffer


def conflicts(a: PlacementBuffer, b: PlacementBuffer) -> bool:
    return a.live and b.live and a.lower < b.upper and b.lower < a.upper


def smallest_capacity(buffers: list[PlacementBuffer]) -> int:
    """The smallest peak of any legal placement, by trying every stacking order.

    Some optimal placement is obtained by placing buffers one by one, in some order, each
    at the lowest aligned offset clear of those placed before (drop any optimal placement
    by offset order). Exponential: only for the handful of buffers tests use.
    """
    best = None
    for order in itertools.permutations(buffers):
        placed: list[tuple[PlacementBuffer, int]] = []
        for b in order:
            if b.offset is not None:
                x = b.offset
            else:
                x = 0
                moved = True
                while moved:
                    moved = False
                    for other, at in placed:
                        if conflicts(b, other) and x < at + other.size and at < x + b.size:
                            x = -(-(at + other.size) // b.align) * b.align
                            moved = True
            placed.append((b, x))
        legal = all(not (conflicts(p, q) and x < y + q.size and y < x + p.size)
                    for (p, x), (q, y) in itertools.combinations(placed, 2))
        if legal:
            peak = max((x + p.size for p, x in placed), default=0)
            best = peak if best is None else min(best, peak)
    assert best is not None
    return best
