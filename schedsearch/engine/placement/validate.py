"""A direct, vectorised validator for placements: the engine's self-check.

It shares nothing with the search code (no sweep, no sections): it enumerates every pair
of buffers whose lifetimes intersect, in NumPy chunks, and tests their byte ranges. The
project's independent checker judges the same placements through
:func:`~schedsearch.engine.placement.schedule.placement_to_schedule_document`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from schedsearch.engine.placement.problem import PlacementBuffer

__all__ = ["PlacementViolation", "validate_placement"]

#: Pairs tested per NumPy batch: bounds the memory of a check on 60k-buffer instances.
_CHUNK = 1 << 22


@dataclass(frozen=True, slots=True)
class PlacementViolation:
    """One broken rule: ``code`` is ``MISSING``, ``RANGE``, ``ALIGN``, ``PINNED`` or
    ``ALIAS`` (the checker's names where they exist), ``buffers`` the ids involved."""

    code: str
    buffers: tuple[str, ...]
    message: str


def validate_placement(buffers: Sequence[PlacementBuffer], offsets: Mapping[str, int],
                       capacity: int | None = None) -> list[PlacementViolation]:
    """Every violation of the placement rules, not only the first one (empty: legal)."""
    violations: list[PlacementViolation] = []
    for buffer in buffers:
        offset = offsets.get(buffer.id)
        if offset is None:
            violations.append(PlacementViolation("MISSING", (buffer.id,), "no offset"))
            continue
        if offset < 0 or (capacity is not None and offset + buffer.size > capacity):
            violations.append(PlacementViolation(
                "RANGE", (buffer.id,),
                f"[{offset}, {offset + buffer.size}) is outside [0, {capacity})"))
        if offset % buffer.align:
            violations.append(PlacementViolation(
                "ALIGN", (buffer.id,), f"offset {offset} is not a multiple of {buffer.align}"))
        if buffer.offset is not None and offset != buffer.offset:
            violations.append(PlacementViolation(
                "PINNED", (buffer.id,), f"pinned at {buffer.offset}, placed at {offset}"))
    placed = [b for b in buffers if b.live and b.id in offsets]
    if len(placed) < 2:
        return violations
    lower = np.array([b.lower for b in placed], dtype=np.int64)
    upper = np.array([b.upper for b in placed], dtype=np.int64)
    start = np.array([offsets[b.id] for b in placed], dtype=np.int64)
    top = start + np.array([b.size for b in placed], dtype=np.int64)
    order = np.argsort(lower, kind="stable")
    lower, upper, start, top = lower[order], upper[order], start[order], top[order]
    # Buffer i meets every j > i (in order of lower) that is born before i dies.
    stop = np.searchsorted(lower, upper, side="left")
    counts = np.maximum(stop - np.arange(len(placed)) - 1, 0)
    first = 0
    while first < len(placed):
        # A batch of consecutive i whose pair count stays near _CHUNK (at least one i).
        cumulative = np.cumsum(counts[first:])
        last = first + max(1, int(np.searchsorted(cumulative, _CHUNK, side="right")))
        batch = counts[first:last]
        i = np.repeat(np.arange(first, last), batch)
        offsets_in_row = np.arange(int(batch.sum())) - np.repeat(np.cumsum(batch) - batch, batch)
        j = i + 1 + offsets_in_row
        clash = (start[i] < top[j]) & (start[j] < top[i])
        for a, b in zip(i[clash].tolist(), j[clash].tolist(), strict=True):
            x, y = placed[int(order[a])], placed[int(order[b])]
            violations.append(PlacementViolation(
                "ALIAS", (x.id, y.id),
                f"{x.id!r} and {y.id!r} share bytes while both live in "
                f"[{max(x.lower, y.lower)}, {min(x.upper, y.upper)})"))
        first = last
    return violations
