"""The orders a schedule's legality relies on, read off its times (FORMATS.md, "Program").

A legal schedule keeps each of these orders by its times alone; a program must keep them
for every duration, so each becomes a queue succession or a wait. Each order carries the
code of the program rule that asks for it:

- ``ORDER_AFTER``: every ``after`` edge;
- ``ORDER_WAW``: per byte of a buffer, consecutive writers in time;
- ``ORDER_RAW``: per byte, the write a read sees before the read, and the read before the
  next write (every earlier write reaches the seen one, every later one follows the next,
  through the writer chain);
- ``ORDER_REUSE``: per byte of a memory, consecutive buffers in time: every access of the
  earlier one before every access of the later (buffers nobody accesses are skipped);
- ``ORDER_DDR``: each write of an ``output``/``temp`` tensor region before each read that
  intersects it.

Nothing is enumerated over all pairs: buffers are cut into byte segments of their
accesses, a memory's occupants are tracked in an interval map by allocation time, and
tensor reads look up the writes of their band of rows only.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from models.formats import Box, Schedule

__all__ = ["OrderCode", "Order", "needed_orders"]


class OrderCode(StrEnum):
    """The program rule an order serves (its code in FORMATS.md)."""

    AFTER = "ORDER_AFTER"
    RAW = "ORDER_RAW"
    WAW = "ORDER_WAW"
    REUSE = "ORDER_REUSE"
    DDR = "ORDER_DDR"


@dataclass(frozen=True, slots=True)
class Order:
    """``before`` must end before ``after`` starts, for the rule ``code``."""

    before: str
    after: str
    code: OrderCode


_Collect = Callable[[Iterable[tuple[str, str]], OrderCode], None]


def needed_orders(schedule: Schedule) -> list[Order]:
    """Every order of the module docstring, each pair once per code, in a stable order."""
    found: dict[tuple[str, str, OrderCode], None] = {}

    def add(pairs: Iterable[tuple[str, str]], code: OrderCode) -> None:
        for before, after in pairs:
            if before != after:
                found[(before, after, code)] = None

    placed = schedule.ops
    add(((a, b) for a, b in schedule.problem.after if a in placed and b in placed),
        OrderCode.AFTER)
    _buffer_orders(schedule, add)
    add(_reuse_orders(schedule), OrderCode.REUSE)
    add(_ddr_orders(schedule), OrderCode.DDR)
    return [Order(a, b, code) for a, b, code in found]


@dataclass(frozen=True, slots=True)
class _Touch:
    op: str
    lo: int
    hi: int
    start: int
    end: int


def _touches(schedule: Schedule) -> tuple[dict[str, list[_Touch]], dict[str, list[_Touch]]]:
    """Reads and writes of each buffer, with the accessing op's window."""
    reads: dict[str, list[_Touch]] = defaultdict(list)
    writes: dict[str, list[_Touch]] = defaultdict(list)
    problem = schedule.problem
    for name, p in schedule.ops.items():
        op = problem.ops[name]
        for table, accesses in ((reads, op.reads), (writes, op.writes)):
            for a in accesses:
                if a.buffer is None:
                    continue
                lo, hi = a.bytes if a.bytes is not None else (0, problem.buffers[a.buffer].size)
                table[a.buffer].append(_Touch(name, lo, hi, p.start, p.end))
    return reads, writes


def _segments(touches: list[_Touch]) -> list[tuple[int, int]]:
    cuts = sorted({t.lo for t in touches} | {t.hi for t in touches})
    return list(zip(cuts[:-1], cuts[1:], strict=False))


def _buffer_orders(schedule: Schedule, add: _Collect) -> None:
    """ORDER_WAW and ORDER_RAW, per byte segment of each buffer."""
    reads, writes = _touches(schedule)
    for buffer, buffer_writes in writes.items():
        buffer_reads = reads.get(buffer, [])
        for lo, hi in _segments(buffer_writes + buffer_reads):
            chain = sorted({(w.end, w.start, w.op) for w in buffer_writes
                            if w.lo <= lo and hi <= w.hi})
            ops = [op for _, _, op in chain]
            ends = [end for end, _, _ in chain]
            add(zip(ops, ops[1:], strict=False), OrderCode.WAW)
            for r in buffer_reads:
                if not (r.lo <= lo and hi <= r.hi):
                    continue
                seen = bisect.bisect_right(ends, r.start) - 1
                if seen >= 0 and ops[seen] != r.op:
                    add([(ops[seen], r.op)], OrderCode.RAW)
                later = next((op for op in ops[seen + 1:] if op != r.op), None)
                if later is not None:
                    add([(r.op, later)], OrderCode.RAW)


def _reuse_orders(schedule: Schedule) -> list[tuple[str, str]]:
    """ORDER_REUSE: per memory, an interval map from addresses to their latest occupant;
    a buffer allocated over addresses follows each occupant it replaces."""
    accessors: dict[str, set[str]] = defaultdict(set)
    for name in schedule.ops:
        op = schedule.problem.ops[name]
        for a in (*op.reads, *op.writes):
            if a.buffer is not None:
                accessors[a.buffer].add(name)
    by_memory: dict[str, list[tuple[int, int, int, int, str]]] = defaultdict(list)
    for name, place in schedule.buffers.items():
        if accessors.get(name):
            size = schedule.problem.buffers[name].size
            by_memory[schedule.problem.buffers[name].memory].append(
                (place.alloc, place.free, place.offset, place.offset + size, name))
    pairs: list[tuple[str, str]] = []
    for entries in by_memory.values():
        starts: list[int] = []  # disjoint segments [starts[i], ends[i]) -> owners[i]
        ends: list[int] = []
        owners: list[str] = []
        for _, _, lo, hi, name in sorted(entries):
            i = max(bisect.bisect_right(starts, lo) - 1, 0)
            while i < len(starts) and ends[i] <= lo:
                i += 1
            j = i
            previous: list[str] = []
            while j < len(starts) and starts[j] < hi:
                if owners[j] not in previous:
                    previous.append(owners[j])
                j += 1
            for earlier in previous:
                pairs.extend((a, b) for a in sorted(accessors[earlier])
                             for b in sorted(accessors[name]))
            new = []
            if i < j and starts[i] < lo:
                new.append((starts[i], lo, owners[i]))
            new.append((lo, hi, name))
            if i < j and ends[j - 1] > hi:
                new.append((hi, ends[j - 1], owners[j - 1]))
            starts[i:j] = [s for s, _, _ in new]
            ends[i:j] = [e for _, e, _ in new]
            owners[i:j] = [o for _, _, o in new]
    return pairs


def _rows(box: Box) -> tuple[int, int]:
    """The first dimension of a box (a scalar tensor has one row)."""
    return box[0] if box else (0, 1)


def _intersect(a: Box, b: Box) -> bool:
    return all(lo < other_hi and other_lo < hi
               for (lo, hi), (other_lo, other_hi) in zip(a, b, strict=True))


def _ddr_orders(schedule: Schedule) -> list[tuple[str, str]]:
    """ORDER_DDR: per tensor, writes sorted by their first row; a read looks only at the
    writes whose first row lies within the tallest write of its own rows."""
    tensors = schedule.problem.tensors
    writes: dict[str, list[tuple[int, str, Box]]] = defaultdict(list)
    reads: dict[str, list[tuple[str, Box]]] = defaultdict(list)
    for name in schedule.ops:
        op = schedule.problem.ops[name]
        for a in op.writes:
            if a.tensor is not None and tensors[a.tensor].role != "input":
                writes[a.tensor].append((_rows(a.box or ())[0], name, a.box or ()))
        for a in op.reads:
            if a.tensor is not None and tensors[a.tensor].role != "input":
                reads[a.tensor].append((name, a.box or ()))
    pairs = []
    for tensor, tensor_writes in writes.items():
        tensor_writes.sort()
        firsts = [lo for lo, _, _ in tensor_writes]
        tallest = max(_rows(box)[1] - _rows(box)[0] for _, _, box in tensor_writes)
        for reader, box in reads.get(tensor, []):
            lo = bisect.bisect_left(firsts, _rows(box)[0] - tallest + 1)
            hi = bisect.bisect_left(firsts, _rows(box)[1])
            pairs.extend((writer, reader) for _, writer, written in tensor_writes[lo:hi]
                         if _intersect(written, box))
    return pairs
