"""``schedsearch targets``: the bundled targets, one name per line."""

from __future__ import annotations

import argparse

from models.targets import target_names


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "targets",
        description="List the bundled npu-target/1 targets, one name per line.")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    for name in target_names():
        print(name)
    return 0
