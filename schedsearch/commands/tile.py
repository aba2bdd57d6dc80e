"""``schedsearch tile WORKLOAD -o problem.json``: tile a workload into an npu-problem/1."""

from __future__ import annotations

import argparse
import json

from models.formats import problem_to_dict
from models.workload import load_workload, scaled, tile, workload_target
from schedsearch.commands.options import (
    add_dim_option,
    add_size_option,
    add_target_option,
    dims_of,
    positive_number,
)
from schedsearch.output import STDOUT, output_file, write_json
from schedsearch.wording import counted


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tile",
        description="Tile a workload (a .toml/.json file or a bundled example name) into "
                    "an npu-problem/1 document whose meta.target names its target.")
    parser.add_argument("workload", metavar="WORKLOAD", help="workload file or example name")
    parser.add_argument("-o", "--output", metavar="FILE", type=output_file,
                        help="write the problem here (whole or not at all); default stdout")
    add_target_option(parser, default_from="the workload's")
    add_dim_option(parser)
    parser.add_argument("--scale", metavar="FACTOR", type=positive_number,
                        help="multiply each task's row dimension (gemm M, else rows)")
    add_size_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    workload = load_workload(args.workload, dims_of(args))
    if args.scale is not None:
        workload = scaled(workload, args.scale)
    target = workload_target(workload, args.target)
    problem = tile(workload, target, args.max_ops)
    document = problem_to_dict(problem)
    if args.output is None or args.output == STDOUT:
        print(json.dumps(document, indent=1))
    else:
        write_json(args.output, document)
        print(f"{args.output}: {counted(len(problem.ops), 'op')}, "
              f"{counted(len(problem.buffers), 'buffer')}, "
              f"{counted(len(problem.after), 'after edge')}, "
              f"{counted(len(problem.tasks), 'task')} on {target.name}")
    return 0
