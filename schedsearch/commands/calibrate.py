"""``schedsearch calibrate TARGET MEASUREMENTS... [--schedule S.json] -o calibrated.json``.

Fits the target's cost parameters to measured per-op timings (CSV) and traced runs of a
schedule (Chrome/Perfetto JSON, with ``--schedule`` naming the schedule they measured),
writes the calibrated ``npu-target/1`` whole or not at all, and prints the error report
(``--json``: as JSON on stdout). Bad measurement files are one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from models.errors import InputError
from models.formats import read_schedule
from models.targets import load_target
from schedsearch.calibrate.calibration import calibrate
from schedsearch.calibrate.measurements import (
    MeasuredRun,
    Measurement,
    is_trace_file,
    read_csv,
    read_trace,
)
from schedsearch.calibrate.report import report_text
from schedsearch.commands.options import seed_number
from schedsearch.output import STDOUT, output_file, write_json


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"a fraction in [0, 1), got {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        description="Fit TARGET's latencies, rates, vector passes and DDR bandwidth to "
                    "measured per-op timings (CSV) and traces of a schedule's run (JSON, "
                    "with --schedule) by robust least squares; write the calibrated "
                    "target and report the errors that remain (docs/calibrate.md).")
    parser.add_argument("target", metavar="TARGET", help="target name or npu-target/1 file")
    parser.add_argument("measurements", metavar="MEASUREMENTS", nargs="+",
                        help="measurement CSV files and/or Chrome/Perfetto trace JSON files")
    parser.add_argument("--schedule", metavar="S.json",
                        help="the npu-schedule/1 file the traces are runs of")
    parser.add_argument("-o", "--output", required=True, type=output_file,
                        metavar="calibrated.json", help="the calibrated target to write")
    parser.add_argument("--holdout", type=_fraction, default=0.0, metavar="F",
                        help="fraction of each op kind's rows held out of the fit and "
                             "used to score it (default 0: errors on the fitted rows)")
    parser.add_argument("--seed", type=seed_number, default=0, metavar="N",
                        help="seed of the held-out draw (default 0)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.output == STDOUT:
        raise InputError("the calibrated target is written to a file (the report goes to "
                         "standard output); give a path", source="-o", rule="OPTION")
    target = load_target(args.target)
    schedule = read_schedule(args.schedule) if args.schedule else None
    measurements: list[Measurement] = []
    runs: list[MeasuredRun] = []
    for path in args.measurements:
        if not is_trace_file(path):
            measurements += read_csv(path)
        elif schedule is None:
            raise InputError("a trace needs --schedule (the schedule it is a run of)",
                             source=path, rule="TRACE")
        else:
            runs.append(read_trace(path, schedule))
    result = calibrate(target, measurements, runs, sources=list(args.measurements),
                       output=args.output, holdout=args.holdout, seed=args.seed)
    write_json(args.output, result.target)
    if args.json:
        print(json.dumps(result.report.as_dict(), indent=1))
    else:
        print(report_text(result.report))
    for group in result.report.poor:
        print(f"calibrate: the {group.engine} roofline is a poor fit: its residuals follow "
              f"{', '.join(p.factor for p in group.patterns)}", file=sys.stderr)
    return 0
