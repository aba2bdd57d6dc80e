"""What the chain studies (``schedsearch chain sweep``, ``schedsearch chain crossover``)
share: their parser under ``chain``, the default examples, one study per example printed
as it goes, and the figures written once at the end (bad input and interrupts end the
way every ``schedsearch`` command ends, in :mod:`schedsearch.cli`: nothing is written
unless every example finished)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from models.formats import Target
from models.workload import Workload, example_names, load_workload, workload_target
from schedsearch.commands.options import add_target_option, limit_seconds
from schedsearch.output import output_file_only, write_json

__all__ = ["STUDIES", "chain_examples", "study_parser", "number_list", "run_per_example"]

#: The studies under ``schedsearch chain``, each in ``schedsearch/commands/chain_<name>.py``.
STUDIES = ("sweep", "crossover")


def chain_examples() -> list[str]:
    """The bundled chain examples, the default of the studies."""
    return [n for n in example_names() if n.startswith("chain-") or n == "rmsnorm-gemm-chain-v75"]


def study_parser(subparsers: Any, name: str, *, help: str, description: str,
                 time_limit: float) -> argparse.ArgumentParser:
    """``schedsearch chain NAME``'s parser, with the options every study takes: examples,
    ``--time-limit`` (seconds per solve), ``--target`` and ``--json``."""
    chain = subparsers.add_parser("chain", help="a chain's paths A/B/C, and studies of them")
    studies = chain.add_subparsers(dest="study", required=True, metavar="STUDY")
    parser = studies.add_parser(name, help=help, description=description)
    parser.add_argument("examples", nargs="*",
                        help="bundled examples or workload files (default: every chain "
                             "example)")
    parser.add_argument("--time-limit", type=limit_seconds, default=time_limit,
                        help=f"seconds per solve (default {time_limit:g})")
    add_target_option(parser, "each workload's")
    parser.add_argument("--json", type=output_file_only, help="write the figures to this file")
    return parser


def run_per_example(args: argparse.Namespace,
                    study: Callable[[str, Workload, Target], list[dict[str, Any]]]) -> int:
    """``study(name, workload, target)`` for each of ``args.examples`` (every chain
    example when none), the target being ``args.target`` or the workload's own; the
    figures it returns are written to ``args.json`` when all are done."""
    figures = {}
    for name in args.examples or chain_examples():
        workload = load_workload(name)
        figures[name] = study(name, workload, workload_target(workload, args.target))
    if args.json:
        write_json(args.json, figures)
    return 0


def number_list(convert: Callable[[str], float], valid: Callable[[float], bool],
                rule: str) -> Callable[[str], tuple[Any, ...]]:
    """An argparse type: comma-separated numbers, each ``valid`` (``rule`` says how)."""
    def parse(text: str) -> tuple[Any, ...]:
        try:
            values = tuple(convert(v) for v in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got "
                                             f"{text!r}") from None
        if not all(valid(v) for v in values):
            raise argparse.ArgumentTypeError(f"every value must be {rule}, got {text!r}")
        return values
    return parse
