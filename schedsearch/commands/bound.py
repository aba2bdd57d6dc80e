"""``schedsearch bound PROBLEM``: the makespan lower bound and its parts."""

from __future__ import annotations

import argparse
import json

from models.bounds import lower_bound
from models.workload import load_problem_input
from schedsearch.commands.options import (
    add_dim_option,
    add_size_option,
    add_target_option,
    dims_of,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bound", help="print a lower bound on the makespan and its parts",
        description="Print a lower bound on the makespan of any legal schedule: the "
                    "largest of per-lane work, per-budget draw, disjunctive chains and the "
                    "critical path. PROBLEM is an npu-problem/1 file or a workload.")
    parser.add_argument("problem", metavar="PROBLEM",
                        help="npu-problem/1 file, workload file or example name")
    add_target_option(parser, default_from="the problem's meta.target or the workload's")
    add_dim_option(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_size_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    problem, target = load_problem_input(args.problem, args.target, args.max_ops,
                                         dims_of(args))
    bound = lower_bound(problem, target)
    if args.json:
        print(json.dumps({"problem": problem.name, "target": target.name,
                          "time_unit": target.time_unit, **bound.as_dict()}, indent=1))
        return 0
    print(f"lower bound: {bound.value} {target.time_unit} ({problem.name} on {target.name}, "
          f"{len(problem.ops)} ops)")
    width = max(map(len, bound.parts), default=0)
    for part, value in bound.parts.items():
        print(f"  {part:<{width}}  {value}")
    return 0
