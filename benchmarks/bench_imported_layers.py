"""Imported decoder layers against the bundled ones of the same shapes (issue 28).

The Llama-3.2-1B and Qwen2.5-0.5B decoder layers of the ONNX corpus (dynamo, opset 20;
prefill ``seq`` 128, decode ``past`` 512), imported as ``schedsearch solve`` imports them,
beside the hand-written bundled layers (``models/examples/decoders.py``). Per layer: the
ops of each, then per time limit each one's makespan, lower bound and ratio, and the
imported/bundled differences. On a loaded machine the makespans depend on how much search
fits in the limit; the ratio to each problem's own bound is the load-robust figure.

``--diff`` prints, per pair, what the two problems contain: per task kind the ops and
busy time of each engine (sum of first-mode durations), and the tasks found in only one
of them (matched by kind and shape: every parameter except tensor names and epsilon).

    python benchmarks/bench_imported_layers.py --diff            # no search: the diff only
    python benchmarks/bench_imported_layers.py --limits 60       # 60 s searches, 2 workers
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO, write_figures  # noqa: E402
from models.formats import Problem, Target  # noqa: E402
from models.ops import KINDS  # noqa: E402
from models.targets import load_target  # noqa: E402
from models.workload import load_problem_input, load_workload, tile  # noqa: E402
from models.workload_data import Workload  # noqa: E402

CORPUS = REPO / "benchmarks" / "corpus"
TARGET = "hexagon-v75"
#: bundled layer, corpus graph, its dimensions
PAIRS = (("llama-3.2-1b-prefill-v75", "llama-layer-prefill-dynamo-op20.onnx", {"seq": 128}),
         ("llama-3.2-1b-decode-v75", "llama-layer-decode-dynamo-op20.onnx", {"past": 512}),
         ("qwen2.5-0.5b-prefill-v75", "qwen2-layer-prefill-dynamo-op20.onnx", {"seq": 128}),
         ("qwen2.5-0.5b-decode-v75", "qwen2-layer-decode-dynamo-op20.onnx", {"past": 512}))
#: parameters that do not make two tasks different work
_IGNORED = {"eps"}


def load_pair(bundled: str, graph: str, dims: dict[str, int],
              target: Target) -> tuple[Workload, Problem, Workload, Problem]:
    """The bundled workload and problem, then the imported ones."""
    from models.onnx.lower import import_onnx

    mine = load_workload(bundled)
    imported, _ = import_onnx(str(CORPUS / graph), dims)
    problem, _ = load_problem_input(str(CORPUS / graph), TARGET, dims=dims)
    return mine, tile(mine, target), imported, problem


def kinds(problem: Problem) -> dict[str, dict[str, int]]:
    """Per task kind: its ops and the busy ns of each engine lane (first modes)."""
    found: dict[str, Counter[str]] = {}
    for op in problem.ops.values():
        row = found.setdefault(problem.tasks[op.task].kind, Counter())
        row["ops"] += 1
        mode = op.modes[0]
        for lane in mode.lanes:
            row[lane] += mode.duration
    return {kind: dict(row) for kind, row in sorted(found.items())}


def shape(kind: str, params: dict[str, Any]) -> tuple[Any, ...]:
    """What a task computes, without its tensor names: the key that matches tasks."""
    spec = KINDS[kind].PARAMS
    return (kind, *sorted((key, value) for key, value in params.items()
                          if key not in _IGNORED and spec[key].kind != "tensor"))


def task_diff(mine: Workload, imported: Workload) -> tuple[list[str], list[str]]:
    """Tasks (name: kind and shape) only in the bundled workload, then only imported."""
    left = Counter(shape(t.kind, t.params) for t in mine.tasks)
    right = Counter(shape(t.kind, t.params) for t in imported.tasks)

    def only(workload: Workload, extra: Counter[tuple[Any, ...]]) -> list[str]:
        lines = []
        for task in workload.tasks:
            key = shape(task.kind, task.params)
            if extra[key] > 0:
                extra[key] -= 1
                brief = ", ".join(f"{k}={v}" for k, v in key[1:]
                                  if k in ("M", "N", "K", "rows", "cols", "fn", "broadcast",
                                           "q_len", "past", "heads", "kv_heads", "causal",
                                           "head_dim", "table_rows"))
                lines.append(f"{task.name}: {task.kind} ({brief})")
        return lines

    return only(mine, left - right), only(imported, right - left)


def print_diff(bundled: str, graph: str, mine: Workload, mine_problem: Problem,
               imported: Workload, problem: Problem) -> dict[str, Any]:
    """Print the per-kind and per-task differences of one pair; return them."""
    left, right = kinds(mine_problem), kinds(problem)
    lanes = sorted({lane for rows in (left, right) for row in rows.values() for lane in row
                    if lane != "ops"})
    print(f"\n{bundled} ({len(mine_problem.ops)} ops) vs {graph} ({len(problem.ops)} ops)")
    print(f"  {'kind':12} {'ops':>11}  " + "  ".join(f"{lane + ' busy ns':>21}"
                                                   for lane in lanes))
    for kind in sorted(set(left) | set(right)):
        a, b = left.get(kind, {}), right.get(kind, {})
        cells = [f"{a.get(lane, 0):>10,}/{b.get(lane, 0):<10,}" for lane in lanes]
        mark = "" if a == b else "  <- differs"
        print(f"  {kind:12} {a.get('ops', 0):>5}/{b.get('ops', 0):<5}  "
              + "  ".join(cells) + mark)
    only_mine, only_imported = task_diff(mine, imported)
    for label, lines in (("only bundled", only_mine), ("only imported", only_imported)):
        for line in lines or ["-"]:
            print(f"  {label}: {line}")
    return {"kinds_bundled": left, "kinds_imported": right, "only_bundled": only_mine,
            "only_imported": only_imported}


def solve(problem: Problem, target: Target, limit: float, workers: int) -> dict[str, Any]:
    """Makespan, bound and ratio of one search (as ``schedsearch solve``; verified)."""
    from checker import verify
    from models.formats import schedule_to_dict
    from schedsearch.engine.search import solve_report

    begin = time.perf_counter()
    report = solve_report(problem, target, time_limit=limit, seed=0, workers=workers,
                          validated=True)
    wall = time.perf_counter() - begin
    return {"makespan": report.schedule.makespan, "bound": report.bound,
            "ratio": report.ratio, "wall_s": round(wall, 1),
            "legal": verify(schedule_to_dict(report.schedule)).legal}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", nargs="+", type=float, default=None, metavar="S",
                        help="search time limits (default 60, or no search with --diff)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--diff", action="store_true",
                        help="print what differs, per kind and per task")
    parser.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    limits = args.limits if args.limits is not None else ([] if args.diff else [60.0])
    target = load_target(TARGET)
    rows, diffs = [], {}
    loaded = [(bundled, graph, *load_pair(bundled, graph, dims, target))
              for bundled, graph, dims in PAIRS]
    if args.diff:
        for bundled, graph, mine, mine_problem, imported, problem in loaded:
            diffs[bundled] = print_diff(bundled, graph, mine, mine_problem, imported, problem)
    if limits:
        print(f"\n{TARGET}, {args.workers} workers; ns; d = imported / bundled - 1")
        print(f"{'layer':26} {'limit':>5} {'ops b/i':>11} {'d ops':>6} {'makespan b':>11} "
              f"{'makespan i':>11} {'d mk':>6} {'bound b':>10} {'bound i':>10} {'ratio b':>7} "
              f"{'ratio i':>7} {'legal':>5}")
    for limit in limits:
        for bundled, graph, _, mine_problem, _, problem in loaded:
            a = solve(mine_problem, target, limit, args.workers)
            b = solve(problem, target, limit, args.workers)
            row = {"layer": bundled, "graph": graph, "limit": limit,
                   "ops_bundled": len(mine_problem.ops), "ops_imported": len(problem.ops),
                   "bundled": a, "imported": b}
            rows.append(row)
            d_ops = len(problem.ops) / len(mine_problem.ops) - 1
            d_mk = b["makespan"] / a["makespan"] - 1
            legal = "yes" if a["legal"] and b["legal"] else "NO"
            print(f"{bundled:26} {limit:>5.0f} {len(mine_problem.ops):>5}/{len(problem.ops):<5} "
                  f"{d_ops:>+6.1%} {a['makespan']:>11,} {b['makespan']:>11,} {d_mk:>+6.1%} "
                  f"{a['bound']:>10,} {b['bound']:>10,} {a['ratio']:>7.3f} {b['ratio']:>7.3f} "
                  f"{legal:>5}", flush=True)
    write_figures(args.json, {"target": TARGET, "workers": args.workers, "rows": rows,
                              "diffs": diffs})
    return 0 if all(r["bundled"]["legal"] and r["imported"]["legal"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
