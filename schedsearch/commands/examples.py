"""``schedsearch examples``: the bundled example workloads, one name per line.

``--show NAME`` prints one of them as it is bundled: a workload file to copy and edit.
"""

from __future__ import annotations

import argparse
import sys

from models.workload import example_names, example_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "examples",
        description="List the bundled example workloads, one name per line. Any command "
                    "that takes a workload file also takes one of these names; --show "
                    "prints one, a starting point for a workload of your own.")
    parser.add_argument("--show", metavar="NAME",
                        help="print the workload file of example NAME")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.show is not None:
        sys.stdout.write(example_text(args.show))
        return 0
    for name in example_names():
        print(name)
    return 0
