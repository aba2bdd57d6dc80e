"""Tiny schedule documents built from a table of ops, for the program rules' cases."""

from __future__ import annotations

from typing import Any

Access = dict[str, Any]


def schedule_doc(ops: dict[str, tuple[str | None, int, int, list[Access], list[Access]]],
                 buffers: dict[str, tuple[int, int, int, int]] | None = None,
                 tensors: dict[str, tuple[list[int], str]] | None = None,
                 after: list[list[str]] | None = None) -> dict[str, Any]:
    """``ops``: name -> (``"KIND.i"`` or None, start, end, reads, writes); ``buffers``:
    name -> (size, offset, alloc, free) in VTCM; ``tensors``: name -> (shape, role)."""
    placed, defs = {}, {}
    for name, (unit, start, end, reads, writes) in ops.items():
        mode: dict[str, Any] = {"duration": end - start}
        placement: dict[str, Any] = {"mode": 0, "start": start, "end": end}
        if unit is not None:
            kind, index = unit.split(".")
            mode["lanes"] = {kind: 1}
            placement["units"] = {kind: [int(index)]}
        defs[name] = {"task": "t", "modes": [mode], "reads": reads, "writes": writes}
        placed[name] = placement
    buffers = buffers or {}
    return {
        "format": "npu-schedule/1",
        "target": {"format": "npu-target/1", "name": "tiny", "lanes": {"DMA": 2, "HMX": 1},
                   "memories": {"VTCM": {"capacity_bytes": 65536, "alignment_bytes": 1}}},
        "problem": {"format": "npu-problem/1", "name": "case",
                    "tensors": {n: {"shape": s, "dtype": "f16", "role": r}
                                for n, (s, r) in (tensors or {}).items()},
                    "tasks": {"t": {"kind": "x"}},
                    "buffers": {n: {"memory": "VTCM", "size": size}
                                for n, (size, _, _, _) in buffers.items()},
                    "ops": defs, "after": after or []},
        "ops": placed,
        "buffers": {n: {"offset": o, "alloc": a, "free": f}
                    for n, (_, o, a, f) in buffers.items()},
        "makespan": max((p["end"] for p in placed.values()), default=0)}


def write(buffer: str, value: str) -> Access:
    return {"buffer": buffer, "value": value}


def read(buffer: str, value: str) -> Access:
    return {"buffer": buffer, "value": value}
