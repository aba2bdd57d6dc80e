"""``schedsearch chain crossover [EXAMPLE ...]``: where path A would win, over a grid of the
two layout-crossing figures.

A thin layer over :func:`schedsearch.chains.crossover.crossover`: every path of every
edge solved at each point of the grid (``--efficiencies`` x ``--scatter-passes``), each
schedule verified; one line per efficiency, and the figures to ``--json``. Without
examples, every bundled chain example.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from models.formats import Target
from models.workload import Workload
from schedsearch.chains.crossover import (
    DEFAULT_OPTIONS,
    EFFICIENCIES,
    SCATTER_PASSES,
    EdgeCrossover,
    crossover,
)
from schedsearch.chains.paths import PathName
from schedsearch.commands.chain_study import number_list, run_per_example, study_parser
from schedsearch.wording import counted


def register(subparsers: Any) -> None:
    parser = study_parser(
        subparsers, "crossover", time_limit=DEFAULT_OPTIONS.time_limit,
        help="paths A/B/C over a grid of the two layout-crossing figures",
        description="Paths A/B/C of every edge over a grid of the two layout-crossing "
                    "figures: how dear crossing must be before path A wins.")
    parser.add_argument("--efficiencies", default=EFFICIENCIES,
                        type=number_list(float, lambda v: 0 < v <= 1, "in (0, 1]"),
                        help="comma-separated strided efficiencies (default "
                             + ",".join(f"{v:g}" for v in EFFICIENCIES) + ")")
    parser.add_argument("--scatter-passes", default=SCATTER_PASSES,
                        type=number_list(int, lambda v: 0 <= v <= 1_000_000,
                                         "an integer from 0 to 1,000,000"),
                        help="comma-separated scatter passes (default "
                             + ",".join(str(v) for v in SCATTER_PASSES) + ")")
    parser.set_defaults(handler=run)


def _print(name: str, edges: Sequence[EdgeCrossover]) -> None:
    for edge in edges:
        passes = sorted({p.scatter_passes for p in edge.points})
        legal = all(p.as_dict()["legal"] for p in edge.points)
        print(f"{name}: {edge.edge.label}  winner, A / B / C makespans "
              f"(the target's figures: efficiency {edge.stated[0]:g}, "
              f"{edge.stated[1]} scatter passes)  {'legal' if legal else 'ILLEGAL'}")
        for efficiency in sorted({p.strided_efficiency for p in edge.points}, reverse=True):
            row = {p.scatter_passes: p for p in edge.points
                   if p.strided_efficiency == efficiency}
            cells = []
            for n in passes:
                point = row[n]
                times = " / ".join("-" if (m := point.makespan(k)) is None else f"{m:,}"
                                   for k in PathName)
                cells.append(f"{counted(n, 'pass')}: {point.winner.value} ({times})")
            print(f"  efficiency {efficiency:<5g} " + "; ".join(cells))
        wins = edge.a_wins
        print("  A wins nowhere on this grid" if not wins else
              "  A wins at " + ", ".join(f"(efficiency {p.strided_efficiency:g}, "
                                         f"{counted(p.scatter_passes, 'pass')})" for p in wins))


def run(args: argparse.Namespace) -> int:
    options = replace(DEFAULT_OPTIONS, time_limit=args.time_limit)

    def study(name: str, workload: Workload, target: Target) -> list[dict[str, Any]]:
        edges = crossover(workload, target, args.efficiencies, args.scatter_passes,
                          options=options)
        _print(name, edges)
        return [e.as_dict() for e in edges]

    return run_per_example(args, study)
