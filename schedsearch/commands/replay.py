"""``schedsearch replay SCHEDULE TRACE [--json] [--plot P.png]``: the model against a run.

Per op the measured against the modelled duration, the measured makespan against the
schedule's, and how much of the difference lies on the measured critical path
(:mod:`schedsearch.calibrate.replay`); ``--plot`` draws both timelines, one above the
other. A trace of another schedule is one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from models.formats import read_schedule
from schedsearch.calibrate.measurements import read_trace
from schedsearch.calibrate.replay import Replay, plot_replay, replay
from schedsearch.output import image_file
from schedsearch.wording import counted

#: Ops listed in the text report (largest differences first); --json lists every op.
_LISTED = 15


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        description="Set a measured run of SCHEDULE (a Chrome/Perfetto trace whose slices "
                    "are named by the schedule's ops) beside the schedule: per-op measured "
                    "and modelled durations, makespans, and the measured critical path.")
    parser.add_argument("schedule", metavar="SCHEDULE", help="an npu-schedule/1 file")
    parser.add_argument("trace", metavar="TRACE", help="a trace of a run of SCHEDULE")
    parser.add_argument("--json", action="store_true", help="print the replay as JSON")
    parser.add_argument("--plot", type=image_file, metavar="P.png",
                        help="draw the schedule above the measured run")
    parser.set_defaults(handler=run)


def _text(result: Replay, unit: str) -> str:
    share = (f"{result.path_excess / result.difference:.0%}" if result.difference
             else "-")
    lines = [f"makespan: measured {result.measured_makespan:.6g} {unit}, schedule "
             f"{result.schedule_makespan} {unit} (difference {result.difference:+.6g})",
             f"measured critical path: {counted(len(result.critical_path), 'op')}, measured "
             f"{result.path_measured:.6g} vs modelled {result.path_modelled} "
             f"(excess {result.path_excess:+.6g}, {share} of the difference), "
             f"waiting {result.path_gaps:.6g}",
             f"{'op':<32} {'modelled':>10} {'measured':>10} {'diff':>9}  path"]
    worst = sorted(result.ops, key=lambda op: -abs(op.difference))[:_LISTED]
    for op in worst:
        lines.append(f"{op.name:<32} {op.modelled:>10} {op.measured:>10.6g} "
                     f"{op.difference / max(op.modelled, 1):>+9.1%}  "
                     f"{'*' if op.on_critical_path else ''}")
    if len(result.ops) > _LISTED:
        lines.append(f"({len(result.ops) - _LISTED} more ops; --json lists all)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    schedule = read_schedule(args.schedule)
    measured = read_trace(args.trace, schedule)
    result = replay(measured)
    if args.plot:
        plot_replay(measured, args.plot)
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    else:
        print(_text(result, schedule.target.time_unit))
    if args.plot:
        print(f"wrote {args.plot}", file=sys.stderr if args.json else sys.stdout)
    return 0
