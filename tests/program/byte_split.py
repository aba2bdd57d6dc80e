"""The byte-split family: buffers written and read in two byte halves by different ops.

Why: ``verify-program`` once rejected every lowered program of this family (issue 29): the
byte sweep handed out its working list, so the readers of one half leaked into the other
half's piece and asked for orders (``w0 -> r1``) that nothing needs. Each buffer goes
through epochs; in each, one writer per half, then one reader per half (or one reader of
both halves, with two accesses), and the next epoch's writers wait for this epoch's
readers. Ops land on random lane units (or none), in a legal schedule built by a list
scheduler, so lowering it must give a legal program.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from .cases import schedule_doc

SIZE = 16


def byte_split_schedule(buffers: int = 1, epochs: int = 1, cut: int = 8,
                        units: list[str | None] | None = None,
                        durations: list[int] | None = None,
                        joint_reader: bool = False) -> dict[str, Any]:
    """A legal schedule of the family. ``units[k]`` and ``durations[k]`` (cycled) give the
    k-th op's lane unit (``"DMA.0"``, or None for no lane) and duration."""
    units = units or ["DMA.0", "DMA.1"]
    durations = durations or [1]
    halves = [(0, cut), (cut, SIZE)]
    lane_free: dict[str, int] = {}
    ops: dict[str, tuple[str | None, int, int, list[dict], list[dict]]] = {}
    k = 0

    def place(name: str, ready: int, reads: list[dict], writes: list[dict]) -> int:
        """Place one op at its unit's first free time from ``ready``; a writer takes at
        least one tick, so it never ends at the instant a zero-length reader starts."""
        nonlocal k
        unit, duration = units[k % len(units)], durations[k % len(durations)]
        duration = max(duration, 1) if writes else duration
        k += 1
        start = max(ready, lane_free.get(unit, 0)) if unit else ready
        end = start + duration
        if unit:
            lane_free[unit] = end
        ops[name] = (unit, start, end, reads, writes)
        return end

    for b in range(buffers):
        buffer = f"b{b}"
        readers_done = 0
        for e in range(epochs):
            written = []
            for h, (lo, hi) in enumerate(halves):
                written.append(place(f"{buffer}.w{e}.{h}", readers_done, [],
                                     [_access(buffer, lo, hi, f"{buffer}.{e}.{h}")]))
            if joint_reader:
                reads = [_access(buffer, lo, hi, f"{buffer}.{e}.{h}")
                         for h, (lo, hi) in enumerate(halves)]
                readers_done = place(f"{buffer}.r{e}", max(written), reads, [])
            else:
                readers_done = max(
                    place(f"{buffer}.r{e}.{h}", written[h],
                          [_access(buffer, lo, hi, f"{buffer}.{e}.{h}")], [])
                    for h, (lo, hi) in enumerate(halves))
    makespan = max(end for _, _, end, _, _ in ops.values())
    return schedule_doc(ops, {f"b{b}": (SIZE, SIZE * b, 0, makespan)
                              for b in range(buffers)})


def _access(buffer: str, lo: int, hi: int, value: str) -> dict[str, Any]:
    return {"buffer": buffer, "bytes": [lo, hi], "value": value}


@st.composite
def byte_split_schedules(draw: st.DrawFn) -> dict[str, Any]:
    """Random members of the family: 1-3 buffers, 1-3 epochs, a random cut, random units
    (DMA.0, DMA.1, HMX.0 or no lane) and durations (0 included)."""
    size = draw(st.integers(1, 12), label="ops drawn")
    return byte_split_schedule(
        buffers=draw(st.integers(1, 3), label="buffers"),
        epochs=draw(st.integers(1, 3), label="epochs"),
        cut=draw(st.integers(1, SIZE - 1), label="cut"),
        units=draw(st.lists(st.sampled_from(["DMA.0", "DMA.1", "HMX.0", None]),
                            min_size=size, max_size=size), label="units"),
        durations=draw(st.lists(st.integers(0, 4), min_size=size, max_size=size),
                       label="durations"),
        joint_reader=draw(st.booleans(), label="one reader of both halves"))
