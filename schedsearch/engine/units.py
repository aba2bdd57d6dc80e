"""Concrete lane unit indices for ops whose times already respect the lane capacities.

The CP-SAT model keeps lanes as cumulative resources (interchangeable units make an
assignment model needlessly symmetric); this sweep names the units afterwards. Sweeping
ops by start time, an op of demand k takes the k lowest-numbered units that are free at
its start. That always succeeds: if fewer than k units were free, the running ops plus
this one would exceed the capacity at that instant, which the cumulative forbids.
An op with an empty window ``[s, s)`` overlaps nothing, so any units do. Units are
numbered as they are first needed, so a target may declare any number of them (a lane
of 2^63 - 1 units costs what the ops use, not a list of that length).
"""

from __future__ import annotations

from collections.abc import Sequence

from schedsearch.engine.instance import Instance

__all__ = ["assign_units"]


def assign_units(inst: Instance, modes: Sequence[int], starts: Sequence[int],
                 ends: Sequence[int]) -> list[dict[str, tuple[int, ...]]]:
    """Unit indices per op and lane kind; raises ``ValueError`` if capacities are exceeded."""
    busy_until: dict[str, list[int]] = {lane: [] for lane in inst.target.lanes}
    result: list[dict[str, tuple[int, ...]]] = [{} for _ in range(inst.n_ops)]
    for op in sorted(range(inst.n_ops), key=lambda i: (starts[i], ends[i], i)):
        start, end = starts[op], ends[op]
        for lane, demand in inst.modes[op][modes[op]].lanes:
            units = busy_until[lane]
            if end == start:
                result[op][lane] = tuple(range(demand))
                continue
            free = [u for u, until in enumerate(units) if until <= start][:demand]
            while len(free) < demand and len(units) < inst.target.lanes[lane]:
                free.append(len(units))
                units.append(0)
            if len(free) < demand:
                raise ValueError(f"lane {lane} over capacity at time {start} "
                                 f"(op {inst.op_names[op]!r})")
            for u in free:
                units[u] = end
            result[op][lane] = tuple(free)
    return result
