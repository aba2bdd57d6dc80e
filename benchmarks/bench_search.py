"""Search quality and speed on the bundled pair and triple workloads, scaled in size.

Prints one row per (workload, size, time limit, workers, placement): ops, time to the
first legal schedule (validation + hazards + constructive portfolio), makespan / best
lower bound, the bound part that decides it (``energy``: the LP of mode choice over all
lanes and budgets; ``configuration``: the same knowing which modes can run side by side;
``cpsat``: CP-SAT's proven bound), CP-SAT's own gap on the whole model (makespan against
the bound CP-SAT proves; ``-`` above 200 ops, where only LNS windows run and nothing is
proven globally), the stage that found the answer,
LNS windows tried / accepted, wall time against the limit, whether the run was
reproducible (stopped by its work budget, not the deadline), and peak RSS. Each case runs
in its own process so the RSS is its own. Figures, not pass/fail; timings are noisy on a
shared machine.

    python benchmarks/bench_search.py            # ~100/500/2000/8000 ops, 10 s and 60 s
    python benchmarks/bench_search.py --quick    # ~100/500 ops, 5 s: a few minutes
    python benchmarks/bench_search.py --compare  # also workers=1 and placement off
    python benchmarks/bench_search.py --vtcm 1048576  # a smaller VTCM, so memory binds
    python benchmarks/bench_search.py --speedup  # two CP-SAT runs: threads vs sequential
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import resource
import time
from typing import Any

from models.targets import load_target
from models.workload import load_workload, scaled, tile

WORKLOADS = {"pair": "gemm-rmsnorm-v75", "triple": "gemm-rmsnorm-copy-v75"}


def _case(name: str, target_ops: int, time_limit: float, workers: int, placement: bool,
          vtcm: int | None, queue: multiprocessing.Queue) -> None:
    from models.validate import validate_problem
    from schedsearch.engine.fallback import construct
    from schedsearch.engine.hazards import build_dag
    from schedsearch.engine.instance import build_instance
    from schedsearch.engine.search import solve_report
    from schedsearch.engine.timebudget import TimeBudget

    workload = load_workload(WORKLOADS[name])
    target = load_target(workload.target)
    if vtcm is not None:
        memory = dataclasses.replace(target.memories["VTCM"], capacity_bytes=vtcm)
        target = dataclasses.replace(target, memories={**target.memories, "VTCM": memory})
    base = len(tile(workload, target).ops)
    problem = tile(scaled(workload, target_ops / base), target)
    begin = time.perf_counter()
    validate_problem(problem, target)
    inst = build_instance(problem, target)
    construct(inst, build_dag(inst), budget=TimeBudget.start(0.0, wall=3600))  # first pass only
    first = time.perf_counter() - begin
    report = solve_report(problem, target, time_limit=time_limit, seed=0, workers=workers,
                          placement=placement)
    meta = report.schedule.meta or {}
    deciding = max(report.bound_parts, key=lambda part: report.bound_parts[part])
    queue.put({"workload": name, "ops": len(problem.ops), "limit": time_limit,
               "workers": workers, "placement": placement, "first_s": first,
               "ratio": report.ratio, "bound": report.bound, "part": deciding,
               "cpsat_gap": _cpsat_gap(report.schedule.makespan, meta.get("cpsat_bound")),
               "solver": meta.get("solver"),
               "lns": f"{meta.get('lns_windows', 0)}/{meta.get('lns_accepted', 0)}",
               "wall_s": meta.get("wall_s"), "reproducible": meta.get("reproducible"),
               "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def _cpsat_gap(makespan: int, cpsat_bound: int | None) -> str:
    if cpsat_bound is None or makespan == 0:
        return "-"
    return f"{(makespan - cpsat_bound) / makespan:.3f}"


def _row(row: dict[str, Any]) -> str:
    return (f"{row['workload']:8} {row['ops']:>6} {row['limit']:>5.0f} {row['workers']:>2} "
            f"{'on' if row['placement'] else 'off':>5} {row['first_s']:>8.2f} "
            f"{row['ratio']:>6.3f} {row['bound']:>9} {row['part']:>14} {row['cpsat_gap']:>6} "
            f"{row['solver']:>12} "
            f"{row['lns']:>7} {row['wall_s']:>6.1f} {'yes' if row['reproducible'] else 'no':>5} "
            f"{row['rss_mb']:>6.0f}")


#: The window models of :func:`_speedup`, inherited by its forked processes.
_MODELS: list[Any] = []


def _solve_one(job: tuple[int, int]) -> None:
    """Model ``job[0]`` of :data:`_MODELS`, one worker, ``job[1]`` conflicts."""
    from schedsearch.engine.cpsat.model import _run

    _run(_MODELS[job[0]], 1, job[1], 600.0, None)


def _window_models() -> list[Any]:
    from schedsearch.engine.cpsat.model import build
    from schedsearch.engine.cpsat.variables import Incumbent
    from schedsearch.engine.fallback import construct
    from schedsearch.engine.hazards import build_dag
    from schedsearch.engine.instance import build_instance
    from schedsearch.engine.lns import window

    workload = load_workload(WORKLOADS["pair"])
    target = load_target(workload.target)
    problem = tile(scaled(workload, 500 / len(tile(workload, target).ops)), target)
    inst = build_instance(problem, target)
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, construct(inst, dag))
    hoods = [window(inst, dag, inc, first, 30) for first in (100, 130)]
    return [build(inst, dag, inc, hood, 0, end, offsets=False) for hood, end in hoods]


def _speedup() -> None:
    """Two CP-SAT runs one after the other, in two threads, and in two processes: if
    threads match processes, ``CpSolver.solve`` releases the GIL, and the speed-up is
    what the machine's free cores allow."""
    from concurrent.futures import ThreadPoolExecutor

    _MODELS[:] = _window_models()
    jobs = [(0, 3000), (1, 3000)]
    begin = time.perf_counter()
    for job in jobs:
        _solve_one(job)
    sequential = time.perf_counter() - begin
    begin = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(_solve_one, jobs))
    threads = time.perf_counter() - begin
    begin = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pool.map(_solve_one, jobs)
    processes = time.perf_counter() - begin
    print(f"two CP-SAT runs: sequential {sequential:.2f} s, two threads {threads:.2f} s "
          f"(speed-up {sequential / threads:.2f}), two processes {processes:.2f} s "
          f"(speed-up {sequential / processes:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="~100 and ~500 ops, 5 s only")
    parser.add_argument("--compare", action="store_true",
                        help="also run each case with workers=1 and with placement off")
    parser.add_argument("--vtcm", type=int, default=None, metavar="BYTES",
                        help="VTCM capacity to use instead of the target's")
    parser.add_argument("--speedup", action="store_true",
                        help="only measure two CP-SAT runs sequential vs in threads")
    args = parser.parse_args()
    if args.speedup:
        _speedup()
        return
    sizes = (100, 500) if args.quick else (100, 500, 2000, 8000)
    limits = (5.0,) if args.quick else (10.0, 60.0)
    variants = [(2, True)] + ([(1, True), (2, False)] if args.compare else [])
    print(f"{'workload':8} {'ops':>6} {'limit':>5} {'W':>2} {'place':>5} {'first(s)':>8} "
          f"{'mk/LB':>6} {'LB':>9} {'LB part':>14} {'CPgap':>6} {'solver':>12} {'lns w/a':>7} "
          f"{'wall':>6} {'repro':>5} {'RSS MB':>6}")
    context = multiprocessing.get_context("spawn")
    for name in WORKLOADS:
        for size in sizes:
            for limit in limits:
                for workers, placement in variants:
                    queue = context.Queue()
                    process = context.Process(target=_case, args=(
                        name, size, limit, workers, placement, args.vtcm, queue))
                    process.start()
                    row = queue.get()
                    process.join()
                    print(_row(row), flush=True)


if __name__ == "__main__":
    main()
