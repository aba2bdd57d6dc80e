"""The critical path of a finished schedule, split into what its time went to.

Walking back from the op that ends last, each step goes to the predecessor that ended
last at or before the op's start; a predecessor is an op the problem orders before it
(an ``after`` edge), an op that wrote a buffer it reads, or the op before it on a lane
unit it holds. The chain's ops and the gaps between them (and before the first) tile
``[0, makespan)`` exactly, so the parts of :class:`Split` add up to the device makespan;
the fixed overheads of a path (launches, events, barriers) are added as their own part.

An op is *conversion* if its task is a layout conversion (kind ``relayout``),
*movement* if it reads or writes a DDR tensor, *compute* otherwise; a gap is *wait*
(the op was ready by its predecessors but held back by a budget, memory, or the search).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from enum import Enum

from models.formats import Op, Problem, Schedule

__all__ = ["Part", "Split", "critical_path", "split", "part_of", "CONVERSION_KINDS"]

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


def critical_path(schedule: Schedule) -> tuple[str, ...]:
    """The ops of the critical path, first to last (module docstring); () if no ops."""
    problem, ops = schedule.problem, schedule.ops
    if not ops:
        return ()
    preds: dict[str, set[str]] = defaultdict(set)
    for a, b in problem.after:
        preds[b].add(a)
    writers: dict[str, list[str]] = defaultdict(list)
    for name, op in problem.ops.items():
        for access in op.writes:
            if access.buffer is not None:
                writers[access.buffer].append(name)
    for name, op in problem.ops.items():
        for access in op.reads:
            if access.buffer is not None:
                preds[name].update(w for w in writers[access.buffer] if w != name)
    queues: dict[tuple[str, int], list[str]] = defaultdict(list)
    for name, placed in ops.items():
        for kind, units in placed.units.items():
            for unit in units:
                queues[(kind, unit)].append(name)
    for queue in queues.values():
        queue.sort(key=lambda n: (ops[n].start, ops[n].end))
        for before, after in zip(queue, queue[1:], strict=False):
            preds[after].add(before)
    current = max(ops, key=lambda n: (ops[n].end, n))
    path = [current]
    while True:
        start = ops[current].start
        earlier = [p for p in preds[current] if p in ops and ops[p].end <= start]
        if not earlier:
            break
        current = max(earlier, key=lambda n: (ops[n].end, n))
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
