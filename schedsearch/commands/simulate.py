"""``schedsearch simulate PROGRAM``: discrete-event runs of a program under noisy durations.

Prints P50/P95/P99 of the makespan against the static makespan, the busy share per lane
kind and the share of time ops waited on events; ``--policies`` runs the four
runtime policies of :mod:`schedsearch.program.policies` under the same noise.
"""

from __future__ import annotations

import argparse
import json

from schedsearch import output
from schedsearch.paths import SolveOptions
from schedsearch.program.model import read_program
from schedsearch.program.policies import Policy
from schedsearch.program.simulate import Jitter
from schedsearch.program.stats import Study, simulate


def _runs(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "simulate",
        description="Run PROGRAM (npu-program/1) as a discrete-event simulation: each op "
                    "lasts its modelled duration times a lognormal factor (mean 1, "
                    "coefficient of variation per lane kind), budget draws share the bus "
                    "fluidly, and every queue order and wait is kept.")
    parser.add_argument("program", metavar="PROGRAM",
                        help="an npu-program/1 file ('-' reads standard input)")
    parser.add_argument("--runs", type=_runs, default=1000, metavar="N",
                        help="runs per policy (default 1000)")
    parser.add_argument("--jitter", type=Jitter.parse, default=Jitter(0.1), metavar="SPEC",
                        help="coefficient of variation: CV for every lane kind, KIND=CV "
                             "for one, comma-separated (e.g. 0.1 or 0.1,DMA=0.3 or "
                             "HMX=0.1,DMA=0.3; kinds not named get the bare CV, else 0); "
                             "default 0.1")
    parser.add_argument("--seed", type=int, default=0, metavar="K",
                        help="seed of the noise (default 0)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--policies", action="store_true",
                        help="compare the four runtime policies (program, barrier, "
                             "dynamic, separate) under the same noise")
    parser.add_argument("--time-limit", type=_seconds, default=2.0, metavar="S",
                        help="seconds for each solve the barrier and separate policies "
                             "need (default 2)")
    parser.add_argument("--plot", type=output.image_file, metavar="FILE.png",
                        help="draw each policy's makespan distribution")
    parser.set_defaults(handler=run)


def _table(study: Study) -> str:
    static = study.static_makespan
    lines = [f"static makespan {static}; {study.runs} runs, jitter {study.jitter}, "
             f"seed {study.seed}",
             f"{'policy':<10}{'static':>10}{'P50':>10}{'P95':>10}{'P99':>10}"
             f"{'P50/st':>8}{'P99/st':>8}{'ev.wait':>9}"]
    for r in study.results:
        p50, p95, p99 = (r.percentile(p) for p in (50, 95, 99))
        waited = "-" if r.event_wait_share is None else f"{r.event_wait_share:.1%}"
        lines.append(f"{r.policy.value:<10}{r.static_makespan:>10}{p50:>10.0f}{p95:>10.0f}"
                     f"{p99:>10.0f}{p50 / static:>8.3f}{p99 / static:>8.3f}{waited:>9}")
    for r in study.results:
        busy = "  ".join(f"{lane} {share:.0%}" for lane, share in r.busy_share.items())
        lines.append(f"busy share ({r.policy.value}): {busy}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    program = read_program(args.program)
    policies = tuple(Policy) if args.policies else (Policy.PROGRAM,)
    study = simulate(program, runs=args.runs, jitter=args.jitter, seed=args.seed,
                     policies=policies,
                     options=SolveOptions(time_limit=args.time_limit, seed=args.seed))
    if args.plot:
        from schedsearch.program.figure import plot_study

        plot_study(study, args.plot)
    print(json.dumps(study.to_dict(), indent=1) if args.json else _table(study))
    return 0
