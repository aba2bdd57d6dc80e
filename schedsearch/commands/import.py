"""``schedsearch import MODEL.onnx [--dim NAME=V ...] -o workload.toml``: the workload an
ONNX model imports to, as an editable file, and what became of its nodes."""

from __future__ import annotations

import argparse

from models.onnx.lower import UNKNOWN, import_onnx
from schedsearch.commands.options import add_dim_option, add_target_option, dims_of
from schedsearch.output import STDOUT, output_file, write_with
from schedsearch.tuning.workload_file import workload_toml
from schedsearch.wording import counted


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "import",
        description="Fold the model's constants and dimensions, map what remains onto "
                    "the operator library (docs/onnx.md), write the workload as TOML and "
                    "print, per ONNX op type, what became of its nodes: folded, view, a "
                    "task kind, or a vector pass. Every other command also takes the "
                    ".onnx file directly.")
    parser.add_argument("model", metavar="MODEL", help="an .onnx file")
    parser.add_argument("-o", "--output", metavar="FILE", type=output_file,
                        help="write the workload here (whole or not at all); default stdout")
    add_target_option(parser, default_from="hexagon-v75")
    add_dim_option(parser)
    parser.add_argument("--unknown", choices=UNKNOWN, default="error",
                        help="an op type nothing maps: refuse the model (error, the "
                             "default) or price the node as one vector pass over its "
                             "input and output bytes (vector)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    dims = dims_of(args)
    workload, summary = import_onnx(args.model, dims, args.target or "hexagon-v75",
                                    args.unknown)
    text = summary.header(dims) + workload_toml(workload)
    if args.output is None or args.output == STDOUT:
        print(text, end="")
        return 0
    write_with(args.output, lambda stream: stream.write(text.encode("utf-8")))
    print(f"{args.output}: {counted(len(workload.tasks), 'task')} on {workload.target}")
    print(summary.table())
    return 0
