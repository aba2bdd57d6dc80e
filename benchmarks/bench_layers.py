"""The bundled decoder layers (models/examples/decoders.py): solve, verify, compare.

For each layer (Llama-3.2-1B and Qwen2.5-0.5B, prefill 128 tokens and decode 1 token
with a 512-token KV cache) on each target, prints: ops, then per time limit the
makespan, the lower bound, their ratio, the busy share of each engine and whether the
independent checker accepts the schedule; then ``compare``'s four paths (separate
kernels, concurrent kernels, one fused entry with barriers, one fused entry
interleaved; makespans with overheads, in ns) and the checker's verdict on each
path's schedule (the concurrent path's file breaks ``BUDGET`` where contention stretched
its DMA ops: schedsearch/paths.py scores it with a fluid model and says so in its note).
Figures, not pass/fail; wall times on a
shared machine are noisy, and the searches stop on their reproducible work budget, so
a longer limit helps only when the budget is not reached first; with ``--use-time`` each
searches its whole limit, as ``schedsearch solve`` does by default, and its figures
depend on the machine's load (run it on an idle machine).

    python benchmarks/bench_layers.py                    # v75 and v79, 10 s and 60 s
    python benchmarks/bench_layers.py --quick            # v75, 10 s, compare at 5 s
    python benchmarks/bench_layers.py --json figures.json
    python benchmarks/bench_layers.py --layers qwen2.5-0.5b-prefill-v75 --limits 60 --no-compare
    python benchmarks/bench_layers.py --no-compare --limits 60 --use-time   # as `solve` does
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import write_figures  # noqa: E402
from models.formats import schedule_to_dict  # noqa: E402
from models.targets import load_target  # noqa: E402
from models.workload import load_workload, tile  # noqa: E402

LAYERS = ("llama-3.2-1b-prefill-v75", "llama-3.2-1b-decode-v75",
          "qwen2.5-0.5b-prefill-v75", "qwen2.5-0.5b-decode-v75")
PATHS = ("separate", "concurrent", "fused-barrier", "fused-interleaved")


def solve_row(layer: str, target_name: str, limit: float, *,
              reproducible: bool = True) -> dict[str, Any]:
    """Solve one layer at one limit, as ``schedsearch solve --verify --reproducible``
    does (without ``reproducible``, as ``schedsearch solve --verify``: the whole limit)."""
    from checker import verify
    from schedsearch.engine.search import solve_report

    target = load_target(target_name)
    problem = tile(load_workload(layer), target)
    begin = time.perf_counter()
    report = solve_report(problem, target, time_limit=limit, seed=0, workers=2,
                          reproducible=reproducible)
    wall = time.perf_counter() - begin
    verdict = verify(schedule_to_dict(report.schedule))
    return {"layer": layer, "target": target_name, "ops": len(problem.ops), "limit": limit,
            "makespan": report.schedule.makespan, "bound": report.bound,
            "ratio": report.ratio, "busy": dict(report.busy_share), "legal": verdict.legal,
            "wall_s": wall, "reproducible": report.stats.reproducible}


def compare_row(layer: str, target_name: str, limit: float) -> dict[str, Any]:
    """``schedsearch compare`` of one layer: each path's makespan with overheads."""
    from schedsearch.paths import SolveOptions, compare

    target = load_target(target_name)
    problem = tile(load_workload(layer), target)
    comparison = compare(problem, target, options=SolveOptions(time_limit=limit, seed=0,
                                                               workers=2))
    figures = comparison.as_dict()
    paths = {p["name"]: p for p in figures["paths"]}
    return {"layer": layer, "target": target_name, "limit": limit,
            "paths": {name: paths[name]["makespan"] for name in PATHS},
            "illegal": {name: paths[name]["violations"] for name in PATHS
                        if not paths[name]["legal"]},
            "gains": figures["gains"]}


def _busy(busy: dict[str, float]) -> str:
    return " ".join(f"{lane} {share:.0%}" for lane, share in busy.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="v75 only, 10 s, compare at 5 s")
    parser.add_argument("--targets", nargs="+", default=None, metavar="T",
                        help="targets (default hexagon-v75 hexagon-v79)")
    parser.add_argument("--limits", nargs="+", type=float, default=None, metavar="S",
                        help="solve time limits (default 10 60)")
    parser.add_argument("--compare-limit", type=float, default=None, metavar="S",
                        help="search budget of each compare solve (default 10)")
    parser.add_argument("--layers", nargs="+", default=list(LAYERS), choices=LAYERS,
                        metavar="L", help="layers (default all four)")
    parser.add_argument("--no-compare", action="store_true",
                        help="solve only, without compare's paths")
    parser.add_argument("--use-time", action="store_true",
                        help="search each whole limit, as `schedsearch solve` does without "
                             "--reproducible (figures then depend on the machine's load)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    targets = args.targets or (["hexagon-v75"] if args.quick else
                               ["hexagon-v75", "hexagon-v79"])
    limits = args.limits or ([10.0] if args.quick else [10.0, 60.0])
    compare_limit = args.compare_limit or (5.0 if args.quick else 10.0)
    solves, compares = [], []
    print("each search uses its whole limit (figures depend on the load)" if args.use_time
          else "each search stops on its reproducible work budget")
    print(f"{'layer':26} {'target':12} {'ops':>5} {'limit':>5} {'makespan':>9} {'bound':>9} "
          f"{'ratio':>6} {'legal':>5} {'wall':>6}  busy share")
    for target in targets:
        for layer in args.layers:
            for limit in limits:
                row = solve_row(layer, target, limit, reproducible=not args.use_time)
                solves.append(row)
                print(f"{layer:26} {target:12} {row['ops']:>5} {limit:>5.0f} "
                      f"{row['makespan']:>9} {row['bound']:>9} {row['ratio']:>6.3f} "
                      f"{'yes' if row['legal'] else 'NO':>5} {row['wall_s']:>6.1f}  "
                      f"{_busy(row['busy'])}", flush=True)
    if not args.no_compare:
        print(f"\ncompare (each path's makespan with overheads, ns; searches at "
              f"{compare_limit:g} s)")
        print(f"{'layer':26} {'target':12} " + " ".join(f"{p:>17}" for p in PATHS)
              + "  illegal paths")
        for target in targets:
            for layer in args.layers:
                row = compare_row(layer, target, compare_limit)
                compares.append(row)
                print(f"{layer:26} {target:12} "
                      + " ".join(f"{row['paths'][p]:>17}" for p in PATHS) + "  "
                      + (", ".join(f"{name} ({'/'.join(codes)})"
                                   for name, codes in row["illegal"].items()) or "none"),
                      flush=True)
    write_figures(args.json, {"solves": solves, "compares": compares})
    return 0 if all(r["legal"] for r in solves) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
