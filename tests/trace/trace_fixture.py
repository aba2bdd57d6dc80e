"""A small legal schedule built by hand, shared by the trace and plot tests.

A module of its own (not conftest.py) so tests can import its constants by a name no
other test directory uses.

Two lane kinds (HVX x2, DMA x2), one budget (DDR_BW, capacity 60), one memory (VTCM,
4 KiB). Two tasks: t0 loads A[0:16] into a0, computes o0 on HVX 0, stores o0 to B[0:16];
t1 loads A[16:32] into a1 (which reuses a0's bytes from the instant a0 is freed) and
computes B[16:32] on both HVX units. The reuse at t=250 is deliberate: live bytes peak at
3072 only if frees at an instant come before allocations at it (4096 otherwise).

    time      0    100       250       350    430
    DMA 0     [ld0 ]         [ld1     ]
    DMA 1                    [st0     ]
    HVX 0          [v0      ]          [v1   ]
    HVX 1                              [v1   ]
"""

from __future__ import annotations

from typing import Any

TARGET: dict[str, Any] = {
    "format": "npu-target/1", "name": "tiny", "time_unit": "ns",
    "lanes": {"HVX": 2, "DMA": 2}, "budgets": {"DDR_BW": 60},
    "memories": {"VTCM": {"capacity_bytes": 4096, "alignment_bytes": 256}}}

PROBLEM: dict[str, Any] = {
    "format": "npu-problem/1", "name": "two-tasks",
    "tensors": {"A": {"shape": [32], "dtype": "f16", "role": "input"},
                "B": {"shape": [32], "dtype": "f16", "role": "output"}},
    "tasks": {"t0": {"kind": "scale", "outputs": {"B": [[0, 16]]}},
              "t1": {"kind": "scale", "outputs": {"B": [[16, 32]]}}},
    "buffers": {"a0": {"memory": "VTCM", "size": 1024, "align": 256},
                "o0": {"memory": "VTCM", "size": 2048, "align": 256},
                "a1": {"memory": "VTCM", "size": 1024, "align": 256}},
    "ops": {
        "ld0": {"task": "t0",
                "modes": [{"duration": 100, "lanes": {"DMA": 1}, "budgets": {"DDR_BW": 30}}],
                "reads": [{"tensor": "A", "box": [[0, 16]]}],
                "writes": [{"buffer": "a0", "value": "A0"}]},
        "v0": {"task": "t0", "modes": [{"duration": 150, "lanes": {"HVX": 1}}],
               "reads": [{"buffer": "a0", "value": "A0"}],
               "writes": [{"buffer": "o0", "value": "R0"}]},
        "st0": {"task": "t0",
                "modes": [{"duration": 100, "lanes": {"DMA": 1}, "budgets": {"DDR_BW": 30}}],
                "reads": [{"buffer": "o0", "bytes": [0, 2048], "value": "R0"}],
                "writes": [{"tensor": "B", "box": [[0, 16]]}]},
        "ld1": {"task": "t1",
                "modes": [{"duration": 100, "lanes": {"DMA": 1}, "budgets": {"DDR_BW": 30}}],
                "reads": [{"tensor": "A", "box": [[16, 32]]}],
                "writes": [{"buffer": "a1", "value": "A1"}]},
        "v1": {"task": "t1",
               "modes": [{"duration": 160, "lanes": {"HVX": 1}, "budgets": {"DDR_BW": 10}},
                         {"duration": 80, "lanes": {"HVX": 2}, "budgets": {"DDR_BW": 20}}],
               "reads": [{"buffer": "a1", "value": "A1"}],
               "writes": [{"tensor": "B", "box": [[16, 32]]}]}},
    "after": [["ld0", "v0"], ["v0", "st0"], ["ld1", "v1"]]}

SCHEDULE: dict[str, Any] = {
    "format": "npu-schedule/1", "target": TARGET, "problem": PROBLEM,
    "ops": {"ld0": {"mode": 0, "start": 0, "end": 100, "units": {"DMA": [0]}},
            "v0": {"mode": 0, "start": 100, "end": 250, "units": {"HVX": [0]}},
            "st0": {"mode": 0, "start": 250, "end": 350, "units": {"DMA": [1]}},
            "ld1": {"mode": 0, "start": 250, "end": 350, "units": {"DMA": [0]}},
            "v1": {"mode": 1, "start": 350, "end": 430, "units": {"HVX": [0, 1]}}},
    "buffers": {"a0": {"offset": 0, "alloc": 0, "free": 250},
                "o0": {"offset": 1024, "alloc": 100, "free": 350},
                "a1": {"offset": 0, "alloc": 250, "free": 430}},
    "makespan": 430}

#: What the fixture's sweeps must give, worked out by hand from the diagram above.
PEAK_VTCM = 3072
PEAK_DDR = 60
