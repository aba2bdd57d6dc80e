"""``schedsearch select --plans DIR REQUEST``: the plan that applies, or the fallback path.

Reads every ``*.plan.json`` in DIR and the ``npu-request/1`` file REQUEST (docs/paths.md),
prints which plan applies or why none does, and the cost of what will run (makespan
with overheads, launches, events, DDR bytes, peak memory). With ``-o`` the schedule that
will run is written (whole or not at all).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from models.formats import schedule_to_dict
from schedsearch.commands.options import add_search_options
from schedsearch.engine import interrupt
from schedsearch.output import output_file_only, write_json
from schedsearch.paths import SolveOptions
from schedsearch.plans import FALLBACK_PATHS, read_plans, read_request, select
from schedsearch.wording import counted


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "select",
        description="Choose among saved plans (npu-plan/1) the one whose domain (shapes, "
                    "dtype, free memory, target and version) holds for REQUEST; when none "
                    "does, build the fallback path for the request and account its cost.")
    parser.add_argument("request", metavar="REQUEST", help="an npu-request/1 file")
    parser.add_argument("--plans", required=True, metavar="DIR",
                        help="directory of *.plan.json files")
    parser.add_argument("--fallback", choices=FALLBACK_PATHS, default="separate",
                        help="path to run when no plan applies (default separate)")
    add_search_options(parser, time_limit=5.0,
                       time_help="search budget of every fallback solve, in seconds")
    parser.add_argument("-o", "--output", metavar="OUT.json", type=output_file_only,
                        help="write the schedule that will run (npu-schedule/1)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    plans = read_plans(args.plans)
    request = read_request(args.request)
    options = SolveOptions(time_limit=args.time_limit, seed=args.seed, workers=args.workers,
                           reproducible=args.reproducible)
    with interrupt.cooperating():
        choice = select(plans, request, fallback=args.fallback, options=options)
    if interrupt.requested():
        raise interrupt.Interrupted
    if args.output:
        write_json(args.output, schedule_to_dict(choice.schedule))
    if args.json:
        print(json.dumps(choice.as_dict(), indent=1))
        return 0
    cost = choice.cost
    unit = request.target.time_unit
    peak = ", ".join(f"{m} {counted(b, 'byte')}" for m, b in cost["peak_bytes"].items())
    print(f"{choice.kind}: {choice.path}" + (f" from {choice.plan.source}" if choice.plan
                                             else ""))
    print(f"reason: {choice.reason}")
    print(f"cost: makespan {cost['makespan']} {unit} (device {cost['device_makespan']} + "
          f"overhead {cost['overhead']}), {counted(cost['launches'], 'launch')}, "
          f"{counted(cost['events'], 'event')}, {counted(cost['barriers'], 'barrier')}, "
          f"{cost['ddr_bytes']} DDR bytes, peak {peak}")
    if args.output:
        print(f"wrote {args.output}")
    return 0
