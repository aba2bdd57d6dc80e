"""Turn a placement into a self-contained ``npu-schedule/1`` document for the checker.

The checker knows nothing of placements; it knows schedules. A placement is a schedule
whose times are fixed: one memory of the given capacity, one task, and per buffer one op
whose window is exactly the buffer's lifetime and which writes the whole buffer. The
checker's ``ALIAS``, ``MEM_RANGE`` and ``LIFETIME`` rules then judge exactly the
placement rules, and every other rule holds by construction:

- the op holds no lanes and draws no budget (the target still declares one lane kind,
  which the format requires);
- its single mode's duration is the lifetime's length, so ``DURATION`` holds, also for
  zero-length lifetimes (duration 0, window ``[t, t)``);
- the buffer's ``[alloc, free)`` is the op's window, so the write lies inside it;
- one write per buffer: no ``WRITE_RACE``, no reads, no tensors, no ``after`` edges;
- ``makespan`` is the largest op end.

Zero-size buffers are left out: the format requires ``size >= 1``, and they cannot
conflict with anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from schedsearch.engine.placement.problem import PlacementBuffer

__all__ = ["placement_to_schedule_document", "MEMORY", "TASK"]

MEMORY = "VTCM"
TASK = "place"


def placement_to_schedule_document(buffers: Sequence[PlacementBuffer],
                                   offsets: Mapping[str, int], capacity: int | None = None,
                                   alignment: int = 1) -> dict[str, Any]:
    """The schedule document; ``capacity=None`` uses the placement's peak (at least 1)."""
    kept = [b for b in buffers if b.size > 0]
    if capacity is None:
        capacity = max((offsets[b.id] + b.size for b in kept), default=0)
    target = {"format": "npu-target/1", "name": "placement", "time_unit": "ns",
              "lanes": {"NONE": 1}, "budgets": {},
              "memories": {MEMORY: {"capacity_bytes": max(capacity, 1),
                                    "alignment_bytes": alignment}}}
    ops: dict[str, Any] = {}
    placed_ops: dict[str, Any] = {}
    placed_buffers: dict[str, Any] = {}
    for b in kept:
        name = f"write:{b.id}"
        ops[name] = {"task": TASK, "modes": [{"duration": b.upper - b.lower}],
                     "writes": [{"buffer": b.id, "value": b.id}]}
        placed_ops[name] = {"mode": 0, "start": b.lower, "end": b.upper, "units": {}}
        placed_buffers[b.id] = {"offset": offsets[b.id], "alloc": b.lower, "free": b.upper}
    problem = {"format": "npu-problem/1", "name": "placement",
               "tensors": {}, "tasks": {TASK: {"kind": "placement"}},
               "buffers": {b.id: {"memory": MEMORY, "size": b.size, "align": b.align}
                           for b in kept},
               "ops": ops, "after": []}
    return {"format": "npu-schedule/1", "target": target, "problem": problem,
            "ops": placed_ops, "buffers": placed_buffers,
            "makespan": max((b.upper for b in kept), default=0),
            "meta": {"solver": "schedsearch.engine.placement"}}
