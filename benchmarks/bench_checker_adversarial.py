"""Hostile inputs for ``schedcheck``: does any small file make it slow or greedy?

Each family below is one shape an adversary used against the checker (issue 29), built
at a given number of ops. For every family and size, ``verify`` (of the schedule) and
``verify-program`` (of a program over it) run in a fresh subprocess each, so the peak
RSS printed is that case's alone (and beside it the RSS once the document is parsed,
before the checker runs); seconds (wall clock and CPU) are those of the verification
only (the document is built and parsed beforehand, and the collector's pass that the
parse leaves due is made before the clock starts), the least over ``--repeat`` fresh
processes, each verifying once as the CLI does (verifying one document again in the
same process finds it and the allocator's pools warm in the cache: at 4k ops, where
they fit, that made the small sizes faster and a step's growth up to 5.5x where cold
runs gave 4.3x). The growth column is
the CPU time's per 4x size (on a shared machine wall clock mostly measures the
neighbours). Goals (docs/checker.md): every family at 64k ops within 10 s and 2 GB, growing
at most 5x per 4x.

    python benchmarks/bench_checker_adversarial.py [--sizes 1000 4000 16000 64000]
                                                   [--families boxes staircase ...]
                                                   [--calls]

``--calls`` counts each verification's function calls instead (:func:`count_calls`):
the same figure on every run, where one step of CPU time moves by 10-20 % between runs
on the shared machine and by more where a size's data outgrows a cache.

This prints figures; it passes or fails nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import math
import pstats
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import checker  # noqa: E402
from checker.program import verify_program  # noqa: E402

Doc = dict[str, Any]

#: The lane count of the ``lanes`` family: units that exist but nobody uses.
HUGE_LANE = 10**9
#: The rank of the ``boxes`` family's spaces and output tensor.
BOX_RANK = 64


def _document(lanes: dict[str, int], ops: dict[str, Doc], placed: dict[str, Doc], *,
              tasks: dict[str, Doc] | None = None, tensors: dict[str, Doc] | None = None,
              buffers: dict[str, Doc] | None = None,
              placements: dict[str, Doc] | None = None) -> Doc:
    """A schedule document; ``ops`` and ``placed`` are the problem's ops and their places."""
    return {
        "format": "npu-schedule/1",
        "target": {"format": "npu-target/1", "name": "hostile", "lanes": lanes,
                   "memories": {"M": {"capacity_bytes": 1 << 40, "alignment_bytes": 1}}},
        "problem": {"format": "npu-problem/1", "name": "hostile", "tensors": tensors or {},
                    "tasks": tasks or {"t": {"kind": "x"}}, "buffers": buffers or {},
                    "ops": ops},
        "ops": placed,
        "buffers": placements or {},
        "makespan": max((p["end"] for p in placed.values()), default=0)}


def _op(duration: int, task: str = "t", lane: str | None = None, **accesses: Any) -> Doc:
    mode: Doc = {"duration": duration}
    if lane:
        mode["lanes"] = {lane: 1}
    return {"task": task, "modes": [mode], **accesses}


def _place(start: int, end: int, lane: str | None = None, unit: int = 0) -> Doc:
    place: Doc = {"mode": 0, "start": start, "end": end}
    if lane:
        place["units"] = {lane: [unit]}
    return place


def boxes(n: int) -> tuple[Doc, dict[str, list[str]]]:
    """One task of rank 64 split into n unit boxes along its first dimension (every other
    dimension ``[0, 1)``), each op writing its box of an output tensor ``[n] + [1] * 63``.
    A partition check that walked the 2^rank corners of every box never ended."""
    rest = [[0, 1]] * (BOX_RANK - 1)
    space = [[0, n], *rest]
    ops = {f"o{i}": _op(1, space=[[i, i + 1], *rest],
                        writes=[{"tensor": "T", "box": [[i, i + 1], *rest]}]) for i in range(n)}
    placed = {f"o{i}": _place(0, 1) for i in range(n)}
    return _document({"DMA": 1}, ops, placed,
                     tasks={"t": {"kind": "x", "space": space, "outputs": {"T": space}}},
                     tensors={"T": {"shape": [n] + [1] * (BOX_RANK - 1), "dtype": "f16",
                                    "role": "output"}}), {}


def staircase(n: int) -> tuple[Doc, dict[str, list[str]]]:
    """A square task space cut into a staircase: column i split at height i + 1, so about
    n/2 distinct cuts per dimension and a compressed grid of n^2/4 cells, past its cap."""
    m = (n + 1) // 2
    ops, placed = {}, {}
    for i in range(m):
        for part, (lo, hi) in enumerate(((0, i + 1), (i + 1, m))):
            if lo < hi:
                name = f"o{i}.{part}"
                ops[name] = _op(1, space=[[i, i + 1], [lo, hi]])
                placed[name] = _place(0, 1)
    return _document({"DMA": 1}, ops, placed,
                     tasks={"t": {"kind": "x", "space": [[0, m], [0, m]]}}), {}


def lanes(n: int) -> tuple[Doc, dict[str, list[str]]]:
    """A lane of 10^9 units, n ops one after another, each on its own unit far apart. A
    table per unit cost one entry per unit; a queue per unit is missing for all but n."""
    ops = {f"o{i}": _op(1, lane="DMA") for i in range(n)}
    placed = {f"o{i}": _place(i, i + 1, "DMA", (i * 7919) % HUGE_LANE) for i in range(n)}
    return _document({"DMA": HUGE_LANE}, ops, placed), {}


def _reuse(n: int, lane: str | None) -> tuple[Doc, dict[str, list[str]]]:
    """Two buffers at one address, one after the other: op 0 writes X, n/2 - 1 ops read
    it, then op n/2 writes Y and the rest read it, in sequence. ORDER_REUSE asks every
    access of X before every access of Y: n^2/4 pairs when enumerated."""
    half = max(n // 2, 1)
    ops, placed = {}, {}
    for i in range(n):
        buffer, first = ("X", 0) if i < half else ("Y", half)
        access = {"buffer": buffer, "value": buffer}
        ops[f"o{i}"] = _op(1, lane=lane, **({"writes": [access]} if i == first
                                             else {"reads": [access]}))
        placed[f"o{i}"] = _place(i, i + 1, lane)
    buffers = {"X": {"memory": "M", "size": 64}, "Y": {"memory": "M", "size": 64}}
    places = {"X": {"offset": 0, "alloc": 0, "free": half},
              "Y": {"offset": 0, "alloc": half, "free": n}}
    waits = {} if lane else {f"o{i}": [f"o{i - 1}"] for i in range(1, n)}
    return _document({"DMA": 1}, ops, placed, buffers=buffers, placements=places), waits


def reuse_lane(n: int) -> tuple[Doc, dict[str, list[str]]]:
    """:func:`_reuse` with every op on one DMA unit (its queue orders them)."""
    return _reuse(n, "DMA")


def reuse_waits(n: int) -> tuple[Doc, dict[str, list[str]]]:
    """:func:`_reuse` with the ops on no lane, ordered by a chain of waits."""
    return _reuse(n, None)


def queues(n: int) -> tuple[Doc, dict[str, list[str]]]:
    """n ops on n units of one lane, each on its own unit: op i writes buffer b_i and op
    i + 1 reads it, a chain of waits. A happens-before table of ops x queues was n^2."""
    ops, placed, buffers, places = {}, {}, {}, {}
    for i in range(n):
        reads = [{"buffer": f"b{i - 1}", "value": f"v{i - 1}"}] if i else []
        ops[f"o{i}"] = _op(1, lane="U", reads=reads,
                           writes=[{"buffer": f"b{i}", "value": f"v{i}"}])
        placed[f"o{i}"] = _place(i, i + 1, "U", i)
        buffers[f"b{i}"] = {"memory": "M", "size": 8}
        places[f"b{i}"] = {"offset": 8 * i, "alloc": i, "free": i + 2}
    waits = {f"o{i}": [f"o{i - 1}"] for i in range(1, n)}
    return _document({"U": n}, ops, placed, buffers=buffers, placements=places), waits


def writers(n: int) -> tuple[Doc, dict[str, list[str]]]:
    """n ops running at once, each writing its own byte of one buffer, then n readers at
    once, each reading its byte (and waiting for its writer): every write is live while
    every other is."""
    ops, placed = {}, {}
    for i in range(n):
        ops[f"w{i}"] = _op(2, writes=[{"buffer": "B", "bytes": [i, i + 1], "value": f"v{i}"}])
        placed[f"w{i}"] = _place(0, 2)
        ops[f"r{i}"] = _op(2, reads=[{"buffer": "B", "bytes": [i, i + 1], "value": f"v{i}"}])
        placed[f"r{i}"] = _place(2, 4)
    return _document({"DMA": 1}, ops, placed, buffers={"B": {"memory": "M", "size": n}},
                     placements={"B": {"offset": 0, "alloc": 0, "free": 4}}), \
        {f"r{i}": [f"w{i}"] for i in range(n)}


#: Family name -> builder of (schedule, waits) at about n ops.
FAMILIES: dict[str, Callable[[int], tuple[Doc, dict[str, list[str]]]]] = {
    "boxes": boxes, "staircase": staircase, "lanes": lanes, "reuse_lane": reuse_lane,
    "reuse_waits": reuse_waits, "queues": queues, "writers": writers}


def program(schedule: Doc, waits: dict[str, list[str]]) -> Doc:
    """The program over ``schedule``: each used unit's ops in order of start, and
    ``waits``. (Units nobody uses get no queue, so the ``lanes`` family is not legal.)"""
    target = schedule["target"]["lanes"]
    queues: dict[str, list[tuple[int, str]]] = {
        f"{lane}.{unit}": [] for lane, count in target.items() if count <= 1000
        for unit in range(count)}
    for name, place in schedule["ops"].items():
        for lane, units in place.get("units", {}).items():
            for unit in units:
                queues.setdefault(f"{lane}.{unit}", []).append((place["start"], name))
    return {"format": "npu-program/1", "schedule": schedule,
            "queues": {unit: [name for _, name in sorted(ops)] for unit, ops in queues.items()},
            "waits": waits}


def parsed_case(family: str, n: int, mode: str) -> tuple[int, Doc]:
    """One case's op count and its document as the checker gets it: built, written as
    JSON and parsed again (only the parsed document stays alive, as in the CLI)."""
    schedule, waits = FAMILIES[family](n)
    ops = len(schedule["ops"])
    text = json.dumps(program(schedule, waits) if mode == "verify-program" else schedule)
    del schedule, waits
    return ops, json.loads(text)


def judge(document: Doc, mode: str) -> Any:
    """The checker's report on ``document``, by ``verify`` or ``verify-program``."""
    return verify_program(document) if mode == "verify-program" else checker.verify(document)


def run_case(family: str, n: int, mode: str) -> Doc:
    """Build, parse and verify one case in this process: seconds of the verification,
    this process's peak RSS, and what the report says."""
    ops, document = parsed_case(family, n, mode)
    # the collector's debt from parsing (a full pass over the document, due at some
    # later allocation) is paid before the clock starts: parsing is apart
    gc.collect()
    parsed = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    began, cpu_began = time.perf_counter(), time.process_time()
    report = judge(document, mode)
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu_began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"ops": ops, "seconds": seconds, "cpu_seconds": cpu, "parsed_bytes": parsed,
            "peak_bytes": peak, "violations": len(report.violations),
            "codes": sorted(report.codes())}


def count_calls(family: str, n: int, mode: str) -> tuple[int, int]:
    """The ops of one case and the function calls (Python and built-in) its verification
    makes, counted by :mod:`cProfile`: the same on every run and machine, so its growth
    per 4x shows the shape of the work without the noise of a clock or the caches (a
    linear pass makes 4x the calls; a pass over all pairs 16x). The document is verified
    once before it is counted, so what a process does only the first time (imports
    inside the checker, compiled patterns) is nobody's size."""
    ops, document = parsed_case(family, n, mode)
    judge(document, mode)
    profile = cProfile.Profile()
    profile.enable()
    judge(document, mode)
    profile.disable()
    return ops, pstats.Stats(profile).total_calls


def _print_calls(families: list[str], modes: list[str], sizes: list[int]) -> None:
    print("| family | mode | ops | calls | growth per 4x |\n|---|---|---:|---:|---:|")
    for family in families:
        for mode in modes:
            previous = None
            for n in sizes:
                ops, calls = count_calls(family, n, mode)
                growth = f"{calls / previous:.2f}x" if previous else ""
                previous = calls
                print(f"| {family} | {mode} | {ops} | {calls:,} | {growth} |", flush=True)


def _subprocess(family: str, n: int, mode: str, timeout: float) -> Doc | None:
    try:
        done = subprocess.run([sys.executable, __file__, "--case", family, str(n), mode],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return {"failed": f"exit {done.returncode}: {last[:80]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _least_of(family: str, n: int, mode: str, timeout: float, repeat: int) -> Doc | None:
    """The case in ``repeat`` fresh processes: the least seconds, the largest peak."""
    best: Doc | None = None
    for _ in range(repeat):
        row = _subprocess(family, n, mode, timeout)
        if row is None or "failed" in row:
            return row
        if best is None:
            best = row
            continue
        best["seconds"] = min(best["seconds"], row["seconds"])
        best["cpu_seconds"] = min(best["cpu_seconds"], row["cpu_seconds"])
        best["peak_bytes"] = max(best["peak_bytes"], row["peak_bytes"])
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 16000, 64000])
    parser.add_argument("--families", nargs="+", choices=list(FAMILIES),
                        default=list(FAMILIES))
    parser.add_argument("--modes", nargs="+", choices=["verify", "verify-program"],
                        default=["verify", "verify-program"])
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds before a case is reported as timed out")
    parser.add_argument("--repeat", type=int, default=3,
                        help="verify each case in this many fresh processes, keep the least time")
    parser.add_argument("--calls", action="store_true",
                        help="count the function calls of each verification instead of "
                             "timing it (deterministic; in this process)")
    parser.add_argument("--case", nargs=3, metavar=("FAMILY", "N", "MODE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.calls:
        _print_calls(args.families, args.modes, args.sizes)
        return
    if args.case:
        family, n, mode = args.case
        print(json.dumps(run_case(family, int(n), mode)))
        return
    print("| family | mode | ops | wall s | CPU s | parsed MB | peak MB | CPU growth per 4x "
          "| codes |\n|---|---|---:|---:|---:|---:|---:|---:|---|")
    overall = []
    for family in args.families:
        for mode in args.modes:
            previous: float | None = None
            first: tuple[int, float] | None = None
            for n in args.sizes:
                row = _least_of(family, n, mode, args.timeout, max(1, args.repeat))
                if row is None or "failed" in row:
                    why = "timed out" if row is None else row["failed"]
                    wall = f"> {args.timeout:g}" if row is None else ""
                    print(f"| {family} | {mode} | ~{n} | {wall} | | | | | {why} |", flush=True)
                    break
                growth = f"{row['cpu_seconds'] / previous:.1f}x" if previous else ""
                previous = max(row["cpu_seconds"], 1e-3)
                first = first or (row["ops"], previous)
                last = (row["ops"], previous)
                print(f"| {family} | {mode} | {row['ops']} | {row['seconds']:.2f} | "
                      f"{row['cpu_seconds']:.2f} | {row['parsed_bytes'] / 2**20:.0f} | "
                      f"{row['peak_bytes'] / 2**20:.0f} | {growth} | "
                      f"{' '.join(row['codes']) or 'legal'} |", flush=True)
            if first and last[0] > first[0]:
                overall.append((family, mode, first, last))
    # one step of a loaded machine's CPU time is noisy at small sizes: the whole range's
    # growth, as a geometric mean per 4x, says more about the shape of the cost
    print("\n| family | mode | ops | CPU s | CPU growth per 4x over the range |\n"
          "|---|---|---|---|---:|")
    for family, mode, (n0, cpu0), (n1, cpu1) in overall:
        per_4x = (cpu1 / cpu0) ** (math.log(4) / math.log(n1 / n0))
        print(f"| {family} | {mode} | {n0} to {n1} | {cpu0:.2f} to {cpu1:.2f} | {per_4x:.1f}x |")


if __name__ == "__main__":
    main()
