"""Every graph of the ONNX corpus through ``schedsearch solve --verify``, as a user runs it.

One row per graph of ``benchmarks/corpus/index.json``: family, module, exporter, opset,
phase, ONNX nodes, how many of them the import folds, the problem's ops, makespan, lower
bound, their ratio, whether the checker found the schedule legal, the command's exit status
and wall time. Each graph runs in its own ``python -m schedsearch solve`` process with the
dimensions the index suggests, so the figures include import, folding, tiling and
verification. ``--markdown`` prints the table of docs/benchmarks.md at the end.

    python benchmarks/bench_corpus.py [--time-limit 10] [--only layer] [--json PATH] [--markdown]
    python benchmarks/bench_corpus.py --match mistral int8     # graphs whose file has either
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO, write_figures  # noqa: E402

CORPUS = REPO / "benchmarks" / "corpus"
SUMMARY = re.compile(r"makespan (\d+)\s+lower bound (\d+)\s+ratio ([\d.]+)")
OPS = re.compile(r"(\d[\d,]*) ops")


def solve_graph(graph: dict[str, Any], time_limit: float, workers: int) -> dict[str, Any]:
    """The row of one graph: what ``schedsearch solve --verify`` printed, parsed."""
    dims = [f"--dim={name}={value}" for name, value in graph.get("dims", {}).items()]
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "schedsearch", "solve", str(CORPUS / graph["file"]),
                   *dims, "-o", str(Path(folder) / "schedule.json"), "--verify",
                   "--time-limit", str(time_limit), "--workers", str(workers)]
        begin = time.perf_counter()
        run = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
        wall = time.perf_counter() - begin
    text = run.stdout + run.stderr
    found = SUMMARY.search(text)
    ops = OPS.findall(text)
    row = {key: graph[key] for key in ("file", "family", "module", "exporter", "opset",
                                       "phase", "nodes")}
    row.update(exit=run.returncode, wall_s=round(wall, 1),
               ops=int(ops[-1].replace(",", "")) if ops else None,
               makespan=int(found.group(1)) if found else None,
               bound=int(found.group(2)) if found else None,
               ratio=float(found.group(3)) if found else None,
               legal="verify: legal" in text)
    if run.returncode:
        row["error"] = text.strip().splitlines()[-1] if text.strip() else ""
    return row


def folded(graph: dict[str, Any]) -> int:
    """How many of the graph's nodes the import folds (constants of the dimensions)."""
    from models.onnx.lower import import_onnx

    _, summary = import_onnx(str(CORPUS / graph["file"]), graph.get("dims", {}))
    return summary.count("folded")


def markdown(rows: list[dict[str, Any]]) -> str:
    """The per-graph table of docs/benchmarks.md."""
    keys = ("family", "module", "exporter", "opset", "phase", "nodes", "folded", "ops",
            "makespan", "bound", "ratio")
    lines = ["| graph | " + " | ".join(keys) + " | wall s |",
             "|---|" + "---|" * 4 + "---|" + "---:|" * 6 + "---:|"]
    for row in rows:
        cells = [row["file"].removesuffix(".onnx")]
        for key in keys:
            value = row.get(key)
            cells.append("-" if value is None else f"{value:,}" if isinstance(value, int)
                         and key not in ("opset",) else f"{value:.3f}"
                         if isinstance(value, float) else str(value))
        if row["exit"] or not row["legal"]:
            cells[-1] = f"exit {row['exit']}" + ("" if row["exit"] else ", not legal")
        lines.append("| " + " | ".join(cells) + f" | {row['wall_s']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", metavar="MODULE", nargs="+",
                        help="only these modules (layer, model, model-plain, mlp)")
    parser.add_argument("--match", metavar="TEXT", nargs="+",
                        help="only graphs whose file name contains one of these")
    parser.add_argument("--json", metavar="PATH", help="also write the rows here")
    parser.add_argument("--markdown", action="store_true",
                        help="at the end, print the table of docs/benchmarks.md")
    args = parser.parse_args(argv)
    graphs = json.loads((CORPUS / "index.json").read_text("utf-8"))["graphs"]
    graphs = [g for g in graphs if (not args.only or g["module"] in args.only)
              and (not args.match or any(text in g["file"] for text in args.match))]
    header = ("file", "nodes", "folded", "ops", "makespan", "bound", "ratio", "legal", "exit",
              "wall_s")
    print(" | ".join(header))
    rows = []
    for graph in graphs:
        row = solve_graph(graph, args.time_limit, args.workers)
        row["folded"] = folded(graph)
        rows.append(row)
        print(" | ".join(str(row[key]) for key in header), flush=True)
    failed = [row["file"] for row in rows if row["exit"] or not row["legal"]]
    print(f"{len(rows) - len(failed)} of {len(rows)} graphs solved and verified"
          + (f"; not: {', '.join(failed)}" if failed else ""))
    write_figures(args.json, {"time_limit": args.time_limit, "rows": rows})
    if args.markdown:
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
