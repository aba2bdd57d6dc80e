"""How long reading a large workload takes before any search: the figures behind
``models.workload.MAX_OPS``.

Per size (the bundled pair scaled to about N ops): the time ``op_count`` takes to say
how many ops the workload tiles into (the check that refuses a huge workload), the time
to tile it, the time for its lower bound (``schedsearch bound``), and the process's peak
RSS after both. Tiling and the bound cannot be cut by a search's time limit, so the
default limit sits where they still take seconds, not minutes. Each size runs in a
process of its own so the RSS is its own. Figures, not pass/fail; timings are noisy on
a shared machine.

    python benchmarks/bench_sizes.py                  # about 2,000 / 5,000 / 10,000 / 20,000 ops
    python benchmarks/bench_sizes.py --ops 1000 40000
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import in_fresh_process  # noqa: E402

WORKLOAD = "gemm-rmsnorm-v75"
SIZES = (2_000, 5_000, 10_000, 20_000)


def _case(target_ops: int, queue: multiprocessing.Queue) -> None:
    from models.targets import load_target
    from models.workload import load_workload, op_count, scaled, tile
    from schedsearch.engine.bounds.lower import lower_bound

    workload = load_workload(WORKLOAD)
    target = load_target(workload.target)
    base = op_count(workload, target)
    big = scaled(workload, target_ops / base)
    begin = time.perf_counter()
    estimate = op_count(big, target)
    counted = time.perf_counter()
    problem = tile(big, target, max_ops=estimate)
    tiled = time.perf_counter()
    bound = lower_bound(problem, target)
    bounded = time.perf_counter()
    queue.put({"ops": len(problem.ops), "estimate": estimate,
               "count_ms": (counted - begin) * 1e3, "tile_s": tiled - counted,
               "bound_s": bounded - tiled, "bound": bound.value,
               "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def measure(target_ops: int) -> dict[str, Any]:
    """One size in a fresh process (spawn: its own peak RSS)."""
    return in_fresh_process(_case, target_ops)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, nargs="+", default=list(SIZES),
                        help="approximate op counts to measure")
    args = parser.parse_args(argv)
    print(f"{WORKLOAD} scaled; times on this machine (noisy when it is shared)")
    print(f"{'ops':>7} {'estimate':>8} {'count ms':>8} {'tile s':>7} {'bound s':>8} "
          f"{'peak RSS MiB':>12}")
    for size in args.ops:
        row = measure(size)
        print(f"{row['ops']:>7} {row['estimate']:>8} {row['count_ms']:>8.2f} "
              f"{row['tile_s']:>7.2f} {row['bound_s']:>8.2f} {row['rss_mib']:>12.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
