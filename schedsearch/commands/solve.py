"""``schedsearch solve``: search a legal schedule with the shortest makespan it can find.

A thin layer over :func:`schedsearch.api.solve_report`: it parses options, prints a
progress line per improvement and a summary to stderr, writes the output file whole or
not at all, and with ``--verify`` checks the result with the independent checker (exit 1
and the violations if it is illegal). Unusable input or an infeasible problem is an
:class:`~models.errors.InputError`, which ``schedsearch.cli.main`` turns into one line
and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from models.errors import InputError
from models.formats import schedule_to_dict, write_json_atomic
from models.workload import load_problem_input
from schedsearch.api import SECONDARIES, Progress, SolveReport, solve_report
from schedsearch.commands.options import add_search_options, add_target_option
from schedsearch.hazards import GRANULARITIES


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "solve", help="search a legal schedule with the shortest makespan",
        description="From a workload (file or bundled example name) or an npu-problem/1 "
                    "file to a legal npu-schedule/1 with the shortest makespan found.")
    parser.add_argument("input", metavar="INPUT",
                        help="workload file, bundled example name, or npu-problem/1 file")
    add_target_option(parser, default_from="the input's")
    parser.add_argument("-o", "--output", metavar="OUT.json", required=True,
                        help="schedule file to write (whole or not at all)")
    add_search_options(parser, time_limit=10.0,
                       time_help="hard wall-clock limit in seconds; the search normally "
                                 "stops earlier, on its reproducible work budget")
    parser.add_argument("--granularity", choices=GRANULARITIES, default="tile",
                        help="tile: interleave freely; task: a barrier between tasks")
    parser.add_argument("--secondary", choices=SECONDARIES, default=None,
                        help="after the makespan, also minimise this (peak-memory)")
    parser.add_argument("--verify", action="store_true",
                        help="check the result with schedcheck's verifier; exit 1 if illegal")
    parser.set_defaults(handler=run)


def _print_progress(progress: Progress) -> None:
    print(f"[{progress.elapsed:7.2f}s] {progress.stage:<12} makespan {progress.makespan} "
          f"bound {progress.bound}", file=sys.stderr, flush=True)


def _summary(report: SolveReport) -> str:
    meta = report.schedule.meta or {}
    lines = [f"makespan {report.schedule.makespan}  lower bound {meta['bound']}  "
             f"ratio {report.ratio:.3f}  solver {meta['solver']} ({meta['status']})  "
             f"wall {meta['wall_s']:.2f}s"
             f"{'' if meta.get('reproducible', True) else '  (cut by the time limit)'}"]
    busy = "  ".join(f"{lane} {share:.0%}" for lane, share in report.busy_share.items())
    lines.append(f"busy share: {busy or '-'}")
    peak = "  ".join(f"{memory} {size} B" for memory, size in report.peak_bytes.items())
    lines.append(f"peak memory: {peak or '-'}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    problem, target = load_problem_input(args.input, args.target)
    report = solve_report(problem, target, time_limit=args.time_limit, seed=args.seed,
                          workers=args.workers, granularity=args.granularity,
                          secondary=args.secondary, progress=_print_progress,
                          source=args.input)
    document = schedule_to_dict(report.schedule)
    try:
        write_json_atomic(args.output, document)
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", source=args.output,
                         rule="FILE") from None
    print(_summary(report), file=sys.stderr)
    if args.verify:
        from checker import verify

        verdict = verify(document)
        if not verdict.legal:
            for violation in verdict.violations:
                print(f"{violation.code}: {violation.message}", file=sys.stderr)
            return 1
        print("verify: legal", file=sys.stderr)
    return 0
