"""``schedsearch solve``: search a legal schedule with the shortest makespan it can find.

A thin layer over :func:`schedsearch.engine.search.solve_report`: it parses options, shows the
search's progress (:mod:`schedsearch.commands.progress`) and a summary on stderr, writes the
output file whole or not at all, and with ``--verify`` checks the result with the
independent checker.

Exit status: 0 a schedule was written; 1 no schedule (the problem is proved infeasible,
or none was found within the limit, or a heuristic gave up: the message says which) or
``--verify`` found it illegal; 2 unusable input (one line, from ``schedsearch.cli``);
130 interrupted by SIGINT/SIGTERM, after writing the best legal schedule found so far
(checked by the independent checker, ``meta.status`` INTERRUPTED) if there is one.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from models.errors import InputError
from models.formats import schedule_to_dict
from models.workload import load_problem_input
from schedsearch.commands.options import (
    add_dim_option,
    add_search_options,
    add_size_option,
    add_target_option,
    command_start,
    dims_of,
)
from schedsearch.commands.progress import display
from schedsearch.engine import interrupt
from schedsearch.engine.hazards import GRANULARITIES
from schedsearch.engine.result import EXIT_CODES, NoSchedule, SolveStatus, refusal
from schedsearch.engine.search import SECONDARIES, SolveReport, solve_report
from schedsearch.output import output_file_only, write_json
from schedsearch.wording import counted


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "solve",
        description="From a workload (file or bundled example name) or an npu-problem/1 "
                    "file to a legal npu-schedule/1 with the shortest makespan found.")
    parser.add_argument("input", metavar="INPUT",
                        help="workload file, bundled example name, or npu-problem/1 file")
    add_target_option(parser, default_from="the input's")
    add_dim_option(parser)
    parser.add_argument("-o", "--output", metavar="OUT.json", required=True, type=output_file_only,
                        help="schedule file to write (whole or not at all)")
    add_search_options(parser, time_limit=10.0,
                       time_help="wall-clock limit in seconds of the whole command, "
                                 "reading the input included; the search uses all of it "
                                 "(or stops when it meets the lower bound), or, with "
                                 "--reproducible, stops earlier on its work budget")
    parser.add_argument("--granularity", choices=GRANULARITIES, default="tile",
                        help="tile: interleave freely; task: a barrier between tasks")
    parser.add_argument("--secondary", choices=SECONDARIES, default=None,
                        help="after the makespan, also minimise this (peak-memory: the "
                             "highest address used in each memory)")
    parser.add_argument("--verify", action="store_true",
                        help="check the result with schedcheck's verifier; exit 1 if illegal")
    add_size_option(parser)
    parser.set_defaults(handler=run)


def _summary(report: SolveReport, reproducible: bool) -> str:
    """The closing lines; ``reproducible`` says whether the run was asked to stop by its
    work budget (then a cut by the clock is worth saying: the answer may not repeat)."""
    stats = report.stats
    if report.status is SolveStatus.INTERRUPTED or stats.reproducible:
        cut = ""
    elif reproducible:
        cut = "  (cut by the time limit: may not repeat)"
    else:
        cut = "  (searched until the time limit)"
    lines = [f"makespan {report.schedule.makespan}  lower bound {stats.bound}  "
             f"ratio {report.ratio:.3f}  solver {stats.solver} ({report.status.value})  "
             f"wall {stats.wall_s:.2f}s{cut}"]
    busy = "  ".join(f"{lane} {share:.0%}" for lane, share in report.busy_share.items())
    lines.append(f"busy share: {busy or '-'}")
    memory = "  ".join(f"{name} {report.peak_bytes[name]} B live at most, highest address "
                       f"{report.extent_bytes[name]} B" for name in report.peak_bytes)
    lines.append(f"memory: {memory or '-'}")
    if stats.secondary is not None:
        lines.append(_secondary_line(stats.secondary))
    return "\n".join(lines)


#: What the peak-memory stage's CP-SAT status says of the addresses it kept.
_PEAK_MEMORY_VERDICTS = {"OPTIMAL": "the least any schedule of this makespan needs",
                         "FEASIBLE": "the lowest found at this makespan"}


def _secondary_line(secondary: dict[str, Any]) -> str:
    """What ``--secondary peak-memory`` did, from the schedule's ``meta.secondary``."""
    status = secondary.get("status")
    if status == "SKIPPED_TOO_LARGE":
        return "peak memory: not minimised (too many ops for one CP-SAT model of the whole)"
    extent = secondary.get("extent_bytes")
    verdict = _PEAK_MEMORY_VERDICTS.get(str(status), f"none lower found, CP-SAT {status}")
    return (f"peak memory: highest addresses sum to {extent:,} B over the memories "
            f"({verdict})")


def run(args: argparse.Namespace) -> int:
    started = command_start(args)  # imports, tiling and checking count in the limit
    try:
        try:
            problem, target = load_problem_input(args.input, args.target, args.max_ops,
                                                 dims_of(args))
        except InputError as error:  # a problem that cannot fit is not unusable input
            raise refusal(error) from None
        with interrupt.cooperating(), display("solve", begin=started) as shown:
            shown.stage("preparing", counted(len(problem.ops), "op"))
            report = solve_report(problem, target, time_limit=args.time_limit,
                                  seed=args.seed, workers=args.workers,
                                  reproducible=args.reproducible,
                                  granularity=args.granularity, secondary=args.secondary,
                                  progress=shown.progress, source=args.input,
                                  started=started, validated=True)
    except NoSchedule as refused:
        at = f" at granularity={args.granularity}" if args.granularity != "tile" else ""
        print(f"schedsearch: no schedule ({refused.status.value}{at}): {refused}",
              file=sys.stderr)
        return EXIT_CODES[refused.status]
    document = schedule_to_dict(report.schedule)
    interrupted = report.status is SolveStatus.INTERRUPTED
    if args.verify or interrupted:
        from checker import verify

        verdict = verify(document)
        if not verdict.legal:
            for violation in verdict.violations:
                print(f"{violation.code}: {violation.message}", file=sys.stderr)
            if interrupted:
                print("schedsearch: interrupted; the best schedule so far is not legal, "
                      "nothing written", file=sys.stderr)
                return EXIT_CODES[report.status]
            write_json(args.output, document)
            return 1
    write_json(args.output, document)
    print(_summary(report, args.reproducible), file=sys.stderr)
    if interrupted:
        print(f"schedsearch: interrupted; wrote the best legal schedule so far to "
              f"{args.output}", file=sys.stderr)
    elif args.verify:
        print("verify: legal", file=sys.stderr)
    return EXIT_CODES[report.status]
