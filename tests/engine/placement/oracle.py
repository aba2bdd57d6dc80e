"""An independent brute-force oracle for the smallest capacity."""

from __future__ import annotations

from schedsearch.engine.placement import PlacementBuffer


def conflicts(a: PlacementBuffer, b: PlacementBuffer) -> bool:
    return a.live and b.live and a.lower < b.upper and b.lower < a.upper


def _overlap(a: PlacementBuffer, x: int, b: PlacementBuffer, y: int) -> bool:
    """``a`` at ``x`` and ``b`` at ``y`` are live together and share a byte."""
    return conflicts(a, b) and x < y + b.size and y < x + a.size


def _lowest(b: PlacementBuffer, placed: list[tuple[PlacementBuffer, int]]) -> int:
    """The lowest aligned offset of ``b`` clear of the placed buffers it meets.

    Each move skips only offsets that overlap the buffer moved past, so the answer does
    not depend on the order of ``placed``."""
    x = 0
    moved = True
    while moved:
        moved = False
        for other, at in placed:
            if _overlap(b, x, other, at):
                x = -(-(at + other.size) // b.align) * b.align
                moved = True
    return x


def smallest_capacity(buffers: list[PlacementBuffer]) -> int:
    """The smallest peak of any legal placement, by trying every stacking order.

    Some optimal placement is obtained by placing buffers one by one, in some order, each
    at the lowest aligned offset clear of those placed before (drop any optimal placement
    by offset order). Exponential: only for the handful of buffers tests use.

    The orders are tried depth first as growing sets of placed buffers: where a buffer
    lands depends only on which buffers sit where (see :func:`_lowest`), so a set reached
    by two orders is explored once, and a partial peak no lower than the best complete one
    cannot lead to a better one. Both cuts are exact; they save the thousands of orders
    of seven buffers that a plain loop over permutations tried.
    """
    best: int | None = None
    seen: set[frozenset[tuple[int, int]]] = set()

    def extend(placed: tuple[tuple[int, int], ...], peak: int) -> None:
        nonlocal best
        key = frozenset(placed)
        if key in seen or (best is not None and peak >= best):
            return
        seen.add(key)
        if len(placed) == len(buffers):
            best = peak
            return
        done = {i for i, _ in placed}
        at = [(buffers[i], x) for i, x in placed]
        for i, b in enumerate(buffers):
            if i in done:
                continue
            x = _lowest(b, at) if b.offset is None else b.offset
            if any(_overlap(b, x, other, y) for other, y in at):
                continue  # a fixed offset on a placed buffer: no legal order goes on here
            extend((*placed, (i, x)), max(peak, x + b.size))

    extend((), 0)
    assert best is not None
    return best
