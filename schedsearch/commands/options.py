"""Options several commands share, declared and checked in one place.

Every command that runs the search takes ``--target``, ``--time-limit``, ``--seed`` and
``--workers`` with the same meaning; argparse rejects a bad value (not a finite positive
time, fewer than one worker) with one line and exit status 2 before anything runs.
"""

from __future__ import annotations

import argparse
import math
import time

from models.errors import InputError
from models.workload import MAX_OPS

__all__ = ["add_target_option", "add_search_options", "positive_number", "at_least_one",
           "seed_number", "MAX_SEED", "limit_seconds", "worker_count", "byte_count",
           "MAX_TIME_LIMIT", "MAX_WORKERS", "MAX_BYTES", "add_size_option", "add_dim_option",
           "dim_binding", "dims_of", "command_start"]


def positive_number(text: str) -> float:
    """A finite number above zero (a scale factor, a time in seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    return value


#: The longest time limit accepted, in seconds (a week): beyond it the work budgets
#: derived from the limit (CP-SAT conflict caps) leave the ranges the solver takes.
MAX_TIME_LIMIT = 7 * 24 * 3600.0
#: The most parallel workers or processes accepted: each is a thread or process of its
#: own, so a mistyped count must not start millions of them.
MAX_WORKERS = 256
#: The largest byte count accepted (a signed 64-bit integer, as in the formats).
MAX_BYTES = 2**63 - 1


def limit_seconds(text: str) -> float:
    """A time limit in seconds: finite, above 0, at most :data:`MAX_TIME_LIMIT`."""
    value = positive_number(text)
    if value > MAX_TIME_LIMIT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_TIME_LIMIT:g} seconds, "
                                         f"got {text!r}")
    return value


def worker_count(text: str) -> int:
    """A count of workers or processes: 1 to :data:`MAX_WORKERS`."""
    value = at_least_one(text)
    if value > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_WORKERS}, got {value}")
    return value


def byte_count(text: str) -> int:
    """A size in bytes: a whole number from 0 to :data:`MAX_BYTES`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value <= MAX_BYTES:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_BYTES}, got {text!r}")
    return value


def at_least_one(text: str) -> int:
    """A count of workers or processes: a whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


#: The largest seed accepted: a signed 64-bit integer (CP-SAT's own seed is folded into
#: its 32-bit range by the search).
MAX_SEED = 2**63 - 1


def seed_number(text: str) -> int:
    """A random seed: a whole number from 0 to :data:`MAX_SEED`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_SEED}, got {text!r}")
    return value


def dim_binding(text: str) -> tuple[str, int]:
    """``NAME=VALUE``: a symbolic dimension of an ONNX model and its value (at least 1)."""
    name, sep, value = text.partition("=")
    if not sep or not name or not value.strip().isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE with a whole VALUE >= 1, "
                                         f"got {text!r}")
    return name, int(value)


def add_dim_option(parser: argparse.ArgumentParser) -> None:
    """``--dim NAME=VALUE`` (repeatable); :func:`dims_of` turns them into a mapping."""
    parser.add_argument("--dim", type=dim_binding, action="append", default=[],
                        metavar="NAME=VALUE",
                        help="value of a symbolic dimension of an ONNX model (repeatable)")


def dims_of(args: argparse.Namespace) -> dict[str, int]:
    """The ``--dim`` bindings; a name given twice is an error (exit 2)."""
    dims: dict[str, int] = {}
    for name, value in args.dim:
        if dims.get(name, value) != value:
            raise InputError(f"--dim {name} given twice ({dims[name]} and {value})",
                             source="<command line>", rule="DIM")
        dims[name] = value
    return dims


def add_target_option(parser: argparse.ArgumentParser, default_from: str) -> None:
    parser.add_argument("--target", metavar="NAME|FILE",
                        help=f"target name or npu-target/1 file (default: {default_from})")


def add_size_option(parser: argparse.ArgumentParser) -> None:
    """``--max-ops N``: the largest problem a workload may tile into (see
    :data:`models.workload.MAX_OPS`)."""
    parser.add_argument("--max-ops", type=at_least_one, default=MAX_OPS, metavar="N",
                        help=f"refuse a workload that would tile into more than N ops, "
                             f"before tiling it (default {MAX_OPS:,})")


def command_start(args: argparse.Namespace) -> float:
    """When the command began, as a :func:`time.perf_counter` value: ``args.started``, set
    by :mod:`schedsearch.cli` before the command's libraries were imported (now, for a
    handler called without it). A command's ``--time-limit`` counts from here."""
    started = getattr(args, "started", None)
    return time.perf_counter() if started is None else float(started)


def add_search_options(parser: argparse.ArgumentParser, *, time_limit: float,
                       time_help: str) -> None:
    """``--time-limit S`` (default ``time_limit``), ``--seed N``, ``--workers W`` and
    ``--reproducible`` (stop by the deterministic work budget instead of the clock)."""
    parser.add_argument("--time-limit", type=limit_seconds, default=time_limit,
                        metavar="S", help=f"{time_help} (default {time_limit:g})")
    parser.add_argument("--seed", type=seed_number, default=0, metavar="N",
                        help=f"random seed, 0 to {MAX_SEED} (default 0)")
    parser.add_argument("--workers", type=worker_count, default=2, metavar="W",
                        help="parallel CP-SAT runs, one thread each (default 2)")
    parser.add_argument("--reproducible", action="store_true",
                        help="stop each search by its deterministic work budget, so that the "
                             "same seed and workers give the same schedule (default: search "
                             "until the time limit, or until the bound is reached)")
