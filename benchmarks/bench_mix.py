"""Serving mixes (``schedsearch mix``): the three policies on a Llama-3.2-1B and a
Qwen2.5-0.5B mix, each one prefill with decode steps attending to long caches.

Prints per mix and policy: makespan (overheads included, ns), device time, deadlines met,
decode P50/P99, steady-stream throughput (the mix back to back: requests and tokens per
second), the chunk, whether the checker accepts the schedule; each request's end; and
the searched policy's candidates (whole prefill, chunks; the kernel schedules fused).
Figures, not pass/fail: the searches stop on their reproducible work budget. The time
limit is the whole mix's, as ``schedsearch mix --time-limit`` takes it. Deadlines are soft
(``--soft-deadlines``: the least total lateness, so that every policy gets a row) unless
``--hard``, where a mix the searched policy cannot serve on time prints the refusal.

    python benchmarks/bench_mix.py                  # both mixes, 30 s each
    python benchmarks/bench_mix.py --quick          # the Qwen mix only, 10 s
    python benchmarks/bench_mix.py --hard --objective weighted --json figures.json
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


#: Deadlines: about what a decode step alone takes plus the first 64-token chunk of the
#: prefill and the decodes before it (what ``chunked`` gives the later decodes), so that
#: the policies differ in which they meet.
MIXES = {
    "qwen": _mix("qwen2.5-0.5b-mix", "qwen2.5-0.5b", 256, 4, 1024, 3000),
    "llama": _mix("llama-3.2-1b-mix", "llama-3.2-1b", 128, 4, 512, 6000),
}


def run(name: str, limit: float, goal: Goal) -> dict[str, Any]:
    mix = MIXES[name]
    begin = time.perf_counter()
    heading = (f"\n{mix.name} (one prefill of {mix.requests[0].tokens} tokens, "
               f"{len(mix.requests) - 1} decodes of {mix.requests[1].past} past, deadline "
               f"{mix.requests[1].deadline_ns} ns each), {limit:g} s for the mix, "
               f"{'soft' if goal.soft_deadlines else 'hard'} deadlines, then the "
               f"{goal.objective}")
    try:
        report = serve(mix, load_target(mix.target),
                       SolveOptions(time_limit=limit, reproducible=True), goal=goal)
    except DeadlinesMissed as missed:
        print(f"{heading}, wall {time.perf_counter() - begin:.0f} s\n"
              f"{missed.status.value}: {missed}", flush=True)
        return {"mix": mix.name, "limit": limit, "refused": str(missed)}
    wall = time.perf_counter() - begin
    print(f"{heading}, wall {wall:.0f} s")
    print(format_tables(report), flush=True)
    return {"mix": mix.name, "limit": limit, "wall_s": wall, **report.as_dict()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--only", choices=tuple(MIXES), nargs="+")
    parser.add_argument("--hard", action="store_true", help="hard deadlines")
    parser.add_argument("--objective", choices=OBJECTIVES, default="makespan")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    limit = args.time_limit or (10.0 if args.quick else 30.0)
    names = args.only or (["qwen"] if args.quick else list(MIXES))
    goal = Goal(args.objective, soft_deadlines=not args.hard)
    figures = [run(name, limit, goal) for name in names]
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
