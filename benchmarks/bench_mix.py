"""Serving mixes (``schedsearch mix``): the three policies on a Llama-3.2-1B and a
Qwen2.5-0.5B mix, each one prefill with decode steps attending to long caches.

Prints per mix and policy: makespan (overheads included, ns), device time, deadlines met,
decode P50/P99, steady-stream throughput (the mix back to back: requests and tokens per
second), the chunk, whether the checker accepts the schedule; each request's end; and
the searched policy's candidates (whole prefill, chunks; the kernel schedules fused).
Figures, not pass/fail: the searches stop on their reproducible work budget.

    python benchmarks/bench_mix.py                  # both mixes, 10 s per fused search
    python benchmarks/bench_mix.py --quick          # the Qwen mix only, 5 s
    python benchmarks/bench_mix.py --json figures.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models.mix import Mix, Request  # noqa: E402
from models.targets import load_target  # noqa: E402
from schedsearch.commands.mix import format_tables  # noqa: E402
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


#: Deadlines: about what a decode step alone takes plus the first 64-token chunk of the
#: prefill and the decodes before it (what ``chunked`` gives the later decodes), so that
#: the policies differ in which they meet.
MIXES = {
    "qwen": _mix("qwen2.5-0.5b-mix", "qwen2.5-0.5b", 256, 4, 1024, 3000),
    "llama": _mix("llama-3.2-1b-mix", "llama-3.2-1b", 128, 4, 512, 6000),
}


def run(name: str, limit: float) -> dict[str, Any]:
    mix = MIXES[name]
    begin = time.perf_counter()
    report = serve(mix, load_target(mix.target), SolveOptions(time_limit=limit,
                                                              reproducible=True))
    wall = time.perf_counter() - begin
    print(f"\n{mix.name} (one prefill of {mix.requests[0].tokens} tokens, "
          f"{len(mix.requests) - 1} decodes of {mix.requests[1].past} past, deadline "
          f"{mix.requests[1].deadline_ns} ns each), {limit:g} s per fused search, "
          f"wall {wall:.0f} s")
    print(format_tables(report), flush=True)
    return {"mix": mix.name, "limit": limit, "wall_s": wall, **report.as_dict()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--only", choices=tuple(MIXES), nargs="+")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    limit = args.time_limit or (5.0 if args.quick else 10.0)
    names = args.only or (["qwen"] if args.quick else list(MIXES))
    figures = [run(name, limit) for name in names]
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
