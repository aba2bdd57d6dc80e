"""Rules about buffer placement in on-chip memories: range, aliasing and lifetime."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import defaultdict

import numpy as np

from checker.columns import columns
from checker.model import Model
from checker.report import Violation

__all__ = ["check_mem_range", "check_alias", "check_lifetime"]


def check_mem_range(m: Model) -> list[Violation]:
    """MEM_RANGE: ``offset >= 0``, ``offset`` is a multiple of the buffer's ``align`` and of
    its memory's ``alignment_bytes``, and ``offset + size <= capacity_bytes``."""
    out = []
    for name, place in m.buffer_places.items():
        buffer = m.buffers[name]
        memory = m.memories[buffer.memory]
        offset = place.offset
        if offset < 0:
            problem = "is negative"
        elif offset % buffer.align:
            problem = f"is not a multiple of the buffer's alignment {buffer.align}"
        elif offset % memory.alignment:
            problem = (f"is not a multiple of {buffer.memory}'s alignment "
                       f"{memory.alignment}")
        elif offset + buffer.size > memory.capacity:
            problem = (f"+ size {buffer.size} exceeds {buffer.memory}'s capacity "
                       f"{memory.capacity}")
        else:
            continue
        out.append(Violation("MEM_RANGE", f"buffer {name!r} at offset {offset} {problem}",
                             buffers=(name,), time=place.alloc))
    return out


def check_alias(m: Model) -> list[Violation]:
    """ALIAS: two buffers of one memory whose byte ranges ``[offset, offset + size)``
    intersect have disjoint ``[alloc, free)`` windows.

    A sweep over time per memory (frees before allocs at equal times) keeps the live
    buffers sorted by offset; a new buffer is compared only with live buffers that start
    below its end and within the largest buffer size of its start. Each buffer is
    reported once, with the first live buffer it collides with.
    """
    if _no_alias(m):
        return []
    events: dict[str, list[tuple[int, int, int, int, str]]] = defaultdict(list)
    largest: dict[str, int] = defaultdict(int)
    for name, place in m.buffer_places.items():
        buffer = m.buffers[name]
        if buffer.size <= 0 or place.free <= place.alloc:
            continue
        end = place.offset + buffer.size
        events[buffer.memory].append((place.alloc, 1, place.offset, end, name))
        events[buffer.memory].append((place.free, 0, place.offset, end, name))
        largest[buffer.memory] = max(largest[buffer.memory], buffer.size)
    out = []
    for memory, timeline in events.items():
        timeline.sort()
        reach = largest[memory]
        live: list[tuple[int, str, int]] = []  # (offset, name, end), sorted
        for time, is_alloc, lo, hi, name in timeline:
            if not is_alloc:
                del live[bisect_left(live, (lo, name, hi))]
                continue
            i = bisect_left(live, (hi,)) - 1
            while i >= 0 and live[i][0] > lo - reach:
                other_lo, other, other_hi = live[i]
                if other_hi > lo:
                    out.append(Violation("ALIAS", f"buffers {other!r} [{other_lo}, {other_hi}) "
                                         f"and {name!r} [{lo}, {hi}) share {memory} bytes at "
                                         f"t={time}", buffers=(other, name), time=time))
                    break
                i -= 1
            insort(live, (lo, name, hi))
    return out


def _no_alias(m: Model) -> bool:
    """Whether ALIAS has nothing to say, in vector passes, in the common case where the
    distinct byte ranges of each memory's buffers (those with a non-empty window) are
    disjoint: buffers then meet only on one same range, and there, in order of ``alloc``,
    each must be allocated at or after the previous one's ``free``. ``False`` (the
    sweep decides) when ranges overlap otherwise, or when a figure is too large for
    their sum to fit in 64 bits."""
    places = m.buffer_places
    definitions = [m.buffers[name] for name in places]
    kinds = {memory: k for k, memory in enumerate(m.memories)}
    memory = np.array([kinds.get(d.memory, -1) for d in definitions], dtype=np.int64)
    offset = np.array([p.offset for p in places.values()], dtype=np.int64)
    size = np.array([d.size for d in definitions], dtype=np.int64)
    alloc = np.array([p.alloc for p in places.values()], dtype=np.int64)
    free = np.array([p.free for p in places.values()], dtype=np.int64)
    if len(offset) and (offset.max() >= 2**62 or size.max() >= 2**62):
        return False  # offset + size might not fit (sizes are positive)
    kept = (size > 0) & (free > alloc)
    memory, lo, alloc, free = memory[kept], offset[kept], alloc[kept], free[kept]
    hi = lo + size[kept]
    order = np.lexsort((alloc, hi, lo, memory))
    memory, lo, hi, alloc, free = memory[order], lo[order], hi[order], alloc[order], free[order]
    same_memory = memory[1:] == memory[:-1]
    same_range = same_memory & (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1])
    overlapping_ranges = same_memory & ~same_range & (lo[1:] < hi[:-1])
    overlapping_windows = same_range & (alloc[1:] < free[:-1])
    return not (overlapping_ranges | overlapping_windows).any()


def check_lifetime(m: Model) -> list[Violation]:
    """LIFETIME: ``0 <= alloc <= free``, and every op that accesses a buffer runs inside
    the buffer's ``[alloc, free)`` window (``alloc <= start`` and ``end <= free``).

    An inverted window (``end < start``, DURATION's fault) is empty and lies inside any
    lifetime; a zero-length one ``[t, t)`` must still have ``alloc <= t <= free``."""
    if _within_lifetimes(m):
        return []
    out = []
    for name, place in m.buffer_places.items():
        if not 0 <= place.alloc <= place.free:
            out.append(Violation("LIFETIME", f"buffer {name!r} has alloc {place.alloc} and "
                                 f"free {place.free}; need 0 <= alloc <= free",
                                 buffers=(name,), time=place.alloc))
    places = m.buffer_places
    for op_name, op, p in m.scheduled():
        if p.inverted:
            continue
        seen = set()
        for access in (*op.buffer_reads, *op.buffer_writes):
            buffer = access.buffer
            place = places.get(buffer)
            if place is None or buffer in seen:
                continue
            seen.add(buffer)
            if p.start < place.alloc or p.end > place.free:
                out.append(Violation("LIFETIME", f"op {op_name!r} runs [{p.start}, {p.end}) "
                                     f"but buffer {buffer!r} lives [{place.alloc}, "
                                     f"{place.free})", (op_name,), (buffer,), time=p.start))
    return out


def _within_lifetimes(m: Model) -> bool:
    """Whether LIFETIME has nothing to say, in one vector pass: every placement has
    ``0 <= alloc <= free`` and every access of an op whose window is not inverted lies
    inside its buffer's window (if placed). Only otherwise does the rule look per op."""
    places = m.buffer_places
    c = columns(m)
    alloc = np.fromiter((p.alloc for p in places.values()), np.int64, len(places))
    free = np.fromiter((p.free for p in places.values()), np.int64, len(places))
    if not ((alloc >= 0) & (alloc <= free)).all():
        return False
    index = {name: i for i, name in enumerate(c.buffers)}
    placed = np.zeros(len(c.buffers), dtype=bool)
    placed_ids = np.fromiter(map(index.__getitem__, places), np.int64, len(places))
    placed[placed_ids] = True
    buffer_alloc = np.zeros(len(c.buffers), dtype=np.int64)
    buffer_free = np.zeros(len(c.buffers), dtype=np.int64)
    buffer_alloc[placed_ids], buffer_free[placed_ids] = alloc, free
    for accesses in (c.reads, c.writes):
        start, end, buffer = c.start[accesses.op], c.end[accesses.op], accesses.buffer
        judged = placed[buffer] & (end >= start)
        if ((start < buffer_alloc[buffer]) | (end > buffer_free[buffer]))[judged].any():
            return False
    return True
