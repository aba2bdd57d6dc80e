"""``schedsearch bound PROBLEM``: the makespan lower bound and its parts."""

from __future__ import annotations

import argparse
import json

from models.workload import load_problem_input
from schedsearch.commands.options import (
    add_dim_option,
    add_size_option,
    add_target_option,
    dims_of,
)
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.wording import counted


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bound",
        description="Print a lower bound on the makespan of any legal schedule: the "
                    "largest of its parts, each a bound on its own, and mark the parts "
                    "that bind. lane:K, the work of lane kind K over its units; "
                    "budget:B, the draw on budget B over its capacity; disjunctive:R, ops "
                    "that can never overlap on R; critical_path, the longest chain of "
                    "after edges; energy, every lane and budget together (an LP over the "
                    "mode choices); configuration, energy knowing which modes can run "
                    "side by side; memory:M, the address space times time the buffers of "
                    "memory M need; exclusion:M, ops whose buffers of M cannot all fit "
                    "at once; gaps:M, what memory forces into each gap between the ops "
                    "that run apart; head_tail:K and phases:K, the waits the orders "
                    "of every legal schedule force on lane kind K, before its first op, "
                    "after its last and between phases, with the traffic that crosses "
                    "them (docs/search.md, docs/bounds.md). "
                    "PROBLEM is an npu-problem/1 file "
                    "or a workload (docs/models.md has the formulas).")
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
          f"{counted(len(problem.ops), 'op')})")
    width = max(map(len, bound.parts), default=0)
    for part, value in bound.parts.items():
        print(f"  {part:<{width}}  {value}" + ("  (binds)" if value == bound.value else ""))
    return 0
