"""Which write a buffer read sees, for every read of a buffer, in one pass over time.

The bytes of a buffer are painted with the writes that have become visible so far (in
order of ``end``; a later paint covers an earlier one), as disjoint segments. Before a
read at ``start``, every write ending at or before ``start`` has been painted, so the
segments over the read's bytes show, byte by byte, the last write to end there: the
one ending last among them is the write the read sees. A read that sees one covering
write meets a single segment, so each step costs ``O(log n)`` plus the segments met
(a buffer written by thousands of ops at once, each its own byte, used to cost every
earlier write per read).

Ties: where a write is painted over a segment of another write with the same ``end``,
the new segment remembers that write (``tied``), so two writes finishing together are
found even when one hides the other.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Seen", "Tie", "Painter", "last_writes"]


class Access(Protocol):
    op: str
    lo: int
    hi: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Seen:
    """The read sees ``write`` (an index into the writes)."""

    write: int


@dataclass(frozen=True, slots=True)
class Tie:
    """Writes ``first`` and ``second`` (indices) both end last, at the same time."""

    first: int
    second: int


class Painter:
    """Disjoint painted segments ``[starts[k], ends[k])`` of write ``writers[k]``, and
    another write ``tied[k]`` with the same end that it was painted over (or -1)."""

    def __init__(self, writes: list[Access]) -> None:
        self.writes = writes
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.writers: list[int] = []
        self.tied: list[int] = []

    def _first_meeting(self, lo: int) -> int:
        """Index of the first segment ending after ``lo``."""
        k = bisect_right(self.starts, lo) - 1
        return k if k >= 0 and self.ends[k] > lo else k + 1

    def paint(self, w: int) -> None:
        """Paint write ``w`` over its bytes."""
        write = self.writes[w]
        lo, hi = write.lo, write.hi
        first = self._first_meeting(lo)
        last = first
        pieces: list[tuple[int, int, int, int]] = []  # (lo, hi, writer, tied)
        cursor = lo
        while last < len(self.starts) and self.starts[last] < hi:
            s, e, old, tie = self.starts[last], self.ends[last], self.writers[last], \
                self.tied[last]
            if s < lo:
                pieces.append((s, lo, old, tie))
            if cursor < max(s, lo):
                pieces.append((cursor, max(s, lo), w, -1))
            same_end = self.writes[old].end == write.end
            pieces.append((max(s, lo), min(e, hi), w, old if same_end else -1))
            if e > hi:
                pieces.append((hi, e, old, tie))
            cursor = min(e, hi)
            last += 1
        if cursor < hi:
            pieces.append((cursor, hi, w, -1))
        merged: list[tuple[int, int, int, int]] = []
        for piece in pieces:
            if merged and merged[-1][1] == piece[0] and merged[-1][2:] == piece[2:]:
                merged[-1] = (merged[-1][0], piece[1], *piece[2:])
            else:
                merged.append(piece)
        self.starts[first:last] = [p[0] for p in merged]
        self.ends[first:last] = [p[1] for p in merged]
        self.writers[first:last] = [p[2] for p in merged]
        self.tied[first:last] = [p[3] for p in merged]

    def seen(self, read: Access) -> Seen | Tie | str | None:
        """What ``read`` sees among the painted writes: one write, a tie, ``None`` when
        nothing painted meets its bytes, or ``"own"`` when a write of its own op does, or
        is remembered as tied (it may hide another op's write, or make a false tie)."""
        best, best_end, partner = -1, 0, -1
        k = self._first_meeting(read.lo)
        while k < len(self.starts) and self.starts[k] < read.hi:
            w = self.writers[k]
            write = self.writes[w]
            tied = self.tied[k]
            if write.op == read.op or tied >= 0 and self.writes[tied].op == read.op:
                return "own"
            if best < 0 or write.end > best_end:
                best, best_end, partner = w, write.end, tied
            elif write.end == best_end and partner < 0:
                partner = w if w != best else tied
            k += 1
        if best < 0:
            return None
        return Seen(best) if partner < 0 else Tie(partner, best)


def last_writes(reads: list[Access], writes: list[Access]) -> list[Seen | Tie | None | str]:
    """For each read, what it sees: among the other ops' writes to its bytes that end at or
    before its ``start``, the one ending last (:class:`Seen`), two ending together
    (:class:`Tie`), or ``None`` when there is none.

    An op's reads never see its own writes, and a painted own write could hide another
    op's: a read that meets one (a zero-length in-place update) gets ``"own"``, for
    the caller to decide by a direct scan.
    """
    painter = Painter(writes)
    order = sorted(range(len(writes)), key=lambda w: writes[w].end)
    answers: list[Seen | Tie | None | str] = [None] * len(reads)
    k = 0
    for r in sorted(range(len(reads)), key=lambda r: reads[r].start):
        read = reads[r]
        while k < len(order) and writes[order[k]].end <= read.start:
            painter.paint(order[k])
            k += 1
        answers[r] = painter.seen(read)
    return answers
