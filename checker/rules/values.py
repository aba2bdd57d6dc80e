"""Rules about what buffers hold: every read sees the value it expects, no write races.

An op reads during its whole window ``[start, end)``; its writes occupy the written bytes
during the whole window and the value becomes visible at ``end``. Empty byte ranges
touch nothing and are ignored here. An inverted window (``end < start``, DURATION's
fault) is empty and has no instant: its reads read nothing, so they are never stale; its
writes occupy no time, so they race with nothing and never write during a read, but their
value still becomes visible at ``end``. (A zero-length window ``[t, t)`` is different: its
reads see the value at ``t``, and its writes happen at ``t``.)
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass
from heapq import heappop, heappush

import numpy as np

from checker.columns import Columns, columns
from checker.intervals import LiveIntervals
from checker.model import Model
from checker.report import Violation
from checker.rules.last_write import Seen, Tie, last_writes

__all__ = ["check_stale_reads", "check_write_races"]


@dataclass(slots=True)
class _Touch:
    """One access of one op to a byte range of a buffer, with the op's window."""

    op: str
    lo: int
    hi: int
    start: int
    end: int
    value: str | None


def _touches(m: Model, wanted: np.ndarray) -> tuple[dict[str, list[_Touch]],
                                                   dict[str, list[_Touch]]]:
    """Reads and writes per buffer, of the buffers ``wanted`` (a mask over buffer
    indices): in the order a pass over the scheduled ops meets them."""
    c = columns(m)
    reads: dict[str, list[_Touch]] = defaultdict(list)
    writes: dict[str, list[_Touch]] = defaultdict(list)
    for accesses, table, kept in ((c.reads, reads, _counted_reads(c)),
                                  (c.writes, writes, c.writes.lo < c.writes.hi)):
        rows = np.flatnonzero(kept & wanted[accesses.buffer])
        op = accesses.op[rows]
        for i, buffer, lo, hi, value, start, end in zip(
                op.tolist(), accesses.buffer[rows].tolist(), accesses.lo[rows].tolist(),
                accesses.hi[rows].tolist(), accesses.value[rows].tolist(),
                c.start[op].tolist(), c.end[op].tolist(), strict=True):
            table[c.buffers[buffer]].append(_Touch(c.names[i], lo, hi, start, end, value))
    return reads, writes


def _counted_reads(c: Columns) -> np.ndarray:
    """The reads that read something: a byte range, and a window that is not inverted."""
    r = c.reads
    return (r.lo < r.hi) & (c.end[r.op] >= c.start[r.op])


def _fresh(c: Columns) -> np.ndarray:
    """Per buffer, ``True`` where no read of it can be STALE_READ: the common case, told
    in one vector pass (``False`` leaves the buffer to the exact pass in Python).

    A buffer qualifies when its writes have one byte range and follow one another in
    time (not inverted, each starting at or after the previous one's end, ends strictly
    rising), and each read lies inside that range, is not seen by a write of its own
    op, and: the write ending last at or before its start (by another op, hence single
    and covering) holds its value or either has none; and the next write by another op
    starts at or after the read's end. Past the seen write, windows only start later,
    so that next write is the only one that could overlap the read.
    """
    fresh = np.ones(len(c.buffers), dtype=bool)
    r, w = c.reads, c.writes
    counted = _counted_reads(c)
    r_buffer, r_op = r.buffer[counted], r.op[counted]
    if len(r_op) == 0:
        return fresh
    r_lo, r_hi, r_value = r.lo[counted], r.hi[counted], r.value[counted]
    r_start, r_end = c.start[r_op], c.end[r_op]
    written = w.lo < w.hi
    w_buffer, w_op = w.buffer[written], w.op[written]
    if len(w_op) == 0:
        fresh[r_buffer] = False
        return fresh
    w_start, w_end = c.start[w_op], c.end[w_op]
    order = np.lexsort((w_start, w_end, w_buffer))
    w_buffer, w_op, w_start, w_end = w_buffer[order], w_op[order], w_start[order], w_end[order]
    w_lo, w_hi, w_value = w.lo[written][order], w.hi[written][order], w.value[written][order]
    fresh[w_buffer[w_start > w_end]] = False
    same = w_buffer[1:] == w_buffer[:-1]
    overlapping = same & ((w_start[1:] < w_end[:-1]) | (w_end[1:] <= w_end[:-1]) |
                          (w_lo[1:] != w_lo[:-1]) | (w_hi[1:] != w_hi[:-1]))
    fresh[w_buffer[1:][overlapping]] = False
    # the last write ending by each read's start: a search over (buffer, end) keys
    times, rank = np.unique(np.concatenate([w_end, r_start]), return_inverse=True)
    w_key = w_buffer * len(times) + rank[:len(w_end)]
    r_key = r_buffer * len(times) + rank[len(w_end):]
    n = len(w_key)
    k = np.searchsorted(w_key, r_key, side="right") - 1
    found = k >= 0
    k = np.maximum(k, 0)
    found &= w_buffer[k] == r_buffer
    seen_value = w_value[k]
    ok = found & (w_op[k] != r_op) & (w_lo[k] <= r_lo) & (r_hi <= w_hi[k]) & \
        ((seen_value == r_value) | np.equal(seen_value, None) | np.equal(r_value, None))
    after = k + 1
    after += (after < n) & (w_buffer[np.minimum(after, n - 1)] == r_buffer) & \
        (w_op[np.minimum(after, n - 1)] == r_op)
    nxt = np.minimum(after, n - 1)
    ok &= (after >= n) | (w_buffer[nxt] != r_buffer) | (w_start[nxt] >= r_end)
    fresh[r_buffer[~ok]] = False
    return fresh


def _span(t: _Touch) -> str:
    return f"bytes [{t.lo}, {t.hi})"


def _seen_by(read: _Touch, write: _Touch) -> bool:
    """Whether ``write`` may be the write ``read`` sees: another op's, to its bytes (an
    op's reads never see its own writes)."""
    return write.op != read.op and write.lo < read.hi and read.lo < write.hi


def _last_write(read: _Touch, writes: list[_Touch], ends: list[int]) -> str | _Touch:
    """The single latest write by another op to the read's bytes ending at or before its
    start, or why there is none (a sentence fragment)."""
    i = bisect_right(ends, read.start) - 1
    while i >= 0 and not _seen_by(read, writes[i]):
        i -= 1
    if i < 0:
        return "no write to them ends by then"
    last = writes[i]
    i -= 1
    while i >= 0 and ends[i] == last.end:
        other = writes[i]
        if _seen_by(read, other):
            return (f"ops {other.op!r} and {last.op!r} both finish writing them at "
                    f"t={last.end}")
        i -= 1
    return last


def _seen(reads: list[_Touch], writes: list[_Touch], few: bool) -> list[str | _Touch]:
    """For each read, the write it sees (:func:`_last_write`), or why there is none;
    ``writes`` sorted by end. Past a few pairs, :func:`last_writes` paints the buffer
    in one pass; a read that meets its own op's write there is scanned directly."""
    ends = [w.end for w in writes]
    if few:
        return [_last_write(r, writes, ends) for r in reads]
    out: list[str | _Touch] = []
    for r, answer in zip(reads, last_writes(reads, writes), strict=True):
        if answer is None:
            out.append("no write to them ends by then")
        elif isinstance(answer, Seen):
            out.append(writes[answer.write])
        elif isinstance(answer, Tie):
            first, second = writes[answer.first], writes[answer.second]
            out.append(f"ops {first.op!r} and {second.op!r} both finish writing them at "
                       f"t={second.end}")
        else:
            out.append(_last_write(r, writes, ends))
    return out


def _conflicts(reads: list[_Touch], writes: list[_Touch]) -> dict[int, _Touch]:
    """For each read (by index), one write by another op to its bytes that overlaps it in
    time: ``write.start < read.end`` and ``write.end > read.start``.

    One sweep by start time; at equal times zero-length reads first, then writes, then the
    other reads. A write already running when a read starts is found at the read; a write
    starting inside a read's window is found at the write (a zero-length one too), and
    that read leaves the sweep. Inverted writes occupy no time and take no part. The live
    accesses are :class:`LiveIntervals`, so each step costs ``O(log n)``.
    """
    found: dict[int, _Touch] = {}
    events = sorted([(w.start, 1, i) for i, w in enumerate(writes) if w.start <= w.end] +
                    [(r.start, 0 if r.start == r.end else 2, i) for i, r in enumerate(reads)])
    live_writes = _Live(writes)
    live_reads = _Live(reads)
    for time, kind, i in events:
        if kind == 1:
            w = writes[i]
            live_reads.expire(time)
            while (j := live_reads.meeting(w)) is not None:
                found[j] = w
                live_reads.remove(j)
            if w.end > w.start:
                live_writes.add(i)
        else:
            r = reads[i]
            live_writes.expire(time)
            j = live_writes.meeting(r)
            if j is not None:
                found[i] = writes[j]
            elif kind == 2:
                live_reads.add(i)
    return found


class _Live:
    """The accesses of a sweep alive at its current time, by index into ``touches``."""

    def __init__(self, touches: list[_Touch]) -> None:
        self.touches = touches
        self.intervals = LiveIntervals([(t.lo, t.hi) for t in touches])
        self.ends: list[tuple[int, int]] = []  # a heap of (end, index)

    def add(self, k: int) -> None:
        self.intervals.add(k)
        heappush(self.ends, (self.touches[k].end, k))

    def remove(self, k: int) -> None:
        self.intervals.remove(k)

    def expire(self, time: int) -> None:
        """Drop the accesses that end by ``time``."""
        while self.ends and self.ends[0][0] <= time:
            self.intervals.remove(heappop(self.ends)[1])

    def meeting(self, t: _Touch) -> int | None:
        """A live access of another op than ``t``'s to bytes ``t`` touches, or ``None``
        (live accesses of ``t``'s own op are set aside for the question)."""
        own = []
        while (k := self.intervals.meeting(t.lo, t.hi)) is not None and \
                self.touches[k].op == t.op:
            own.append(k)
            self.intervals.remove(k)
        for k_own in own:
            self.intervals.add(k_own)
        return k


def _conflicts_few(reads: list[_Touch], writes: list[_Touch]) -> dict[int, _Touch]:
    """:func:`_conflicts` by comparing every pair: faster for the few accesses most
    buffers have. The same test: another op's write to intersecting bytes whose window
    overlaps the read's, or a zero-length one strictly inside it."""
    found: dict[int, _Touch] = {}
    for i, r in enumerate(reads):
        for w in writes:
            if w.op == r.op or w.start > w.end or not (w.lo < r.hi and r.lo < w.hi):
                continue
            if (r.start < w.start < r.end) if w.start == w.end else \
                    (w.start < r.end and w.end > r.start):
                found[i] = w
                break
    return found


#: Above this many (read, write) pairs per buffer the sweep beats comparing every pair.
FEW_PAIRS = 256


def check_stale_reads(m: Model) -> list[Violation]:
    """STALE_READ: a read of ``(buffer, bytes, value)`` over ``[start, end)`` sees that
    value. Among the other ops' writes to any of those bytes that ended at or before
    ``start`` (an op's reads never see its own writes), the one that ended last must be a
    single write (no other such write ends at the same time), cover all the bytes and have
    written exactly ``value`` (values are compared only when both the read and that write
    have one); and no op other than the reader writes any of those bytes during
    ``[that write's end, end)``.

    Given the first part, a write inside ``[that write's end, start]`` would itself be a
    later last write, so the second part reduces to: no other op's write to those bytes
    overlaps the read's window, which one sweep per buffer finds.
    """
    c = columns(m)
    unclear = ~_fresh(c)
    if not unclear.any():
        return []
    reads, writes = _touches(m, unclear)
    out = []
    for buffer, buffer_reads in reads.items():
        buffer_writes = writes.get(buffer, [])
        if len(buffer_writes) > 1:
            buffer_writes = sorted(buffer_writes, key=lambda w: w.end)
        few = len(buffer_reads) * len(buffer_writes) <= FEW_PAIRS
        racing = (_conflicts_few if few else _conflicts)(buffer_reads, buffer_writes)
        for i, (r, last) in enumerate(zip(buffer_reads, _seen(buffer_reads, buffer_writes, few),
                                          strict=True)):
            if isinstance(last, str):
                why, ops, time = last, (r.op,), r.start
            elif last.lo > r.lo or last.hi < r.hi:
                why = f"the last write, by op {last.op!r}, covers only {_span(last)}"
                ops, time = (last.op, r.op), last.end
            elif last.value != r.value and None not in (last.value, r.value):
                got = "no value" if last.value is None else f"value {last.value!r}"
                why = f"the last write, by op {last.op!r} at t={last.end}, holds {got}"
                ops, time = (last.op, r.op), last.end
            elif i in racing:
                w = racing[i]
                why = f"op {w.op!r} writes them during [{w.start}, {w.end})"
                ops, time = (w.op, r.op), max(w.start, r.start)
            else:
                continue
            expected = "no value" if r.value is None else f"value {r.value!r}"
            out.append(Violation("STALE_READ", f"op {r.op!r} reads {expected} from {buffer!r} "
                                 f"{_span(r)} at t={r.start}, but {why}", ops, (buffer,),
                                 time=time))
    return out


def check_write_races(m: Model) -> list[Violation]:
    """WRITE_RACE: two writes to intersecting bytes of one buffer never overlap in time
    (windows are half-open, so an empty window races with nothing); and one op never
    writes intersecting bytes of one buffer twice, whatever its window. An op may read
    and write the same bytes itself. A sweep by start time per buffer; each write is
    reported once, with one partner."""
    c = columns(m)
    out = _twice_written(m) if _any_twice(c) else []
    unclear = _racing(c)
    if not unclear.any():
        return out
    _, writes = _touches(m, unclear)
    for buffer, buffer_writes in writes.items():
        timed = sorted((w for w in buffer_writes if w.end > w.start), key=lambda w: w.start)
        if len(timed) < 2 or _one_after_another(timed):
            continue
        live = _Live(timed)
        for i, w in enumerate(timed):
            live.expire(w.start)
            j = live.meeting(w)  # the same op's: _twice_written
            if j is not None:
                x = timed[j]
                out.append(Violation("WRITE_RACE", f"ops {x.op!r} and {w.op!r} both write "
                                     f"{buffer!r} bytes [{max(x.lo, w.lo)}, "
                                     f"{min(x.hi, w.hi)}) at t={w.start}", (x.op, w.op),
                                     (buffer,), time=w.start))
            live.add(i)
    return out


def _racing(c: Columns) -> np.ndarray:
    """Per buffer, ``True`` where two of its timed writes (a non-empty window) overlap in
    time: in order of start, one starts before the previous one ends. Elsewhere
    :func:`_one_after_another` holds and there is nothing to sweep."""
    w = c.writes
    start, end = c.start[w.op], c.end[w.op]
    timed = (w.lo < w.hi) & (end > start)
    buffer, start, end = w.buffer[timed], start[timed], end[timed]
    order = np.lexsort((start, buffer))
    buffer, start, end = buffer[order], start[order], end[order]
    racing = np.zeros(len(c.buffers), dtype=bool)
    racing[buffer[1:][(buffer[1:] == buffer[:-1]) & (start[1:] < end[:-1])]] = True
    return racing


def _any_twice(c: Columns) -> bool:
    """Whether some op writes one buffer twice (whatever the bytes): only then can
    :func:`_twice_written` find anything."""
    w = c.writes
    order = np.lexsort((w.buffer, w.op))
    op, buffer = w.op[order], w.buffer[order]
    return bool(((op[1:] == op[:-1]) & (buffer[1:] == buffer[:-1])).any())


def _one_after_another(timed: list[_Touch]) -> bool:
    """Whether no two of these windows (sorted by start) overlap: the common case, where a
    buffer's writes follow each other, needs no sweep over bytes."""
    reach = timed[0].end
    for w in timed[1:]:
        if w.start < reach:
            return False
        reach = max(reach, w.end)
    return True


def _twice_written(m: Model) -> list[Violation]:
    """One op writing intersecting bytes of one buffer twice (FORMATS.md, Boundaries)."""
    out = []
    for name, op, p in m.scheduled():
        if len(op.buffer_writes) < 2:
            continue
        for i, a in enumerate(op.buffer_writes):
            b = next((b for b in op.buffer_writes[i + 1:] if b.buffer == a.buffer and
                      b.lo < a.hi and a.lo < b.hi), None)
            if b is not None:
                out.append(Violation("WRITE_RACE", f"op {name!r} writes {a.buffer!r} bytes "
                                     f"[{max(a.lo, b.lo)}, {min(a.hi, b.hi)}) twice", (name,),
                                     (a.buffer,), time=p.start))
                break
    return out
