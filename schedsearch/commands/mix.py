"""``schedsearch mix MIX.toml``: a mix of requests served three ways (docs/mix.md).

Prints one row per policy (``sequential``, ``chunked``, ``searched``: makespan with
overheads, device time, overhead, launches, events, deadlines met, decode P50/P99,
steady-stream throughput, the chunk, whether the checker accepts the schedule), then each
request's end under each policy. ``--json`` prints ``{"policies": {NAME: P}}`` instead;
``-o`` writes the searched schedule; ``--plot`` draws the three timelines.
``--simulate RUNS`` runs the searched schedule's program under noise (``--jitter``,
``--noise-seed``, as ``schedsearch simulate``) and adds each request's end P50/P99 and
the share of runs meeting its deadline (``"simulation"`` in the JSON).

Deadlines are hard unless ``--soft-deadlines``: the searched policy meets them all, or
the command refuses (exit 1, one line naming the requests: ``INFEASIBLE`` when it is
proved that they cannot all be met, else that no schedule meeting them was found).
``--soft-deadlines`` keeps the least total lateness instead; ``--objective weighted``
minimises the requests' weighted completion time after the deadlines.

Exit status: 0 when the three schedules were built; 1 hard deadlines missed (the
requests named on stderr); 2 unusable input; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from models.errors import InputError
from models.formats import Target, schedule_to_dict
from models.mix import load_mix
from models.targets import load_target
from schedsearch.commands.options import (
    add_search_options,
    add_size_option,
    add_target_option,
    seed_number,
)
from schedsearch.commands.simulate import MAX_RUNS, check_kinds, check_size, jitter_spec, run_count
from schedsearch.commands.study import study_options
from schedsearch.engine import interrupt
from schedsearch.engine.deadlines import OBJECTIVES, DeadlinesMissed
from schedsearch.mix.figures import PolicyFigures
from schedsearch.mix.noise import MixNoise, RequestNoise, simulate_mix
from schedsearch.mix.policies import Goal
from schedsearch.mix.serve import MixReport, serve
from schedsearch.output import image_file, output_file_only, write_json
from schedsearch.program.simulate import Jitter
from schedsearch.wording import counted


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mix",
        description="Build each request of a mix file as a decoder layer, schedule them "
                    "three ways (requests in sequence, chunked prefill with decode steps "
                    "between chunks, tiles interleaved by the search), verify each schedule "
                    "and report makespan, request ends, deadlines, decode latency and "
                    "throughput.")
    parser.add_argument("mix", metavar="MIX", help="mix file (.toml or .json)")
    add_target_option(parser, default_from="the mix's")
    add_search_options(parser, time_limit=10.0,
                       time_help="budget of the whole command, shared by every separate "
                                 "kernel's search and the searched policy's")
    parser.add_argument("--objective", choices=OBJECTIVES, default="makespan",
                        help="what the searched policy minimises after the deadlines: the "
                             "makespan, or the requests' weighted completion time "
                             "(sum of weight * end) (default makespan)")
    parser.add_argument("--soft-deadlines", action="store_true",
                        help="minimise the requests' total lateness instead of refusing a "
                             "mix whose deadlines are not all met")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("-o", "--output", metavar="SCHEDULE.json", type=output_file_only,
                        help="write the searched policy's schedule (npu-schedule/1)")
    parser.add_argument("--plot", metavar="P.png", type=image_file,
                        help="draw the three schedules on one time axis")
    parser.add_argument("--simulate", type=run_count, metavar="RUNS",
                        help="run the searched schedule's program RUNS times under noise "
                             "(as `schedsearch simulate` runs a program) and report each "
                             "request's end P50/P99 and the share of runs meeting its "
                             f"deadline (at most {MAX_RUNS:,} runs)")
    parser.add_argument("--jitter", type=jitter_spec, default=None, metavar="SPEC",
                        help="with --simulate: the noise, as simulate's --jitter (CV, or "
                             "KIND=CV, comma-separated; default 0.1)")
    parser.add_argument("--noise-seed", type=seed_number, default=0, metavar="K",
                        help="with --simulate: the seed of the noise (default 0)")
    add_size_option(parser)
    parser.set_defaults(handler=run)


def _noise_options(args: argparse.Namespace, target: Target) -> Jitter:
    """``--jitter`` (default 0.1), refused without ``--simulate`` or naming a lane kind
    the target lacks; checked before any search."""
    if args.simulate is None:
        for flag, given in (("--jitter", args.jitter is not None),
                            ("--noise-seed", args.noise_seed != 0)):
            if given:
                raise InputError(f"{flag} applies to --simulate runs only",
                                 source=flag, rule="OPTION")
    jitter = args.jitter if args.jitter is not None else Jitter(0.1)
    check_kinds(jitter, target)
    return jitter


def run(args: argparse.Namespace) -> int:
    mix = load_mix(args.mix)
    target = load_target(args.target or mix.target)
    jitter = _noise_options(args, target)
    options = study_options(args)  # one limit for the whole command, from its start
    goal = Goal(args.objective, args.soft_deadlines)
    try:
        with interrupt.cooperating():
            report = serve(mix, target, options, args.max_ops, goal=goal)
    except DeadlinesMissed as missed:
        print(f"schedsearch: mix: {missed.status.value}: {missed}", file=sys.stderr)
        return 1
    if interrupt.requested():  # policies searched after the request are not comparable
        raise interrupt.Interrupted
    searched = report.runs["searched"]
    simulation = None
    if args.simulate is not None:
        check_size(args.simulate, len(searched.schedule.ops))
        simulation = simulate_mix(searched, args.simulate, jitter, args.noise_seed)
    if args.json:
        document = report.as_dict()
        if simulation is not None:
            document["simulation"] = simulation.as_dict()
        print(json.dumps(document, indent=1))
    else:
        print(f"{mix.name} on {target.name}: {counted(len(mix.requests), 'request')}; "
              f"times in {target.time_unit}")
        print(format_tables(report))
        if simulation is not None:
            print("\n" + format_noise(simulation))
    if args.output:
        write_json(args.output, schedule_to_dict(searched.schedule))
    if args.plot:
        from schedsearch.plot import Panel, plot_paths

        plot_paths([Panel(f.name, report.runs[f.name].schedule, f.makespan, f.overhead,
                          f.launches, 0, f.violations) for f in report.figures.values()],
                   args.plot)
    missed = report.figures["searched"].missed
    if missed:  # soft deadlines: the least total lateness found
        print(f"schedsearch: mix: the searched policy misses the deadline of "
              f"{', '.join(missed)} (soft deadlines: the least total lateness found)",
              file=sys.stderr)
    return 0


def _row(f: PolicyFigures) -> list[str]:
    deadlines = [r for r in f.requests.values() if r.deadline_ns is not None]
    met = sum(r.deadline_met is True for r in deadlines)
    return [f.name, str(f.makespan), str(f.device_makespan), str(f.overhead),
            str(f.launches), str(f.events), f"{met}/{len(deadlines)}",
            "-" if f.decode_p50_ns is None else str(f.decode_p50_ns),
            "-" if f.decode_p99_ns is None else str(f.decode_p99_ns),
            f"{f.requests_per_s:.1f}", f"{f.tokens_per_s:.0f}",
            "whole" if f.chunk is None else str(f.chunk),
            "yes" if f.legal else "no: " + ",".join(f.violations)]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                      for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()
            for cells in (header, *rows)]


def format_noise(noise: MixNoise) -> str:
    """The table of ``--simulate``: each request's end P50/P99 and deadline share."""
    def share(r: RequestNoise) -> str:
        return "-" if r.met_share is None else f"{r.met_share:.1%}"

    head = (f"{noise.policy} under noise: {counted(noise.runs, 'run', grouped=True)}, "
            f"jitter {noise.jitter}, seed {noise.seed}; makespan P50 "
            f"{noise.makespan_p50:.0f}, P99 {noise.makespan_p99:.0f}")
    rows = [[name, "-" if r.deadline_ns is None else str(r.deadline_ns),
             f"{r.end_p50:.0f}", f"{r.end_p99:.0f}", share(r)]
            for name, r in noise.requests.items()]
    return "\n".join([head, *_table(["request", "deadline", "end P50", "end P99",
                                      "deadline met"], rows)])


def format_tables(report: MixReport) -> str:
    """The policy table, the request table and the notes of the plain-text output."""
    figures = list(report.figures.values())
    out = _table(["policy", "makespan", "device", "overhead", "launches", "events",
                  "deadlines", "decode P50", "decode P99", "requests/s", "tokens/s",
                  "chunk", "legal"], [_row(f) for f in figures])
    requests = list(figures[0].requests)
    deadline = {name: figures[0].requests[name].deadline_ns for name in requests}

    def end(f: PolicyFigures, name: str) -> str:
        r = f.requests[name]
        return f"{r.end}{'' if r.deadline_met is not False else ' (late)'}"

    out += [""] + _table(["request", "deadline", *(f"{f.name} end" for f in figures)],
                         [[name, "-" if deadline[name] is None else str(deadline[name]),
                           *(end(f, name) for f in figures)] for name in requests])
    notes = [f"  {f.name}: {f.note}" for f in figures if f.note]
    return "\n".join(out + (["", "notes:", *notes] if notes else []))
