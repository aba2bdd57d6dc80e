"""How fast does ``checker.verify`` go? Prints ops/s and peak memory at 1k, 10k, 100k ops.

Wall-clock ops/s is printed beside CPU seconds: on a shared machine the two differ.

The schedules are synthetic and legal: a pipelined tiled GEMM-like job where each tile
is a DMA load into VTCM, an HMX tile, an HVX pass that updates its result in place, and
a DMA store, with 2 buffers per 4 ops, `after` edges, a DDR budget at capacity and
rotating VTCM addresses. Every rule does real work on them and none fires.

    python benchmarks/bench_checker.py [--sizes 1000 10000 100000] [--json-too] [--phases]

``--phases`` adds, per size, the CPU seconds of reading the document into the checker's
model and of each rule (the machine is shared: CPU time is the figure to compare).

This prints figures; it passes or fails nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import checker  # noqa: E402
from checker.load import build_model, no_gc  # noqa: E402
from checker.rules import RULES  # noqa: E402

TILE = 16          # elements per tile side
SLOT = 2048        # bytes per VTCM buffer
SLOTS = 4          # rotating address slots per buffer kind


def synthetic_schedule(n_ops: int) -> dict[str, Any]:
    """A legal npu-schedule/1 document with about ``n_ops`` ops (4 per tile of a full grid)."""
    wanted = max(1, math.ceil(n_ops / 4))
    cols = max(1, math.isqrt(wanted))
    rows = math.ceil(wanted / cols)
    tiles = rows * cols
    shape = [rows * TILE, cols * TILE]
    ops: dict[str, Any] = {}
    placed: dict[str, Any] = {}
    buffers: dict[str, Any] = {}
    places: dict[str, Any] = {}
    after = []
    for i in range(tiles):
        r, c = divmod(i, cols)
        box = [[r * TILE, (r + 1) * TILE], [c * TILE, (c + 1) * TILE]]
        a, acc = f"a{i}", f"c{i}"
        t = 10 * i
        ops[f"ld{i}"] = {"task": "g", "modes": [{"duration": 10, "lanes": {"DMA": 1},
                                                  "budgets": {"DDR_BW": 30}}],
                         "reads": [{"tensor": "A", "box": box}],
                         "writes": [{"buffer": a, "value": f"A{i}"}]}
        ops[f"mm{i}"] = {"task": "g", "space": box,
                         "modes": [{"duration": 10, "lanes": {"HMX": 1}}],
                         "reads": [{"buffer": a, "value": f"A{i}"}],
                         "writes": [{"buffer": acc, "value": f"P{i}"}]}
        ops[f"vec{i}"] = {"task": "g", "modes": [{"duration": 10, "lanes": {"HVX": 1}}],
                          "reads": [{"buffer": acc, "bytes": [0, SLOT], "value": f"P{i}"}],
                          "writes": [{"buffer": acc, "bytes": [0, SLOT], "value": f"Q{i}"}]}
        ops[f"st{i}"] = {"task": "g", "modes": [{"duration": 10, "lanes": {"DMA": 1},
                                                  "budgets": {"DDR_BW": 30}}],
                         "reads": [{"buffer": acc, "value": f"Q{i}"}],
                         "writes": [{"tensor": "C", "box": box}]}
        placed[f"ld{i}"] = {"mode": 0, "start": t, "end": t + 10, "units": {"DMA": [0]}}
        placed[f"mm{i}"] = {"mode": 0, "start": t + 10, "end": t + 20, "units": {"HMX": [0]}}
        placed[f"vec{i}"] = {"mode": 0, "start": t + 20, "end": t + 30,
                             "units": {"HVX": [i % 4]}}
        placed[f"st{i}"] = {"mode": 0, "start": t + 30, "end": t + 40, "units": {"DMA": [1]}}
        buffers[a] = {"memory": "VTCM", "size": SLOT, "align": SLOT}
        buffers[acc] = {"memory": "VTCM", "size": SLOT, "align": SLOT}
        places[a] = {"offset": (i % SLOTS) * SLOT, "alloc": t, "free": t + 20}
        places[acc] = {"offset": (SLOTS + i % SLOTS) * SLOT, "alloc": t + 10, "free": t + 40}
        after += [[f"ld{i}", f"mm{i}"], [f"mm{i}", f"vec{i}"], [f"vec{i}", f"st{i}"]]
    task = {"kind": "gemm", "space": [[0, shape[0]], [0, shape[1]]],
            "outputs": {"C": [[0, shape[0]], [0, shape[1]]]}}
    return {
        "format": "npu-schedule/1",
        "target": {"format": "npu-target/1", "name": "bench", "lanes":
                   {"HMX": 1, "HVX": 4, "DMA": 2}, "budgets": {"DDR_BW": 60},
                   "memories": {"VTCM": {"capacity_bytes": 2 * SLOTS * SLOT,
                                         "alignment_bytes": SLOT}}},
        "problem": {"format": "npu-problem/1", "name": f"bench{n_ops}",
                    "tensors": {"A": {"shape": shape, "dtype": "f16", "role": "input"},
                                "C": {"shape": shape, "dtype": "f16", "role": "temp"}},
                    "tasks": {"g": task}, "buffers": buffers, "ops": ops, "after": after},
        "ops": placed, "buffers": places, "makespan": 10 * (tiles - 1) + 40,
    }


def phases(doc: dict[str, Any]) -> list[tuple[str, float]]:
    """CPU seconds of building the model, then of each rule in turn (as ``verify`` runs
    them, the collector paused)."""
    rows = []
    with no_gc():
        began = time.process_time()
        model, _ = build_model(doc)
        rows.append(("model", time.process_time() - began))
        for rule in RULES:
            began = time.process_time()
            rule.check(model)
            rows.append(("/".join(rule.codes), time.process_time() - began))
        del model
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--json-too", action="store_true",
                        help="also time the strict parse of the serialized file")
    parser.add_argument("--phases", action="store_true",
                        help="also print the CPU seconds of the model and of each rule")
    args = parser.parse_args()
    print(f"{'ops':>8} {'buffers':>8} {'verify s':>9} {'cpu s':>7} {'ops/s':>10} "
          f"{'parse s':>8} {'cpu s':>7} {'peak RSS MiB':>13} legal")
    for size in args.sizes:
        doc = synthetic_schedule(size)
        parse_s = parse_cpu = float("nan")
        if args.json_too:
            text = json.dumps(doc)
            began, parse_cpu = time.perf_counter(), time.process_time()
            doc = checker.parse_json(text)
            parse_s, parse_cpu = time.perf_counter() - began, time.process_time() - parse_cpu
        began, cpu = time.perf_counter(), time.process_time()
        report = checker.verify(doc)
        elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
        ops = report.stats["ops"]
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{ops:>8} {report.stats['buffers']:>8} {elapsed:>9.3f} {cpu:>7.3f} "
              f"{ops / elapsed:>10.0f} {parse_s:>8.3f} {parse_cpu:>7.3f} {rss:>13.0f} "
              f"{report.legal}")
        if not report.legal:
            for v in report.violations[:5]:
                print(f"  {v.code}: {v.message}")
        if args.phases:
            rows = phases(doc)
            print("  CPU s by phase: " + ", ".join(f"{name} {cpu:.3f}" for name, cpu in rows)
                  + f" (sum {sum(cpu for _, cpu in rows):.3f})")


if __name__ == "__main__":
    main()
