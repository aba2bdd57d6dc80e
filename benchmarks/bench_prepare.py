"""How long an imported model takes before any search: import (fold, then map), tiling,
the dependency graph and the lower bound, at about 3,000, 10,000 and 20,000 ops.

The model is the Llama-3.2-1B prefill decoder layer of the ONNX corpus
(``benchmarks/corpus``, made by ``benchmarks/onnx_corpus.py``), its ``seq`` dimension
set so the layer tiles into about the op counts asked for. Each size runs in a process
of its own (clean peak RSS); ``load`` is the onnx and onnxscript packages' own import,
paid once per process. The issue's goal: tiling, dependency graph and bound of a
10,000-op problem in at most 1 s (10 % of a 10 s limit); ``models/`` owns the first of
the three. Figures, not pass/fail; timings are noisy on a shared machine.

    python benchmarks/bench_prepare.py                 # seq 192, 768, 1280
    python benchmarks/bench_prepare.py --seq 128 512 --json figures.json
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

from benchmarks.common import REPO, in_fresh_process, write_figures  # noqa: E402

MODEL = REPO / "benchmarks" / "corpus" / "llama-layer-prefill-dynamo-op20.onnx"
#: token counts that tile the layer into about 2,000, 10,000 and 20,000 ops
SEQS = (192, 768, 1280)


def _case(seq: int, queue: multiprocessing.Queue) -> None:
    from models.onnx.lower import import_onnx
    from models.targets import load_target
    from models.workload import op_count, tile
    from schedsearch.engine.bounds.lower import lower_bound
    from schedsearch.engine.instance import build_instance

    begin = time.perf_counter()
    import onnx  # noqa: F401  (the libraries' own import: once per process)
    import onnxscript.optimizer  # noqa: F401
    loaded = time.perf_counter()
    workload, summary = import_onnx(str(MODEL), {"seq": seq})
    imported = time.perf_counter()
    target = load_target(workload.target)
    estimate = op_count(workload, target)
    problem = tile(workload, target, max_ops=estimate)
    tiled = time.perf_counter()
    build_instance(problem, target)
    graphed = time.perf_counter()
    bound = lower_bound(problem, target)
    bounded = time.perf_counter()
    queue.put({"seq": seq, "nodes": summary.nodes(), "tasks": len(workload.tasks),
               "ops": len(problem.ops), "load_s": loaded - begin,
               "import_s": imported - loaded,
               "tile_s": tiled - imported, "graph_s": graphed - tiled,
               "bound_s": bounded - graphed, "bound": bound.value,
               "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def measure(seq: int) -> dict[str, Any]:
    """One size in a fresh process (spawn: its own peak RSS)."""
    return in_fresh_process(_case, seq)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, nargs="+", default=list(SEQS),
                        help="token counts of the prefill layer to measure")
    parser.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    if not MODEL.is_file():
        print(f"skipped: {MODEL.relative_to(REPO)} is absent (python "
              f"benchmarks/onnx_corpus.py makes it)")
        return 0
    print(f"{MODEL.name} on hexagon-v75; seconds on this machine (noisy when shared)")
    print(f"{'seq':>5} {'ops':>6} {'load':>5} {'import':>7} {'tile':>6} {'graph':>6} {'bound':>6} "
          f"{'tile+graph+bound':>16} {'RSS MiB':>8}")
    rows = []
    for seq in args.seq:
        row = measure(seq)
        rows.append(row)
        prepare = row["tile_s"] + row["graph_s"] + row["bound_s"]
        print(f"{row['seq']:>5} {row['ops']:>6} {row['load_s']:>5.2f} {row['import_s']:>7.2f} "
              f"{row['tile_s']:>6.2f} {row['graph_s']:>6.2f} {row['bound_s']:>6.2f} "
              f"{prepare:>16.2f} {row['rss_mib']:>8.0f}")
    if args.json:
        write_figures(args.json, {"model": MODEL.name, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
