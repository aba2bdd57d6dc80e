"""Placement engine on public instances nobody here wrote (prints figures, asserts none).

- MiniMalloc's 11 "challenging" instances at capacity 1,048,576 (capacity mode), beside
  MiniMalloc's published C++ times;
- idealloc's compiler traces in minimise mode: peak / max-load lower bound.

Data come from --external DIR (or --data), else $NPU_BENCH_EXTERNAL, ../shared/external
or the `python -m benchmarks.data fetch` cache; when absent the script says so, naming
those ways to provide it, and exits 0. Every placement is verified by the engine's
validator and, unless --no-check, by the project's checker through the schedule
converter.

    python benchmarks/bench_placement.py [--time-limit 60] [--minimise-time-limit 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import external_dir  # noqa: E402
from benchmarks.data import skip_message  # noqa: E402
from schedsearch.engine.placement import (  # noqa: E402
    place,
    placement_to_schedule_document,
    read_csv,
)

CAPACITY = 1_048_576
#: MiniMalloc's published solve times (s, C++, ASPLOS'24 slides) per challenging instance.
MINIMALLOC_S = {"A": 4.9, "B": 3.7, "C": 0.64, "D": 2.7, "E": 3.7, "F": 5.4, "G": 1.2,
                "H": 1.8, "I": 3.9, "J": 0.88, "K": 0.63}


def checked(buffers, result, capacity, enabled: bool) -> str:
    if not result.placed:
        return "-"
    if not enabled:
        return "skipped"
    from checker import verify

    report = verify(placement_to_schedule_document(buffers, result.offsets, capacity))
    return "legal" if report.legal else "ILLEGAL:" + ",".join(
        sorted({v.code for v in report.violations}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", "--external", type=Path, default=None, metavar="DIR",
                        help="the public data folder (default: $NPU_BENCH_EXTERNAL, "
                             "../shared/external, the `python -m benchmarks.data fetch` "
                             "cache)")
    parser.add_argument("--time-limit", type=float, default=60.0,
                        help="seconds per challenging instance (default 60)")
    parser.add_argument("--minimise-time-limit", type=float, default=30.0,
                        help="seconds per idealloc instance (default 30)")
    parser.add_argument("--only", nargs="*", help="instance names (e.g. A resnet50)")
    parser.add_argument("--no-check", action="store_true", help="skip the project checker")
    args = parser.parse_args(argv)
    folder = external_dir(str(args.data) if args.data else None)
    if folder is None:
        print(skip_message("placement benchmarks", str(args.data) if args.data else None))
        return 0
    args.data = folder
    challenging = sorted((args.data / "minimalloc" / "challenging").glob("*.csv"))
    idealloc = sorted((args.data / "idealloc").glob("*.csv"))
    if not challenging and not idealloc:
        print(skip_message("placement benchmarks", str(args.data)))
        return 0
    header = (f"{'instance':<12} {'buffers':>7} {'mode':<9} {'status':<10} {'time s':>7} "
              f"{'peak/bound':>10} {'MiniMalloc s':>12}  checker")
    print(header)
    print("-" * len(header))
    solved_times: list[float] = []
    ratios: list[float] = []
    for path in challenging + idealloc:
        name = path.name.split(".")[0] if path in challenging else path.stem
        if args.only and name not in args.only:
            continue
        buffers = read_csv(path)
        minimise = path in idealloc
        capacity = None if minimise else CAPACITY
        limit = args.minimise_time_limit if minimise else args.time_limit
        began = time.perf_counter()
        result = place(buffers, capacity, time_limit=limit)
        wall = time.perf_counter() - began
        ratio = f"{result.peak / result.lower_bound:.4f}" if result.placed else "-"
        published = MINIMALLOC_S.get(name, "") if not minimise else ""
        if not minimise and result.placed:
            solved_times.append(wall)
            ratios.append(wall / MINIMALLOC_S[name])
        verdict = checked(buffers, result, capacity, not args.no_check)
        print(f"{name:<12} {len(buffers):>7} {'minimise' if minimise else 'capacity':<9} "
              f"{result.status:<10} {wall:>7.2f} {ratio:>10} {published!s:>12}  {verdict}",
              flush=True)
    if solved_times:
        print(f"\nchallenging: {len(solved_times)} solved; median time "
              f"{statistics.median(solved_times):.2f} s (MiniMalloc median "
              f"{statistics.median(MINIMALLOC_S.values()):.2f} s); median ratio to "
              f"MiniMalloc {statistics.median(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
