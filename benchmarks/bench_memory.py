"""Where VTCM binds: the search against a plain list schedule and the memory-aware bound.

The problems (issue 14): a GEMM (128-deep K steps, separate A and B operand buffers per
K step, a 64x64 f32 accumulator per output block) beside an RMSNorm of 16-row blocks of
1,024 or 2,048 f16 columns, with or without an independent copy task, and a chain where
the RMSNorm's output goes to DDR as a ``temp`` tensor that a copy task reads back; all on
Hexagon v75 with VTCM cut to 192 KiB (2,048-byte alignment), where a few tiles' operands
fill it. Plus the bundled Ascend pair, whose UB is 192 KiB as shipped. Each is scaled
(``models.workload.scaled``) to about 150, 600, 2,000 and 8,000 ops.

Per problem, size and time limit it prints: ops, the lower bound without and with its
memory part (which part decides), the plain list schedule's makespan / bound
(:mod:`benchmarks.list_baseline`; ``deadlock`` when it stalls), the search's makespan /
bound at 2 workers, seed 0 (using the whole time limit unless ``--reproducible``), and
whether every schedule is legal by the independent checker; with ``--peer``, PyJobShop's
CP-SAT on the same problem with memory as a renewable resource held only while an op
runs (:func:`benchmarks.peer_pyjobshop.memory_peer_instance`: a relaxation, so its
makespan may lie below any legal schedule's; ``nan`` when it found none). Each search
runs in its own process. Figures, not pass/fail; timings on a shared machine are noisy.

    python -m benchmarks.bench_memory                     # 150..8000 ops, 10 s and 60 s
    python -m benchmarks.bench_memory --quick             # ~150 and ~600 ops, 10 s
    python -m benchmarks.bench_memory --sizes 150 --limits 5 --problems chain
    python -m benchmarks.bench_memory --reproducible     # deterministic work budgets
    python -m benchmarks.bench_memory --json figures.json
    python -m benchmarks.bench_memory --bounds-only       # the bound's parts, no search
    python -m benchmarks.bench_memory --versus-list --quick   # search / plain list at 0.5..10 s

``--versus-list`` (limits 0.5, 1, 2, 5 and 10 s unless ``--limits`` says otherwise) ends
with one table: per problem and size, the search's makespan over the plain list
schedule's at each limit, and whether it was ever longer (it must not be: the search
runs the plain list schedule first and keeps it, issue 31).
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import sys
from collections.abc import Sequence
from typing import Any

from benchmarks.common import write_figures
from models.formats import Problem, Target
from models.targets import load_target
from models.workload import Workload, load_workload, scaled, tile, workload_from_dict

__all__ = ["TIGHT_VTCM", "PROBLEMS", "tight_target", "tight_problem", "main"]

#: The limits ``--versus-list`` compares at (issue 31: a short limit must never lose to
#: the plain list schedule).
VERSUS_LIMITS = (0.5, 1.0, 2.0, 5.0, 10.0)
#: The VTCM capacity of the tight-memory problems (issue 14): 192 KiB.
TIGHT_VTCM = 192 * 1024
#: The parts of :func:`schedsearch.engine.bounds.lower.lower_bound` that know memory
#: (models/memory_bound.py).
_MEMORY_PARTS = ("memory:", "exclusion:", "gaps:")
_GEMM = {"kind": "gemm", "M": 256, "N": 256, "K": 256, "bm": 64, "bn": 64, "bk": 128}


def _rmsnorm(cols: int, out: str = "Y") -> dict[str, Any]:
    return {"name": "r0", "kind": "rmsnorm", "rows": 128, "cols": cols, "block_rows": 16,
            "x": "X", "weight": "W", "out": out}


_COPY = {"name": "c0", "kind": "copy", "rows": 64, "cols": 1024, "block_rows": 16,
         "x": "S", "out": "D"}
#: name -> (workload document or bundled example name). Every Hexagon one runs on
#: :func:`tight_target`; the Ascend example keeps its own target.
PROBLEMS: dict[str, dict[str, Any] | str] = {
    "pair": {"name": "tight-pair", "target": "hexagon-v75",
             "tasks": [{"name": "g0", **_GEMM}, _rmsnorm(1024)]},
    "pair-wide": {"name": "tight-pair-wide", "target": "hexagon-v75",
                  "tasks": [{"name": "g0", **_GEMM}, _rmsnorm(2048)]},
    "triple": {"name": "tight-triple", "target": "hexagon-v75",
               "tasks": [{"name": "g0", **_GEMM}, _rmsnorm(1024), _COPY]},
    "chain": {"name": "tight-chain", "target": "hexagon-v75",
              "tasks": [_rmsnorm(2048, out="H"),
                        {**_COPY, "rows": 128, "cols": 2048, "x": "H"}]},
    "ascend": "gemm-rmsnorm-ascend",
}


def tight_target(target: Target, capacity: int = TIGHT_VTCM) -> Target:
    """``target`` with its VTCM cut to ``capacity`` bytes (other memories unchanged)."""
    if "VTCM" not in target.memories:
        return target
    memory = dataclasses.replace(target.memories["VTCM"], capacity_bytes=capacity)
    return dataclasses.replace(target, memories={**target.memories, "VTCM": memory})


def _workload(name: str) -> Workload:
    spec = PROBLEMS[name]
    return load_workload(spec) if isinstance(spec, str) else workload_from_dict(spec, name)


def tight_problem(name: str, ops: int | None = None) -> tuple[Problem, Target]:
    """Problem ``name`` of :data:`PROBLEMS`, scaled to about ``ops`` ops (as written when
    None), and its tight target."""
    workload = _workload(name)
    target = load_target(workload.target)
    if workload.target.startswith("hexagon"):
        target = tight_target(target)
    if ops is not None:
        base = len(tile(workload, target).ops)
        workload = scaled(workload, ops / base)
    return tile(workload, target), target


def _case(name: str, ops: int, limit: float, reproducible: bool, peer: bool,
          queue: multiprocessing.Queue) -> None:
    """One row's figures, put on ``queue`` (runs in a process of its own)."""
    import checker
    from benchmarks.list_baseline import list_schedule
    from models.formats import schedule_to_dict
    from schedsearch.engine.bounds.lower import lower_bound
    from schedsearch.engine.hazards import build_dag
    from schedsearch.engine.instance import build_instance
    from schedsearch.engine.search import solve_report
    from schedsearch.engine.solution import to_schedule

    problem, target = tight_problem(name, ops)
    bound = lower_bound(problem, target)
    memory = {k: v for k, v in bound.parts.items() if k.startswith(_MEMORY_PARTS)}
    other = max((v for k, v in bound.parts.items() if not k.startswith(_MEMORY_PARTS)),
                default=0)
    inst = build_instance(problem, target)
    baseline = list_schedule(inst, build_dag(inst))
    legal = True
    base_makespan = None
    if baseline is not None:
        schedule = to_schedule(inst, baseline, {"solver": "list"})
        legal = checker.verify(schedule_to_dict(schedule)).legal
        base_makespan = schedule.makespan
    report = solve_report(problem, target, time_limit=limit, seed=0, workers=2,
                          reproducible=reproducible)
    legal = legal and checker.verify(schedule_to_dict(report.schedule)).legal
    meta = report.schedule.meta or {}
    relaxed = None
    if peer:
        from benchmarks.peer_pyjobshop import memory_peer_instance, solve_peer

        relaxed = solve_peer(memory_peer_instance(problem, target), time_limit=limit,
                             workers=2, seed=0).makespan
    queue.put({"peer": relaxed, "problem": name, "ops": len(problem.ops), "limit": limit,
               "bound_without_memory": other, "memory_part": max(memory.values(), default=0),
               "bound": report.bound,
               "part": max(report.bound_parts, key=report.bound_parts.__getitem__),
               "baseline": base_makespan, "makespan": report.schedule.makespan,
               "ratio": report.ratio, "solver": meta.get("solver"),
               "wall_s": meta.get("wall_s"), "legal": legal})


def _bounds(names: Sequence[str], sizes: Sequence[int]) -> list[dict[str, Any]]:
    """Per problem and size: the lower bound's parts and the time it takes, no search
    (the bound runs inside every solve's time limit, so its time is a figure too)."""
    import time

    from schedsearch.engine.bounds.lower import lower_bound

    print(f"{'problem':10} {'ops':>6} {'LB':>10} {'LB part':>16} {'bound s':>8}  other parts")
    rows = []
    for name in names:
        for size in sizes:
            problem, target = tight_problem(name, size)
            began = time.perf_counter()
            parts = lower_bound(problem, target).parts
            seconds = time.perf_counter() - began
            binding = max(parts, key=parts.__getitem__)
            others = ", ".join(f"{k} {v:,}" for k, v in sorted(parts.items(),
                                                                key=lambda kv: -kv[1])[1:4])
            print(f"{name:10} {len(problem.ops):>6} {parts[binding]:>10,} {binding:>16} "
                  f"{seconds:>8.2f}  {others}", flush=True)
            rows.append({"problem": name, "ops": len(problem.ops), "parts": dict(parts),
                         "binding": binding, "bound_s": seconds})
    return rows


def _row(row: dict[str, Any]) -> str:
    base = row["baseline"]
    base_text = f"{base / row['bound']:>8.3f}" if base is not None else f"{'deadlock':>8}"
    versus = f"{row['makespan'] / base:>7.3f}" if base is not None else f"{'-':>7}"
    return (f"{row['problem']:10} {row['ops']:>6} {row['limit']:>5g} "
            f"{row['bound_without_memory']:>9} {row['memory_part']:>9} {row['bound']:>9} "
            f"{row['part']:>14} {base_text} {row['ratio']:>7.3f} {versus} "
            f"{row['solver']:>17} {row['wall_s']:>6.1f} {'yes' if row['legal'] else 'NO':>5} "
            f"{row['peer'] / row['bound'] if row['peer'] else float('nan'):>7.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="~150 and ~600 ops, 10 s")
    parser.add_argument("--problems", nargs="+", choices=tuple(PROBLEMS), default=None)
    parser.add_argument("--sizes", nargs="+", type=int, default=None, metavar="OPS")
    parser.add_argument("--limits", nargs="+", type=float, default=None, metavar="S")
    parser.add_argument("--reproducible", action="store_true",
                        help="stop each search by its deterministic work budget "
                             "(default: use the whole time limit)")
    parser.add_argument("--peer", action="store_true",
                        help="also PyJobShop with memory as a renewable resource held only "
                             "while an op runs (a relaxation; needs pyjobshop)")
    parser.add_argument("--json", default=None, metavar="PATH",
                        help="also write every row's figures to PATH")
    parser.add_argument("--bounds-only", action="store_true",
                        help="print the lower bound's parts and their time, no search")
    parser.add_argument("--versus-list", action="store_true",
                        help="end with the search / plain list schedule at each limit "
                             "(default limits 0.5 1 2 5 10)")
    args = parser.parse_args(argv)
    sizes = args.sizes or ((150, 600) if args.quick else (150, 600, 2000, 8000))
    if args.bounds_only:
        write_figures(args.json, {"bounds": _bounds(args.problems or tuple(PROBLEMS), sizes)})
        return 0
    limits = args.limits or (VERSUS_LIMITS if args.versus_list else
                             (10.0,) if args.quick else (10.0, 60.0))
    print(f"{'problem':10} {'ops':>6} {'limit':>5} {'LB-mem':>9} {'mem part':>9} "
          f"{'LB':>9} {'LB part':>14} {'list/LB':>8} {'mk/LB':>7} {'mk/list':>7} "
          f"{'solver':>17} {'wall':>6} {'legal':>5} {'pjs/LB':>7}")
    context = multiprocessing.get_context("spawn")
    rows = []
    for name in args.problems or PROBLEMS:
        for size in sizes:
            for limit in limits:
                queue = context.Queue()
                process = context.Process(target=_case, args=(name, size, limit,
                                                              args.reproducible,
                                                              args.peer, queue))
                process.start()
                row = queue.get()
                process.join()
                rows.append(row)
                print(_row(row), flush=True)
    if args.versus_list:
        _versus_list(rows, limits)
    write_figures(args.json, {"rows": rows})
    return 0 if all(row["legal"] for row in rows) else 1


def _versus_list(rows: Sequence[dict[str, Any]], limits: Sequence[float]) -> None:
    """Per problem and size, the search's makespan over the plain list schedule's at each
    limit (``-`` where the list schedule deadlocks), and the cells where it is longer."""
    print(f"\nsearch / plain list schedule\n{'problem':10} {'ops':>6} "
          + " ".join(f"{f'{limit:g} s':>7}" for limit in limits))
    worse = []
    for key in dict.fromkeys((row["problem"], row["ops"]) for row in rows):
        cells = {row["limit"]: row for row in rows if (row["problem"], row["ops"]) == key}
        texts = []
        for limit in limits:
            row = cells.get(limit)
            if row is None or row["baseline"] is None:
                texts.append(f"{'-':>7}")
                continue
            texts.append(f"{row['makespan'] / row['baseline']:>7.3f}")
            if row["makespan"] > row["baseline"]:
                worse.append(f"{key[0]} {key[1]} ops at {limit:g} s")
        print(f"{key[0]:10} {key[1]:>6} " + " ".join(texts))
    print("never worse than the plain list schedule" if not worse else
          "WORSE than the plain list schedule: " + ", ".join(worse))


if __name__ == "__main__":
    sys.exit(main())
