"""What the chain study commands (``sweep``, ``crossover``) share: run one study per
example, print as it goes, write the figures once at the end, and end the way every
``schedsearch`` command ends (exit 2 with one line on bad input, 130 when interrupted,
no output file unless everything finished)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from models.errors import InputError
from models.formats import Target
from models.targets import load_target
from models.workload import Workload, example_names, load_workload
from schedsearch import interrupt
from schedsearch.output import write_json

__all__ = ["chain_examples", "number_list", "run_per_example"]


def chain_examples() -> list[str]:
    """The bundled chain examples, the default of the commands."""
    return [n for n in example_names() if n.startswith("chain-") or n == "rmsnorm-gemm-chain-v75"]


def run_per_example(parser: argparse.ArgumentParser, args: argparse.Namespace,
                    study: Callable[[str, Workload, Target], list[dict[str, Any]]]) -> int:
    """``study(name, workload, target)`` for each of ``args.examples`` (every chain
    example when none), the target being ``args.target`` or the workload's own; the
    figures it returns are written to ``args.json`` when all are done."""
    interrupt.install()
    try:
        figures = {}
        for name in args.examples or chain_examples():
            workload = load_workload(name)
            figures[name] = study(name, workload, load_target(args.target or workload.target))
        if args.json:
            write_json(args.json, figures)
    except InputError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, interrupt.Interrupted):
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
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
