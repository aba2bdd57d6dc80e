"""``schedsearch simulate PROGRAM``: discrete-event runs of a program under noisy durations.

Prints P50/P95/P99 of the makespan against the static makespan, the busy share per lane
kind and the share of time ops waited on events; ``--policies`` runs the four
runtime policies of :mod:`schedsearch.program.policies` under the same noise.
"""

from __future__ import annotations

import argparse
import json
import sys

from models.cost import NO_OVERHEADS
from models.errors import InputError
from models.formats import Target
from schedsearch import output
from schedsearch.commands.options import limit_seconds, seed_number
from schedsearch.paths import SolveOptions
from schedsearch.program.model import read_program
from schedsearch.program.policies import Policy
from schedsearch.program.simulate import Jitter
from schedsearch.program.stats import Study, simulate
from schedsearch.wording import counted

#: The most runs per policy accepted: each run keeps a row of every op's times.
MAX_RUNS = 1_000_000
#: The most op runs (runs x ops of the program) one policy may simulate: the simulator
#: holds several arrays of this many floats (2e7 of them: 160 MB each).
MAX_OP_RUNS = 20_000_000


def run_count(text: str) -> int:
    """A whole number of runs from 1 to :data:`MAX_RUNS`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_RUNS:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_RUNS:,}, got {text!r}")
    return value


def jitter_spec(text: str) -> Jitter:
    """``--jitter``'s SPEC; the kinds it names are checked against the program's target
    once it is read (:func:`check_kinds`)."""
    try:
        return Jitter.parse(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(error.message) from None


def check_kinds(jitter: Jitter, target: Target) -> None:
    """A lane kind ``--jitter`` names must be one of the target's: a typo would
    otherwise mean no noise on the kind meant."""
    unknown = sorted(set(jitter.by_kind) - set(target.lanes))
    if unknown:
        raise InputError(f"{', '.join(unknown)} is not a lane kind of target {target.name} "
                         f"(its lane kinds: {', '.join(target.lanes)})",
                         source="--jitter", rule="OPTION")


def check_size(runs: int, ops: int) -> None:
    """InputError when ``runs`` of a program of ``ops`` ops are more than the simulator
    holds (:data:`MAX_OP_RUNS`)."""
    if runs * ops > MAX_OP_RUNS:
        most = max(1, MAX_OP_RUNS // max(ops, 1))
        raise InputError(f"{counted(runs, 'run', grouped=True)} of "
                         f"{counted(ops, 'op', grouped=True)} is more than {MAX_OP_RUNS:,} "
                         f"op runs; at most {counted(most, 'run', grouped=True)} of this "
                         f"program",
                         source="--runs", rule="OPTION")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "simulate",
        description="Run PROGRAM (npu-program/1) as a discrete-event simulation: each op "
                    "lasts its modelled duration times a lognormal factor (mean 1, "
                    "coefficient of variation per lane kind), budget draws share the bus "
                    "fluidly, and every queue order and wait is kept.")
    parser.add_argument("program", metavar="PROGRAM",
                        help="an npu-program/1 file ('-' reads standard input)")
    parser.add_argument("--runs", type=run_count, default=1000, metavar="N",
                        help=f"runs per policy (default 1000, at most {MAX_RUNS:,})")
    parser.add_argument("--jitter", type=jitter_spec, default=Jitter(0.1), metavar="SPEC",
                        help="coefficient of variation: CV for every lane kind, KIND=CV "
                             "for one, comma-separated (e.g. 0.1 or 0.1,DMA=0.3 or "
                             "HMX=0.1,DMA=0.3; kinds not named get the bare CV, else 0); "
                             "default 0.1")
    parser.add_argument("--seed", type=seed_number, default=0, metavar="K",
                        help="seed of the noise (default 0)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--policies", action="store_true",
                        help="compare the four runtime policies (program, barrier, "
                             "dynamic, separate) under the same noise")
    parser.add_argument("--time-limit", type=limit_seconds, default=2.0, metavar="S",
                        help="seconds for each solve the barrier and separate policies "
                             "need (default 2)")
    parser.add_argument("--plot", type=output.image_file, metavar="FILE.png",
                        help="draw each policy's makespan distribution")
    parser.set_defaults(handler=run)


def _table(study: Study) -> str:
    static = study.static_makespan
    lines = [f"static makespan {static}; {counted(study.runs, 'run')}, jitter {study.jitter}, "
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
    target = program.schedule.target
    check_kinds(args.jitter, target)
    check_size(args.runs, len(program.schedule.ops))
    costs = None
    if not target.costs:
        costs = NO_OVERHEADS
        print(f"simulate: target {target.name} has no costs: launch, event, barrier and "
              f"dispatch overheads taken as 0", file=sys.stderr)
    policies = tuple(Policy) if args.policies else (Policy.PROGRAM,)
    study = simulate(program, runs=args.runs, jitter=args.jitter, seed=args.seed,
                     policies=policies,
                     options=SolveOptions(time_limit=args.time_limit, seed=args.seed),
                     costs=costs)
    if args.plot:
        from schedsearch.program.figure import plot_study

        plot_study(study, args.plot, time_unit=target.time_unit)
    print(json.dumps(study.to_dict(), indent=1) if args.json else _table(study))
    if args.plot:
        print(f"wrote {args.plot}", file=sys.stderr if args.json else sys.stdout)
    return 0
