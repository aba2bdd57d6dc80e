"""Serving mixes (``schedsearch mix``): the three policies on Llama-3.2-1B and
Qwen2.5-0.5B mixes, each one prefill with 4, 8 or 16 decode steps attending to long caches.

Prints per mix and policy: makespan (overheads included, ns), device time, deadlines met,
decode P50/P99, steady-stream throughput (the mix back to back: requests and tokens per
second), the chunk, whether the checker accepts the schedule; each request's end; and
the searched policy's candidates (whole prefill, chunks; the kernel schedules fused).
Figures, not pass/fail: the searches stop on their reproducible work budget. The time
limit is the whole mix's, as ``schedsearch mix --time-limit`` takes it. Deadlines are soft
(``--soft-deadlines``: the least total lateness, so that every policy gets a row) unless
``--hard``, where a mix the searched policy cannot serve on time prints the refusal.

    python benchmarks/bench_mix.py                  # both families, 4 decodes, 30 s each
    python benchmarks/bench_mix.py --decodes 4 8 16 --only qwen --json q.json
    python benchmarks/bench_mix.py --quick          # the Qwen mix only, 10 s
    python benchmarks/bench_mix.py --hard --objective weighted --json figures.json

After each mix, the gain of ``searched`` over ``sequential`` is split, from the
candidates that mix's run weighed: merging the kernels into one entry (the sequential
kernels' schedule fused), overlap (the best whole-prefill candidate), and chunking (the
best chunked candidate against the best whole one); with CPU time, wall time and load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models.mix import Mix, Request  # noqa: E402
from models.targets import load_target  # noqa: E402
from models.workload import MAX_OPS  # noqa: E402
from schedsearch.commands.mix import format_tables  # noqa: E402
from schedsearch.engine.deadlines import OBJECTIVES, DeadlinesMissed  # noqa: E402
from schedsearch.mix.policies import Goal  # noqa: E402
from schedsearch.mix.serve import serve  # noqa: E402
from schedsearch.paths import SolveOptions  # noqa: E402


def _mix(name: str, model: str, tokens: int, decodes: int, past: int,
         deadline_us: float) -> Mix:
    """One prefill of ``tokens``, then ``decodes`` decode steps attending to ``past``
    tokens, each with the same deadline."""
    requests = [Request("p0", model, "prefill", tokens, 0)]
    requests += [Request(f"d{i}", model, "decode", 1, past, round(deadline_us * 1000))
                 for i in range(decodes)]
    return Mix(name, "hexagon-v75", tuple(requests))


#: Per family: model, prefill tokens, decode past, and the deadline of every decode (us):
#: about what a decode step alone takes plus the first 64-token chunk of the prefill and
#: the decodes before it (what ``chunked`` gives the later decodes of a mix of 4), so
#: that the policies differ in which they meet.
FAMILIES = {
    "qwen": ("qwen2.5-0.5b", 256, 1024, 3000),
    "llama": ("llama-3.2-1b", 128, 512, 6000),
}


def family_mix(name: str, decodes: int) -> Mix:
    model, tokens, past, deadline_us = FAMILIES[name]
    return _mix(f"{model}-{decodes}d", model, tokens, decodes, past, deadline_us)


def _best(tried: list[dict[str, Any]], whole: bool) -> int | None:
    """The shortest of the searched candidates (not the kernel policies' own schedules),
    whole prefills or chunked; None if there was none."""
    spans = [t["makespan"] for t in tried if (t["chunk"] is None) == whole
             and "kernels' schedule" not in t["candidate"]
             and "policy itself" not in t["candidate"]]
    return min(spans, default=None)


def gain(figures: dict[str, Any]) -> dict[str, Any]:
    """Where the searched policy's makespan gain over ``sequential`` comes from, from its
    candidates: entry (one launch instead of a kernel each: the sequential kernels'
    schedule fused), overlap (the best whole-prefill search against that), chunking (the
    best chunked search against the best whole one: negative when chunks are longer)."""
    policies = figures["policies"]
    tried = policies["searched"]["tried"]
    fused = next(t["makespan"] for t in tried
                 if t["candidate"] == "the sequential kernels' schedule, fused")
    whole, chunked = _best(tried, True), _best(tried, False)
    sequential = policies["sequential"]["makespan"]
    return {"sequential": sequential, "chunked": policies["chunked"]["makespan"],
            "searched": policies["searched"]["makespan"], "sequential_fused": fused,
            "searched_whole": whole, "searched_chunked": chunked,
            "entry": sequential - fused, "overlap": None if whole is None else fused - whole,
            "chunking": None if whole is None or chunked is None else whole - chunked}


def run(mix: Mix, limit: float, goal: Goal, max_ops: int = MAX_OPS) -> dict[str, Any]:
    begin, cpu = time.perf_counter(), time.process_time()
    heading = (f"\n{mix.name} (one prefill of {mix.requests[0].tokens} tokens, "
               f"{len(mix.requests) - 1} decodes of {mix.requests[1].past} past, deadline "
               f"{mix.requests[1].deadline_ns} ns each), {limit:g} s for the mix, "
               f"{'soft' if goal.soft_deadlines else 'hard'} deadlines, then the "
               f"{goal.objective}")
    try:
        report = serve(mix, load_target(mix.target),
                       SolveOptions(time_limit=limit, reproducible=True), max_ops, goal=goal)
    except DeadlinesMissed as missed:
        print(f"{heading}, wall {time.perf_counter() - begin:.0f} s\n"
              f"{missed.status.value}: {missed}", flush=True)
        return {"mix": mix.name, "limit": limit, "refused": str(missed)}
    wall, cpu = time.perf_counter() - begin, time.process_time() - cpu
    load = os.getloadavg()[0]
    print(f"{heading}, wall {wall:.0f} s, CPU {cpu:.0f} s (the process), load {load:.1f}")
    print(format_tables(report), flush=True)
    figures = {"mix": mix.name, "limit": limit, "wall_s": wall, "cpu_s": cpu, "load": load,
               **report.as_dict()}
    figures["gain"] = gain(figures)
    print("gain over sequential (ns): " + ", ".join(
        f"{k} {v}" for k, v in figures["gain"].items()), flush=True)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--only", choices=tuple(FAMILIES), nargs="+")
    parser.add_argument("--decodes", type=int, nargs="+", default=[4],
                        help="decode requests per mix (default 4)")
    parser.add_argument("--max-ops", type=int, default=MAX_OPS)
    parser.add_argument("--hard", action="store_true", help="hard deadlines")
    parser.add_argument("--objective", choices=OBJECTIVES, default="makespan")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    limit = args.time_limit or (10.0 if args.quick else 30.0)
    names = args.only or (["qwen"] if args.quick else list(FAMILIES))
    goal = Goal(args.objective, soft_deadlines=not args.hard)
    figures = []
    for name in names:
        for decodes in args.decodes:
            figures.append(run(family_mix(name, decodes), limit, goal, args.max_ops))
            if args.json:  # after each mix: a long run keeps what it measured
                Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
