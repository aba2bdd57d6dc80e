"""The critical path of a finished schedule, split into what its time went to.

Walking back from the op that ends last, each step goes to the predecessor that ended
last at or before the op's start (:func:`predecessors`: an op the problem orders before
it by an ``after`` edge, the op that wrote the buffer value it reads, or the op before
it on a lane unit it holds). Only a predecessor that had ended can have held the op
back, so the chain's ops and the gaps between them (and before the first) tile
``[0, makespan)`` exactly: the parts of :class:`Split` add up to the device makespan;
the fixed overheads of a path (launches, events, barriers) are added as their own part.
The same walk over measured windows gives a measured run's critical path
(:mod:`schedsearch.calibrate.replay`): one rule for planned and measured time.

An op is *conversion* if its task is a layout conversion (kind ``relayout``),
*movement* if it reads or writes a DDR tensor, *compute* otherwise; a gap is *wait*
(the op was ready by its predecessors but held back by a budget, memory, or the search).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import Enum

from models.formats import Op, Problem, Schedule

__all__ = ["Part", "Split", "Windows", "predecessors", "critical_path", "split", "part_of",
           "CONVERSION_KINDS"]

#: Per op, its ``(start, end)``: the schedule's own, or a measured run's.
Windows = Mapping[str, tuple[float, float]]

#: Task kinds whose ops are layout conversions.
CONVERSION_KINDS = frozenset({"relayout"})


class Part(Enum):
    COMPUTE = "compute"
    MOVEMENT = "movement"
    CONVERSION = "conversion"
    WAIT = "wait"


@dataclass(frozen=True, slots=True)
class Split:
    """Ticks of a critical path per part; ``sync`` is the path's launch and
    synchronisation overhead, ``intermediate`` the movement ticks of ops that touch a
    tensor named in ``split``'s ``intermediates`` (a chain's temp tensor)."""

    compute: int
    movement: int
    conversion: int
    wait: int
    sync: int
    intermediate: int = 0

    @property
    def device(self) -> int:
        return self.compute + self.movement + self.conversion + self.wait

    @property
    def total(self) -> int:
        return self.device + self.sync

    def as_dict(self) -> dict[str, int]:
        return {**asdict(self), "device": self.device, "total": self.total}


def part_of(problem: Problem, op: Op) -> Part:
    """The part an op's time counts for (module docstring)."""
    task = problem.tasks.get(op.task)
    if task is not None and task.kind in CONVERSION_KINDS:
        return Part.CONVERSION
    if any(a.tensor is not None for a in (*op.reads, *op.writes)):
        return Part.MOVEMENT
    return Part.COMPUTE


def predecessors(schedule: Schedule, windows: Windows | None = None) -> dict[str, set[str]]:
    """Per op, the ops it waits for: its ``after`` edges, the writer of each buffer value
    it reads, and the op before it in the queue of each lane unit it holds (queues in
    the order of ``windows``, by default the schedule's own)."""
    problem, ops = schedule.problem, schedule.ops
    times = windows if windows is not None else {n: (p.start, p.end) for n, p in ops.items()}
    found: dict[str, set[str]] = {name: set() for name in ops}
    for a, b in problem.after:
        if a in found and b in found:
            found[b].add(a)
    writers = {(a.buffer, a.value): name for name, op in problem.ops.items()
               for a in op.writes if a.buffer is not None}
    for name in ops:
        for access in problem.ops[name].reads:
            writer = writers.get((access.buffer, access.value))
            if access.buffer is not None and writer in found and writer != name:
                found[name].add(writer)
    queues: dict[tuple[str, int], list[str]] = defaultdict(list)
    for name, placed in ops.items():
        for kind, units in placed.units.items():
            for unit in units:
                queues[(kind, unit)].append(name)
    for queue in queues.values():
        queue.sort(key=lambda n: (times[n][0], times[n][1], n))
        for before, after in zip(queue, queue[1:], strict=False):
            found[after].add(before)
    return found


def critical_path(schedule: Schedule, windows: Windows | None = None) -> tuple[str, ...]:
    """The ops of the critical path, first to last (module docstring), in ``windows``
    (by default the schedule's own times); () if no ops."""
    ops = schedule.ops
    if not ops:
        return ()
    times = windows if windows is not None else {n: (p.start, p.end) for n, p in ops.items()}
    preds = predecessors(schedule, times)
    current = max(ops, key=lambda n: (times[n][1], n))
    path = [current]
    while True:
        start = times[current][0]
        earlier = [p for p in preds[current] if times[p][1] <= start]
        if not earlier:
            break
        current = max(earlier, key=lambda n: (times[n][1], n))
        path.append(current)
    return tuple(reversed(path))


def split(schedule: Schedule, sync: int = 0,
          intermediates: frozenset[str] = frozenset()) -> Split:
    """The critical path's ticks per part; ``sync`` is added as the overhead part."""
    problem, ops = schedule.problem, schedule.ops
    ticks = dict.fromkeys(Part, 0)
    intermediate = 0
    now = 0
    for name in critical_path(schedule):
        placed, op = ops[name], problem.ops[name]
        ticks[Part.WAIT] += placed.start - now
        part = part_of(problem, op)
        ticks[part] += placed.end - placed.start
        if part is Part.MOVEMENT and any(a.tensor in intermediates
                                         for a in (*op.reads, *op.writes)):
            intermediate += placed.end - placed.start
        now = placed.end
    return Split(compute=ticks[Part.COMPUTE], movement=ticks[Part.MOVEMENT],
                 conversion=ticks[Part.CONVERSION], wait=ticks[Part.WAIT], sync=sync,
                 intermediate=intermediate)
