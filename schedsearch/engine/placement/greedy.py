"""Greedy placement: one pass, each buffer at the best gap left by those placed before.

This is the engine's fast path and its minimise-mode upper bound. The order matters far
more than the gap rule: biggest-first (the "greedy by size" order of production
allocators) keeps large buffers from being stranded above small ones; orders by area or
by lifetime win on other instances, so :func:`greedy_portfolio` tries several and keeps
the lowest peak.

The inner loop is NumPy: finding the buffers already placed that live at the same time
is a vectorised mask over arrays, and the gap search is a sort plus a running maximum,
which keeps 60k-buffer instances within seconds (a Python loop over the thousands of
buffers live at once would not).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from schedsearch.engine.placement.problem import PlacementBuffer

__all__ = ["ORDERS", "greedy_offsets", "greedy_portfolio", "first_fit_offset", "lowest_fit"]

#: Named buffer orders: each maps (lower, upper, size) arrays to a sort key (ascending).
ORDERS = ("size", "area", "length", "conflict")


def _order(name: str, lower: np.ndarray, upper: np.ndarray, size: np.ndarray,
           rng: np.random.Generator | None) -> np.ndarray:
    length = upper - lower
    noise = rng.random(len(size)) if rng is not None else np.zeros(len(size))
    if name == "size":
        keys = (noise, lower, -length, -size)
    elif name == "area":
        keys = (noise, lower, -size, -(size * length))
    elif name == "length":
        keys = (noise, lower, -size, -length)
    elif name == "conflict":
        # The load a buffer sits in: buffers in crowded instants first, big ones first.
        keys = (noise, lower, -size, -_peak_load(lower, upper, size))
    else:
        raise ValueError(f"unknown order {name!r}")
    return np.lexsort(keys)


def _peak_load(lower: np.ndarray, upper: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Per buffer, the largest total size live at an instant of its lifetime (0 if none);
    range maxima come from a sparse table, so 60k buffers take milliseconds."""
    times = np.unique(np.concatenate([lower, upper]))
    first, last = np.searchsorted(times, lower), np.searchsorted(times, upper)
    delta = np.zeros(len(times), dtype=np.int64)
    np.add.at(delta, first, size)
    np.add.at(delta, last, -size)
    table = [np.cumsum(delta)]
    while 2 ** len(table) <= len(times):
        half = 2 ** (len(table) - 1)
        table.append(np.maximum(table[-1][:-half], table[-1][half:]))
    span = np.maximum(last - first, 1)
    level = np.floor(np.log2(span)).astype(np.int64)
    peak = np.zeros(len(size), dtype=np.int64)
    for k in np.unique(level).tolist():
        pick = np.flatnonzero((level == k) & (last > first))
        a, b = first[pick], last[pick] - 2 ** k
        peak[pick] = np.maximum(table[k][a], table[k][b])
    return peak


def greedy_offsets(lower: np.ndarray, upper: np.ndarray, size: np.ndarray,
                   align: np.ndarray, pinned: np.ndarray, order: np.ndarray,
                   *, best_fit: bool = True) -> np.ndarray:
    """Offsets for every buffer (``pinned[i] >= 0`` keeps buffer ``i`` there).

    Buffers are placed in ``order``; each goes into the gap between placed buffers that
    live at the same time which fits it most tightly (``best_fit``) or the lowest one,
    and on top of everything when no gap fits. Only live buffers (``upper > lower``,
    ``size > 0``) take part; the others get offset 0.
    """
    n = len(size)
    offsets = np.where(pinned >= 0, pinned, 0).astype(np.int64)
    placed_lower = np.empty(n, dtype=np.int64)
    placed_upper = np.empty(n, dtype=np.int64)
    placed_start = np.empty(n, dtype=np.int64)
    placed_top = np.empty(n, dtype=np.int64)
    count = 0
    live = (upper > lower) & (size > 0)
    for i in np.flatnonzero(live & (pinned >= 0)).tolist():
        placed_lower[count], placed_upper[count] = lower[i], upper[i]
        placed_start[count], placed_top[count] = pinned[i], pinned[i] + size[i]
        count += 1
    big = np.iinfo(np.int64).max // 4
    for i in order.tolist():
        if not live[i] or pinned[i] >= 0:
            continue
        lo, up, sz, al = int(lower[i]), int(upper[i]), int(size[i]), int(align[i])
        hit = np.flatnonzero((placed_lower[:count] < up) & (placed_upper[:count] > lo))
        if len(hit) == 0:
            offset = 0
        else:
            starts = placed_start[hit]
            by_start = np.argsort(starts, kind="stable")
            starts = starts[by_start]
            reach = np.maximum.accumulate(placed_top[hit][by_start])
            # Gap k runs from the highest top below the k-th start (0 for k = 0) to it.
            floors = np.empty(len(starts) + 1, dtype=np.int64)
            floors[0] = 0
            floors[1:] = reach
            if al > 1:
                floors = -(-floors // al) * al
            ceilings = np.empty(len(starts) + 1, dtype=np.int64)
            ceilings[:-1] = starts
            ceilings[-1] = big
            room = ceilings - floors
            fits = np.flatnonzero(room >= sz)
            if best_fit and len(fits) > 1:
                offset = int(floors[fits[np.argmin(room[fits])]])
            else:
                offset = int(floors[fits[0]])
        offsets[i] = offset
        placed_lower[count], placed_upper[count] = lo, up
        placed_start[count], placed_top[count] = offset, offset + sz
        count += 1
    return offsets


def greedy_portfolio(buffers: Sequence[PlacementBuffer], *, orders: Iterable[str] = ORDERS,
                     seed: int = 0, capacity: int | None = None,
                     deadline: float | None = None) -> tuple[dict[str, int], int, str]:
    """The lowest-peak greedy placement over several orders and both gap rules.

    Returns ``(offsets, peak, label)``. Stops early once a peak fits ``capacity`` or the
    ``deadline`` (a ``time.perf_counter`` value) passes, after at least one run.
    """
    import time

    lower = np.array([b.lower for b in buffers], dtype=np.int64)
    upper = np.array([b.upper for b in buffers], dtype=np.int64)
    size = np.array([b.size for b in buffers], dtype=np.int64)
    align = np.array([b.align for b in buffers], dtype=np.int64)
    pinned = np.array([-1 if b.offset is None else b.offset for b in buffers], dtype=np.int64)
    rng = np.random.default_rng(seed) if seed else None
    best: tuple[int, np.ndarray, str] | None = None
    for name in orders:
        order = _order(name, lower, upper, size, rng)
        for best_fit in (True, False):
            offsets = greedy_offsets(lower, upper, size, align, pinned, order, best_fit=best_fit)
            peak = int((offsets + size).max()) if len(size) else 0
            label = f"greedy-{name}-{'best' if best_fit else 'first'}-fit"
            if best is None or peak < best[0]:
                best = (peak, offsets, label)
            if capacity is not None and best[0] <= capacity:
                break
            if deadline is not None and time.perf_counter() > deadline:
                break
        if (capacity is not None and best[0] <= capacity) or (
                deadline is not None and time.perf_counter() > deadline):
            break
    if best is None:
        return {}, 0, "greedy"
    peak, offsets, label = best
    return {b.id: int(o) for b, o in zip(buffers, offsets.tolist(), strict=True)}, peak, label


def lowest_fit(busy: Iterable[tuple[int, int]], size: int, align: int,
               capacity: int | None = None) -> int | None:
    """First-fit: the lowest multiple of ``align`` where ``size`` bytes fit between the
    ``busy`` address ranges (``(start, end)`` pairs sorted by start), or None when that
    crosses ``capacity``. The one statement of the rule: the list scheduler's memories
    and :func:`first_fit_offset` both use it."""
    candidate = 0
    for start, end in busy:
        if candidate + size <= start:
            break
        if end > candidate:
            candidate = -(-end // align) * align
    return None if capacity is not None and candidate + size > capacity else candidate


def first_fit_offset(buffer: PlacementBuffer,
                     placed: Iterable[tuple[PlacementBuffer, int]],
                     capacity: int | None = None) -> int | None:
    """The lowest aligned offset where ``buffer`` fits beside the ``placed`` (buffer,
    offset) pairs that live at the same time (:func:`lowest_fit`; a buffer that is not
    live goes at 0), or ``None`` when it would cross ``capacity``."""
    busy = sorted((offset, offset + other.size) for other, offset in placed
                  if other.live and other.lower < buffer.upper and buffer.lower < other.upper
                  ) if buffer.live else []
    return lowest_fit(busy, buffer.size, buffer.align, capacity)
