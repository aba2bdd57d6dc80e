"""The limit of a command that runs several solves (``compare``, ``chain``, ``whatif``):
``--time-limit`` is the budget of the whole command, counted from its start and allotted
to its solves (:mod:`schedsearch.allotment`)."""

from __future__ import annotations

import argparse

from schedsearch.allotment import Allotment
from schedsearch.commands.options import command_start
from schedsearch.paths import SolveOptions

__all__ = ["study_options"]


def study_options(args: argparse.Namespace) -> SolveOptions:
    """``--seed``, ``--workers``, ``--reproducible``, and ``--time-limit`` as one
    allotment started when the command began."""
    allotment = Allotment.start(args.time_limit, reproducible=args.reproducible,
                                begin=command_start(args))
    return SolveOptions(time_limit=args.time_limit, seed=args.seed, workers=args.workers,
                        reproducible=args.reproducible, allotment=allotment)
