"""``schedsearch target NAME``: print a target's ``npu-target/1`` JSON."""

from __future__ import annotations

import argparse
import json

from models.formats import target_to_dict
from models.targets import load_target


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "target",
        description="Print a bundled target (or a target file, checked) as npu-target/1 "
                    "JSON, with the source of every figure in meta.sources.")
    parser.add_argument("name", metavar="NAME", help="bundled target name or file")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    print(json.dumps(target_to_dict(load_target(args.name)), indent=1))
    return 0
