"""How long an imported model takes before any search: import (fold, then map), tiling,
the dependency graph and the lower bound, at about 2,000, 10,000 and 20,000 ops.

The model is the Qwen2.5-0.5B prefill decoder layer of the ONNX corpus
(``benchmarks/corpus``, made by ``benchmarks/onnx_corpus.py``), its ``seq`` dimension
set so the layer tiles into about the op counts asked for (384, 1536 and 2304 tokens:
1,851, 10,401 and 18,621 ops, the last the largest under the default limit of 20,000;
the Llama-3.2-1B layer jumps from 1,420 to 2,935 ops). Each size runs in a process of
its own (clean peak RSS); ``load`` is the onnx and onnxscript packages' own import, paid
once per process. The issue's goal: tiling, dependency graph and bound of a 10,000-op
problem in at most 1 s (10 % of a 10 s limit); ``models/`` owns the first of the three.
Figures, not pass/fail; timings are noisy on a shared machine. ``--profile N`` prints
the N functions with the most cumulative time of each phase (cProfile).

    python benchmarks/bench_prepare.py                 # seq 384, 1536, 2304
    python benchmarks/bench_prepare.py --model llama-layer-prefill-dynamo-op20.onnx --seq 768
    python benchmarks/bench_prepare.py --seq 1536 --profile 15
"""

from __future__ import annotations

import argparse
import cProfile
import io
import multiprocessing
import pstats
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO, in_fresh_process, write_figures  # noqa: E402

CORPUS = REPO / "benchmarks" / "corpus"
MODEL = "qwen2-layer-prefill-dynamo-op20.onnx"
#: token counts that tile the layer into about 2,000, 10,000 and 20,000 ops
SEQS = (384, 1536, 2304)


class _Phases:
    """Times each phase; with ``top`` > 0 also profiles it (cProfile) and keeps the
    ``top`` functions of most cumulative time, as text."""

    def __init__(self, top: int) -> None:
        self.top = top
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.profiles: dict[str, str] = {}

    def run(self, phase: str, work: Callable[[], Any]) -> Any:
        profiler = cProfile.Profile() if self.top else None
        begin, cpu = time.perf_counter(), time.process_time()
        result = work() if profiler is None else profiler.runcall(work)
        self.seconds[phase] = time.perf_counter() - begin
        self.cpu[phase] = time.process_time() - cpu
        if profiler is not None:
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(self.top)
            self.profiles[phase] = text.getvalue()
        return result


def _case(case: dict[str, Any], queue: multiprocessing.Queue) -> None:
    from models.onnx.lower import import_onnx
    from models.targets import load_target
    from models.workload import op_count, tile
    from schedsearch.engine.bounds.lower import lower_bound
    from schedsearch.engine.instance import build_instance

    phases = _Phases(case["profile"])

    def load() -> None:
        import onnx  # noqa: F401  (the libraries' own import: once per process)
        import onnxscript.optimizer  # noqa: F401

    phases.run("load", load)
    workload, summary = phases.run("import", lambda: import_onnx(case["model"],
                                                                 {"seq": case["seq"]}))
    target = load_target(workload.target)
    estimate = op_count(workload, target)
    problem = phases.run("tile", lambda: tile(workload, target, max_ops=estimate))
    phases.run("graph", lambda: build_instance(problem, target))
    bound = phases.run("bound", lambda: lower_bound(problem, target))
    queue.put({"seq": case["seq"], "nodes": summary.nodes(), "tasks": len(workload.tasks),
               "ops": len(problem.ops), **{f"{k}_s": v for k, v in phases.seconds.items()},
               **{f"{k}_cpu_s": v for k, v in phases.cpu.items()},
               "bound": bound.value, "profiles": phases.profiles,
               "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def measure(model: Path, seq: int, profile: int = 0) -> dict[str, Any]:
    """One size in a fresh process (spawn: its own peak RSS)."""
    return in_fresh_process(_case, {"model": str(model), "seq": seq, "profile": profile})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=MODEL,
                        help=f"a prefill graph of benchmarks/corpus (default {MODEL})")
    parser.add_argument("--seq", type=int, nargs="+", default=list(SEQS),
                        help="token counts of the prefill layer to measure")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print the N functions of most cumulative time of each phase")
    parser.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    model = CORPUS / args.model
    if not model.is_file():
        print(f"skipped: {model.relative_to(REPO)} is absent (python "
              f"benchmarks/onnx_corpus.py makes it)")
        return 0
    print(f"{model.name} on hexagon-v75; seconds on this machine (noisy when shared)"
          + ("; profiled (slower)" if args.profile else ""))
    print("wall seconds, and in brackets the process's CPU seconds (what a loaded machine "
          "does not inflate)")
    print(f"{'seq':>5} {'ops':>6} {'load':>12} {'import':>12} {'tile':>12} {'graph':>12} "
          f"{'bound':>12} {'tile+graph+bound':>17} {'RSS MiB':>8}")
    rows = []
    for seq in args.seq:
        row = measure(model, seq, args.profile)
        rows.append(row)
        cells = [f"{row[f'{k}_s']:.2f} ({row[f'{k}_cpu_s']:.2f})"
                 for k in ("load", "import", "tile", "graph", "bound")]
        prepare = sum(row[f"{k}_s"] for k in ("tile", "graph", "bound"))
        cpu = sum(row[f"{k}_cpu_s"] for k in ("tile", "graph", "bound"))
        print(f"{row['seq']:>5} {row['ops']:>6} " + " ".join(f"{c:>12}" for c in cells)
              + f" {f'{prepare:.2f} ({cpu:.2f})':>17} {row['rss_mib']:>8.0f}", flush=True)
        for phase, text in row["profiles"].items():
            print(f"--- seq {seq}, {phase}:\n{text}")
    write_figures(args.json, {"model": model.name, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
