"""A small legal schedule to start from, and helpers the checker's tests share.

The schedule: a DMA load of input ``A`` into VTCM buffer ``bA``, two HMX tiles that each
read ``bA`` and write half of buffer ``bC``, and a DMA store of ``bC`` into output ``C``.
Tests copy it with :func:`legal` and change one thing.
"""

from __future__ import annotations

import copy
from typing import Any

_LEGAL: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {
        "format": "npu-target/1", "name": "tiny", "time_unit": "ns",
        "lanes": {"HMX": 1, "HVX": 2, "DMA": 2},
        "budgets": {"DDR_BW": 60},
        "memories": {"VTCM": {"capacity_bytes": 16384, "alignment_bytes": 2048}},
        "costs": {},
    },
    "problem": {
        "format": "npu-problem/1", "name": "gemm",
        "tensors": {"A": {"shape": [4, 8], "dtype": "f16", "role": "input"},
                    "C": {"shape": [4, 8], "dtype": "f16", "role": "output"}},
        "tasks": {"g0": {"kind": "gemm", "space": [[0, 4], [0, 8]],
                         "outputs": {"C": [[0, 4], [0, 8]]}, "params": {}}},
        "buffers": {"bA": {"memory": "VTCM", "size": 4096, "align": 2048},
                    "bC": {"memory": "VTCM", "size": 4096, "align": 2048}},
        "ops": {
            "ld": {"task": "g0",
                   "modes": [{"duration": 10, "lanes": {"DMA": 1}, "budgets": {"DDR_BW": 40}}],
                   "reads": [{"tensor": "A", "box": [[0, 4], [0, 8]]}],
                   "writes": [{"buffer": "bA", "value": "A"}]},
            "mm0": {"task": "g0", "space": [[0, 4], [0, 4]],
                    "modes": [{"duration": 20, "lanes": {"HMX": 1}}],
                    "reads": [{"buffer": "bA", "value": "A"}],
                    "writes": [{"buffer": "bC", "bytes": [0, 2048], "value": "C0"}]},
            "mm1": {"task": "g0", "space": [[0, 4], [4, 8]],
                    "modes": [{"duration": 20, "lanes": {"HMX": 1}}],
                    "reads": [{"buffer": "bA", "value": "A"}],
                    "writes": [{"buffer": "bC", "bytes": [2048, 4096], "value": "C1"}]},
            "st": {"task": "g0",
                   "modes": [{"duration": 10, "lanes": {"DMA": 1}, "budgets": {"DDR_BW": 40}},
                             {"duration": 30, "lanes": {"HVX": 1}}],
                   "reads": [{"buffer": "bC", "bytes": [0, 2048], "value": "C0"},
                             {"buffer": "bC", "bytes": [2048, 4096], "value": "C1"}],
                   "writes": [{"tensor": "C", "box": [[0, 4], [0, 8]]}]},
        },
        "after": [["ld", "mm0"], ["ld", "mm1"], ["mm0", "st"], ["mm1", "st"]],
    },
    "ops": {"ld": {"mode": 0, "start": 0, "end": 10, "units": {"DMA": [0]}},
            "mm0": {"mode": 0, "start": 10, "end": 30, "units": {"HMX": [0]}},
            "mm1": {"mode": 0, "start": 30, "end": 50, "units": {"HMX": [0]}},
            "st": {"mode": 0, "start": 50, "end": 60, "units": {"DMA": [1]}}},
    "buffers": {"bA": {"offset": 0, "alloc": 0, "free": 50},
                "bC": {"offset": 4096, "alloc": 10, "free": 60}},
    "makespan": 60,
    "meta": {"solver": "hand", "wall_s": 0.0},
}


def legal() -> dict[str, Any]:
    """A fresh copy of the legal schedule."""
    return copy.deepcopy(_LEGAL)


def on_buffer(ops: dict[str, tuple[int, int, list[Any], list[Any]]],
              size: int = 64) -> dict[str, Any]:
    """A schedule of ops that only touch buffer ``b`` (``size`` bytes, live all along).

    ``ops`` maps a name to ``(start, end, reads, writes)``; an access is
    ``(lo, hi, value)``. No lanes, budgets, tasks or tensors get in the way.
    """
    problem_ops = {}
    placed = {}
    for name, (start, end, reads, writes) in ops.items():
        problem_ops[name] = {
            "task": "t", "modes": [{"duration": 0}],
            "reads": [{"buffer": "b", "bytes": [lo, hi], "value": v} for lo, hi, v in reads],
            "writes": [{"buffer": "b", "bytes": [lo, hi], "value": v} for lo, hi, v in writes]}
        placed[name] = {"mode": 0, "start": start, "end": end}
    last = max((end for _, end, _, _ in ops.values()), default=0)
    return {
        "format": "npu-schedule/1",
        "target": {"format": "npu-target/1", "name": "t", "lanes": {},
                   "memories": {"M": {"capacity_bytes": size}}},
        "problem": {"format": "npu-problem/1", "name": "p", "tasks": {"t": {"kind": "x"}},
                    "buffers": {"b": {"memory": "M", "size": size}}, "ops": problem_ops},
        "ops": placed, "buffers": {"b": {"offset": 0, "alloc": 0, "free": max(last, 1000)}},
        "makespan": last,
    }


def with_idle(*windows: tuple[int, int, dict[str, list[int]]], draw: int = 0,
              lanes: dict[str, int] | None = None) -> dict[str, Any]:
    """The legal schedule plus ops ``i0, i1, ...`` of duration 0 in the given windows."""
    doc = legal()
    for k, (start, end, units) in enumerate(windows):
        mode: dict[str, Any] = {"duration": 0, "lanes": lanes or {}}
        if draw:
            mode["budgets"] = {"DDR_BW": draw}
        doc["problem"]["ops"][f"i{k}"] = {"task": "g0", "modes": [mode]}
        doc["ops"][f"i{k}"] = {"mode": 0, "start": start, "end": end, "units": units}
    return doc
