"""``schedsearch compare WORKLOAD``: the four execution paths side by side (docs/paths.md).

Prints one row per path (makespan with overheads, speed-up over separate kernels, device
time, overhead, launches, events, barriers, busy share per lane kind, peak memory,
whether the checker accepts the schedule), then the gains between paths, the contention
cost of concurrent kernels and the upper bound of the overlap gain. ``--json`` prints
the same figures as ``{"paths": [...], ...}``; ``--plot`` draws the four timelines;
``--save-plan DIR`` writes a plan file for ``schedsearch select``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from models.formats import Problem, Schedule, Target
from models.workload import load_problem_input
from schedsearch.commands.options import (
    add_dim_option,
    add_search_options,
    add_size_option,
    add_target_option,
    dims_of,
)
from schedsearch.commands.progress import Display, display
from schedsearch.commands.study import study_options
from schedsearch.engine import interrupt
from schedsearch.engine.search import solve
from schedsearch.output import image_file, output_dir
from schedsearch.paths import Comparison, Solver, compare
from schedsearch.plans import make_plan, write_plan
from schedsearch.wording import counted


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        description="Build the four paths (separate kernels in sequence, concurrent "
                    "kernels, one fused entry with a barrier between tasks, one fused "
                    "entry with interleaved tiles), verify each with the checker and score "
                    "them with the cost model, overheads included.")
    parser.add_argument("workload", metavar="WORKLOAD",
                        help="workload file, bundled example name, or npu-problem/1 file")
    add_target_option(parser, default_from="the input's")
    add_dim_option(parser)
    add_search_options(parser, time_limit=5.0,
                       time_help="seconds for the whole comparison, shared among its "
                                 "solves: half to the fused-interleaved search, a sixth "
                                 "to fused-barrier, the rest to the kernels")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--plot", metavar="PATHS.png", type=image_file,
                        help="draw the four schedules on one time axis")
    parser.add_argument("--save-plan", metavar="DIR", type=output_dir,
                        help="write a plan file (npu-plan/1) for `schedsearch select`")
    add_size_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    problem, target = load_problem_input(args.workload, args.target, args.max_ops,
                                         dims_of(args))
    options = study_options(args)
    with interrupt.cooperating(), display("compare") as shown:
        comparison = compare(problem, target, solver=_showing(shown, problem),
                             options=options)
    if interrupt.requested():  # the paths searched after the request are not comparable
        raise interrupt.Interrupted
    figures = comparison.as_dict()
    if args.json:
        print(json.dumps({"problem": problem.name, "target": target.name,
                          "time_unit": target.time_unit, **figures}, indent=1))
    else:
        print(f"{problem.name} on {target.name}: {counted(len(problem.tasks), 'task')}, "
              f"{counted(len(problem.ops), 'op')}; times in {target.time_unit}")
        print(format_table(comparison, figures))
    if args.plot:
        from schedsearch.plot import Panel, plot_paths

        plot_paths([Panel(p.name, p.schedule, p.makespan, p.overhead, p.launches, p.barriers,
                          p.violations) for p in comparison.paths], args.plot)
        if not args.json:
            print(f"wrote {args.plot}")
    if args.save_plan:
        plan = make_plan(comparison)
        written = write_plan(plan, args.save_plan)
        if not args.json:
            runs = (f"prefers its fallback ({plan.fallback['path']})"
                    if plan.fallback["preferred"] else f"runs {plan.cost['path']}")
            print(f"wrote {written}: {runs}")
    return 0


def _showing(shown: Display, checked: Problem) -> Solver:
    """:func:`schedsearch.engine.search.solve`, reporting each solve's progress to ``shown``;
    ``checked`` (the problem :func:`models.workload.load_problem_input` validated, which
    the fused paths solve whole) is not validated again, the kernels' problems are."""
    count = 0

    def solver(problem: Problem, target: Target, **options: Any) -> Schedule:
        nonlocal count
        count += 1
        shown.stage(f"solve {count}", f"{problem.name}, {counted(len(problem.ops), 'op')}, "
                                      f"{options.get('granularity', 'tile')}", fresh=True)
        return solve(problem, target, progress=shown.progress,
                     validated=problem is checked, **options)

    return solver


def format_table(comparison: Comparison, figures: dict[str, Any]) -> str:
    """The table and the summary lines of the plain-text output."""
    target = comparison.paths[0].schedule.target
    lanes, memories = list(target.lanes), list(target.memories)
    header = (["path", "makespan", "speed-up", "device", "overhead", "launches", "events",
               "barriers"] + [f"{lane} busy" for lane in lanes]
              + [f"peak {m} KiB" for m in memories] + ["legal"])
    rows = []
    for p in figures["paths"]:
        rows.append([p["name"], str(p["makespan"]), f"{p['speedup']:.3f}x",
                     str(p["device_makespan"]), str(p["overhead"]), str(p["launches"]),
                     str(p["events"]), str(p["barriers"])]
                    + [f"{p['busy_share'][lane]:.0%}" for lane in lanes]
                    + [f"{p['peak_bytes'][m] / 1024:.0f}" for m in memories]
                    + ["yes" if p["legal"] else "no: " + ",".join(p["violations"])])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    gains, bound = figures["gains"], figures["overlap_bound"]
    out = [line(header), *map(line, rows), "",
           f"entry-merge gain (separate -> fused-barrier):          {gains['entry_merge']:.3f}x",
           f"overlap gain (fused-barrier -> fused-interleaved):     {gains['overlap']:.3f}x",
           f"gain over concurrent (concurrent -> fused-interleaved): "
           f"{gains['over_concurrent']:.3f}x",
           f"contention cost in concurrent: {figures['contention_cost']} (contended minus "
           f"uncontended time of the best concurrent split of each wave)",
           f"overlap-gain upper bound: at most {bound['removable_share']:.1%} of "
           f"fused-barrier's time can be removed (lower bound {figures['lower_bound']} + one "
           f"launch), so at most {bound['speedup']:.3f}x"]
    notes = [f"  {p.name}: {p.note}" for p in comparison.paths if p.note]
    if notes:
        out += ["notes:", *notes]
    return "\n".join(out)
