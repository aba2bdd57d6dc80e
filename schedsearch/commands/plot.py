"""``schedsearch plot SCHEDULE -o gantt.png``: a schedule as a picture (lanes, memory, budgets)."""

from __future__ import annotations

import argparse

from models.formats import read_schedule
from schedsearch.commands.reports import read_report_for
from schedsearch.output import image_file
from schedsearch.plot import plot_schedule


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plot",
        description="Draw SCHEDULE: one row per lane unit with ops coloured by task, each "
                    "memory's buffers as address-by-time rectangles, and each budget's draw "
                    "over time. The format follows the output's suffix (png, svg, pdf).")
    parser.add_argument("schedule", metavar="SCHEDULE",
                        help="an npu-schedule/1 file ('-' reads standard input)")
    parser.add_argument("-o", "--output", required=True, metavar="GANTT.png", type=image_file,
                        help="where to write the picture (written whole or not at all)")
    parser.add_argument("--violations", metavar="REPORT.json",
                        help="a checker report of SCHEDULE (`schedcheck verify --json`): "
                             "violations are drawn in red (a line at their time, an outline "
                             "around the ops they name)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    schedule = read_schedule(args.schedule)
    violations = read_report_for(args.violations, schedule) if args.violations else []
    plot_schedule(schedule, args.output, violations)
    print(f"wrote {args.output}")
    return 0
