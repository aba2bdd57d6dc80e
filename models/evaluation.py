"""Scoring a finished schedule: the figures every path (searched or baseline) reports.

One function, :func:`evaluate`, so that the search, the baselines and the benchmarks
compute makespan, engine use, memory and DDR traffic the same way. It trusts the
schedule (legality is the checker's job) and reads only the file's data.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from models.dtypes import DTYPE_BYTES
from models.formats import Box, Problem, Schedule

__all__ = ["Evaluation", "evaluate", "box_elements", "ddr_bytes"]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Figures of one schedule.

    ``busy_share[lane]`` = busy unit-time / (units * makespan); ``overlap_share`` = share
    of ``[0, makespan)`` in which two or more distinct lane kinds are busy;
    ``peak_bytes[memory]`` = the largest sum of sizes of buffers live at one instant;
    ``extent_bytes[memory]`` = the highest ``offset + size`` used (what a kernel would
    have to reserve, and what the search's ``peak-memory`` secondary minimises); the two
    differ, and each name means only its own quantity everywhere in the project;
    ``ddr_bytes`` = bytes moved by all tensor reads and writes.
    """

    makespan: int
    busy_share: dict[str, float]
    overlap_share: float
    peak_bytes: dict[str, int]
    extent_bytes: dict[str, int]
    ddr_bytes: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def box_elements(box: Box) -> int:
    """Number of elements in a box (product of its extents)."""
    return math.prod(hi - lo for lo, hi in box)


def ddr_bytes(problem: Problem) -> int:
    """Bytes moved by every tensor access of every op: elements * element size."""
    total = 0
    for op in problem.ops.values():
        for access in (*op.reads, *op.writes):
            if access.tensor is not None and access.box is not None:
                dtype = problem.tensors[access.tensor].dtype
                total += box_elements(access.box) * DTYPE_BYTES.get(dtype, 1)
    return total


def evaluate(schedule: Schedule) -> Evaluation:
    """Makespan (largest op end), busy and overlap shares, memory peaks, DDR bytes."""
    problem, target = schedule.problem, schedule.target
    makespan = max((p.end for p in schedule.ops.values()), default=0)
    busy = dict.fromkeys(target.lanes, 0)
    kind_intervals: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for name, placement in schedule.ops.items():
        mode = problem.ops[name].modes[placement.mode]
        for lane, units in mode.lanes.items():
            if units > 0:
                busy[lane] += units * (placement.end - placement.start)
                kind_intervals[lane].append((placement.start, placement.end))
    busy_share = {lane: (busy[lane] / (count * makespan) if makespan else 0.0)
                  for lane, count in target.lanes.items()}
    overlap = _time_with_two_kinds(kind_intervals)
    peak: dict[str, int] = {}
    extent: dict[str, int] = {}
    events: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for name, placed in schedule.buffers.items():
        buffer = problem.buffers[name]
        extent[buffer.memory] = max(extent.get(buffer.memory, 0), placed.offset + buffer.size)
        if placed.free > placed.alloc:
            events[buffer.memory] += [(placed.alloc, buffer.size), (placed.free, -buffer.size)]
    for memory in target.memories:
        live = best = 0
        for _, delta in sorted(events.get(memory, []), key=lambda e: (e[0], e[1])):
            live += delta
            best = max(best, live)
        peak[memory] = best
        extent.setdefault(memory, 0)
    return Evaluation(makespan=makespan, busy_share=busy_share,
                      overlap_share=overlap / makespan if makespan else 0.0,
                      peak_bytes=peak, extent_bytes=extent, ddr_bytes=ddr_bytes(problem))


def _time_with_two_kinds(kind_intervals: dict[str, list[tuple[int, int]]]) -> int:
    """Length of the time in which at least two lane kinds each have a running op."""
    events: list[tuple[int, int, str]] = []
    for lane, intervals in kind_intervals.items():
        for start, end in intervals:
            if end > start:
                events += [(start, 1, lane), (end, -1, lane)]
    events.sort(key=lambda e: (e[0], e[1]))
    running: dict[str, int] = defaultdict(int)
    total, previous = 0, None
    for time, delta, lane in events:
        if previous is not None and sum(1 for n in running.values() if n > 0) >= 2:
            total += time - previous
        running[lane] += delta
        previous = time
    return total

