"""``schedsearch trace SCHEDULE -o trace.json``: a schedule as a Chrome trace for Perfetto.

Given an ``npu-program/1`` instead, it draws one simulated run of the program (``--jitter``,
``--seed``) with each wait as a flow arrow (:mod:`schedsearch.program.runtrace`).
"""

from __future__ import annotations

import argparse

from models.formats import schedule_from_dict
from models.jsonio import load_json_file
from schedsearch.commands.options import seed_number
from schedsearch.commands.reports import read_report_for
from schedsearch.output import output_file_only
from schedsearch.program.model import PROGRAM_FORMAT, program_from_dict
from schedsearch.program.runtrace import program_run_trace
from schedsearch.program.simulate import Jitter
from schedsearch.trace import schedule_to_trace, write_trace
from schedsearch.wording import counted


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "trace",
        description="Write SCHEDULE as a Chrome trace event file: one track per lane unit, "
                    "one per task, counters for each memory's live bytes and each budget's "
                    "draw. Open it at ui.perfetto.dev or chrome://tracing.")
    parser.add_argument("schedule", metavar="SCHEDULE",
                        help="an npu-schedule/1 file, or an npu-program/1 file to draw one "
                             "simulated run of ('-' reads standard input)")
    parser.add_argument("-o", "--output", required=True, metavar="TRACE.json",
                        type=output_file_only,
                        help="where to write the trace (written whole or not at all)")
    parser.add_argument("--violations", metavar="REPORT.json",
                        help="a checker report (`schedcheck verify --json`): each violation "
                             "becomes an instant event on the tracks it involves")
    parser.add_argument("--jitter", type=Jitter.parse, default=Jitter(0.1), metavar="SPEC",
                        help="for an npu-program/1 input: the noise of the one simulated run "
                             "drawn, as in `schedsearch simulate` (default 0.1)")
    parser.add_argument("--seed", type=seed_number, default=0, metavar="K",
                        help="for an npu-program/1 input: the seed of that run (default 0)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    source = "<stdin>" if args.schedule == "-" else args.schedule
    document = load_json_file(args.schedule)
    program = None
    if isinstance(document, dict) and document.get("format") == PROGRAM_FORMAT:
        program = program_from_dict(document, source)
        schedule = program.schedule
    else:
        schedule = schedule_from_dict(document, source)
    violations = read_report_for(args.violations, schedule) if args.violations else []
    if program is not None:  # one simulated run, its waits as flow arrows
        trace, schedule = program_run_trace(program, args.jitter, args.seed, violations)
    else:
        trace = schedule_to_trace(schedule, violations)
    write_trace(trace, args.output)
    print(f"wrote {args.output}: {counted(len(schedule.ops), 'op')}, "
          f"{counted(len(violations), 'violation')}")
    return 0

