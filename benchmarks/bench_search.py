"""Search quality and speed on the bundled pair and triple workloads, scaled in size.

Prints one row per (workload, size, time limit): ops, time to the first legal schedule
(validation + hazards + constructive), makespan / best lower bound, CP-SAT gap where a
whole model was solved, wall time and peak RSS. Each case runs in its own process so the
RSS is its own. Figures, not pass/fail.

    python benchmarks/bench_search.py            # ~100/500/2000/8000 ops, 10 s and 60 s
    python benchmarks/bench_search.py --quick    # ~100/500 ops, 5 s: a few minutes
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time

from models.targets import load_target
from models.workload import load_workload, scaled, tile

WORKLOADS = {"pair": "gemm-rmsnorm-v75", "triple": "gemm-rmsnorm-copy-v75"}


def _case(name: str, target_ops: int, time_limit: float, queue: multiprocessing.Queue) -> None:
    from models.bounds import lower_bound
    from models.validate import validate_problem
    from schedsearch.api import solve_report
    from schedsearch.constructive import construct
    from schedsearch.hazards import build_dag
    from schedsearch.instance import build_instance

    workload = load_workload(WORKLOADS[name])
    target = load_target(workload.target)
    base = len(tile(workload, target).ops)
    problem = tile(scaled(workload, target_ops / base), target)
    begin = time.perf_counter()
    validate_problem(problem, target)
    inst = build_instance(problem, target)
    construct(inst, build_dag(inst))
    first = time.perf_counter() - begin
    report = solve_report(problem, target, time_limit=time_limit, seed=0, workers=2)
    meta = report.schedule.meta or {}
    queue.put({"workload": name, "ops": len(problem.ops), "limit": time_limit,
               "first_s": first, "ratio": report.ratio,
               "cost_lb": lower_bound(problem, target).value,
               "gap": meta.get("gap") if meta.get("cpsat_bound") is not None else None,
               "solver": meta.get("solver"), "wall_s": meta.get("wall_s"),
               "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="~100 and ~500 ops, 5 s only")
    args = parser.parse_args()
    sizes = (100, 500) if args.quick else (100, 500, 2000, 8000)
    limits = (5.0,) if args.quick else (10.0, 60.0)
    print(f"{'workload':8} {'ops':>6} {'limit':>6} {'first(s)':>9} {'mk/LB':>7} "
          f"{'cpsat gap':>9} {'solver':>12} {'wall(s)':>8} {'RSS(MB)':>8}")
    context = multiprocessing.get_context("spawn")
    for name in WORKLOADS:
        for size in sizes:
            for limit in limits:
                queue = context.Queue()
                process = context.Process(target=_case, args=(name, size, limit, queue))
                process.start()
                row = queue.get()
                process.join()
                gap = "-" if row["gap"] is None else f"{row['gap']:.3f}"
                print(f"{row['workload']:8} {row['ops']:>6} {row['limit']:>6.0f} "
                      f"{row['first_s']:>9.2f} {row['ratio']:>7.3f} {gap:>9} "
                      f"{row['solver']:>12} {row['wall_s']:>8.1f} {row['rss_mb']:>8.0f}",
                      flush=True)


if __name__ == "__main__":
    main()
