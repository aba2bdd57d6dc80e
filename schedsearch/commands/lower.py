"""``schedsearch lower SCHEDULE -o PROGRAM.json``: a schedule to the program a runtime runs.

Prints the number of needed orders, of waits before and after the transitive reduction,
and of waits per op. The program is written whole or not at all.
"""

from __future__ import annotations

import argparse

from models.errors import InputError
from models.formats import read_schedule
from schedsearch import output
from schedsearch.program import lower_report, program_to_dict
from schedsearch.wording import counted


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lower",
        description="Lower SCHEDULE (npu-schedule/1) to an npu-program/1: one queue per "
                    "lane unit in order of start, and the fewest waits that keep every "
                    "order the schedule's legality relies on, for any duration. Check it "
                    "with `schedcheck verify-program`.")
    parser.add_argument("schedule", metavar="SCHEDULE",
                        help="an npu-schedule/1 file ('-' reads standard input)")
    parser.add_argument("-o", "--output", required=True, metavar="PROGRAM.json",
                        type=output.output_file,
                        help="where to write the program (whole or not at all)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    schedule = read_schedule(args.schedule)
    try:
        report = lower_report(schedule)
    except InputError as error:
        raise error.with_source(args.schedule) from None
    output.write_json(args.output, program_to_dict(report.program))
    print(f"needed orders: {report.needed} ({report.implied_by_queues} implied by queues)")
    print(f"waits: {report.waits_before} before reduction, {report.waits_after} after")
    print(f"waits per op: {report.waits_per_op:.3f} ({counted(len(schedule.ops), 'op')}, "
          f"{counted(len(report.program.queues), 'queue')})")
    print(f"wrote {args.output}")
    return 0
