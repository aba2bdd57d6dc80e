"""``schedsearch examples``: the bundled example workloads, one name per line."""

from __future__ import annotations

import argparse

from models.workload import example_names


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "examples", help="list the bundled example workloads",
        description="List the bundled example workloads, one name per line. Any command "
                    "that takes a workload file also takes one of these names.")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    for name in example_names():
        print(name)
    return 0
