"""``schedsearch whatif INPUT``: the gain of idealising one resource at a time, then all.

Prints one row per run (see :mod:`schedsearch.whatif`): what was idealised, the
end-to-end makespan (device time plus overheads), the device time, the overhead, the
gain over the baseline, for lanes and synchronisation the share of the baseline's
critical path they account for and the gain that share alone suggests, the bottleneck
(the largest lower-bound part) and whether the checker accepts the schedule. The last
row is the combined run, solved, not a sum of the rows. ``--json`` prints the same.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from models.workload import load_problem_input
from schedsearch.commands.options import add_search_options, add_target_option
from schedsearch.commands.study import study_options
from schedsearch.idealise import WhatIf, whatif
from schedsearch.wording import counted


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "whatif",
        description="Solve the problem as it is and again with one thing idealised at a "
                    "time (a lane kind infinitely fast, a budget unlimited, launch and "
                    "synchronisation free, a memory unlimited), then all together; print "
                    "the end-to-end gain of each. Gains do not add: the last row is the "
                    "combined run.")
    parser.add_argument("input", metavar="INPUT",
                        help="workload file, bundled example name, or npu-problem/1 file")
    add_target_option(parser, default_from="the input's")
    add_search_options(parser, time_limit=2.0,
                       time_help="seconds for the whole study, shared evenly among "
                                 "its solves (the baseline and each idealisation)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    problem, target = load_problem_input(args.input, args.target)
    options = study_options(args)
    result = whatif(problem, target, options=options)
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    else:
        print(f"{problem.name} on {target.name}: {counted(len(problem.ops), 'op')}; times in "
              f"{target.time_unit}")
        print(format_table(result))
    return 0


def format_table(result: WhatIf) -> str:
    """The table, then the notes of rows that kept the baseline's schedule."""
    header = ["idealised", "makespan", "device", "overhead", "gain", "crit. share",
              "estimate", "bottleneck", "legal"]
    rows = []
    for row in result.rows:
        r = row.result
        rows.append([row.label, str(r.makespan), str(r.device_makespan), str(r.overhead),
                     f"{row.gain:.3f}x",
                     "-" if row.share is None else f"{row.share:.0%}",
                     "-" if row.estimate is None else f"{row.estimate:.3f}x",
                     row.bottleneck,
                     "yes" if r.legal else "no: " + ",".join(r.violations)])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in (0, 7) else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [line(header), *map(line, rows)]
    notes = [f"  {row.label}: {row.note}" for row in result.rows if row.note]
    if notes:
        out += ["notes:", *notes]
    out.append("gains do not add: 'all together' is solved, not summed")
    return "\n".join(out)
