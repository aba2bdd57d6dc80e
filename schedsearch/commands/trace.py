"""``schedsearch trace SCHEDULE -o trace.json``: a schedule as a Chrome trace for Perfetto."""

from __future__ import annotations

import argparse

from models.formats import read_schedule
from schedsearch.output import output_file
from schedsearch.trace import read_violations, schedule_to_trace, write_trace


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "trace", help="write a schedule as a Chrome trace (Perfetto, chrome://tracing)",
        description="Write SCHEDULE as a Chrome trace event file: one track per lane unit, "
                    "one per task, counters for each memory's live bytes and each budget's "
                    "draw. Open it at ui.perfetto.dev or chrome://tracing.")
    parser.add_argument("schedule", metavar="SCHEDULE",
                        help="an npu-schedule/1 file ('-' reads standard input)")
    parser.add_argument("-o", "--output", required=True, metavar="TRACE.json",
                        type=output_file,
                        help="where to write the trace (written whole or not at all)")
    parser.add_argument("--violations", metavar="REPORT.json",
                        help="a checker report (`schedcheck verify --json`): each violation "
                             "becomes an instant event on the tracks it involves")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    schedule = read_schedule(args.schedule)
    violations = read_violations(args.violations) if args.violations else []
    trace = schedule_to_trace(schedule, violations)
    write_trace(trace, args.output)
    print(f"wrote {args.output}: {len(schedule.ops)} ops, {len(violations)} violations")
    return 0
