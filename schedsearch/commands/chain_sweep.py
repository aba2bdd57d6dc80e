"""``schedsearch chain sweep [EXAMPLE ...]``: which path wins as the fused compute factor
varies.

A thin layer over :func:`schedsearch.chains.sweep.pressure_sweep`: paths A and B solved
once per edge, path C once per factor (``--factors``), each schedule verified; one line
per factor, and the figures to ``--json``. Without examples, every bundled chain example
(``chain-*``, ``rmsnorm-gemm-chain-v75``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from models.formats import Target
from models.workload import Workload
from schedsearch.chains.paths import PathName
from schedsearch.chains.sweep import DEFAULT_OPTIONS, FACTORS, EdgeSweep, pressure_sweep
from schedsearch.commands.chain_study import number_list, run_per_example, study_parser


def register(subparsers: Any) -> None:
    parser = study_parser(
        subparsers, "sweep", time_limit=DEFAULT_OPTIONS.time_limit,
        help="paths A/B/C as the fused compute factor goes from 1.0 to 1.3",
        description="Paths A/B/C of every edge again as the fused compute factor varies: "
                    "where the winner changes.")
    parser.add_argument("--factors",
                        type=number_list(float, lambda f: 1 <= f < float("inf"),
                                         "a finite number >= 1"), default=FACTORS,
                        help="comma-separated fused compute factors (each >= 1; default "
                             + ",".join(f"{f:g}" for f in FACTORS) + ")")
    parser.set_defaults(handler=run)


def _print(name: str, sweeps: Sequence[EdgeSweep]) -> None:
    for sweep in sweeps:
        r = sweep.result
        a, b = r.path(PathName.A), r.path(PathName.B)
        assert a is not None and b is not None
        legal = all(p.result.legal for p in r.paths) and all(
            p.c is None or p.c.result.legal for p in sweep.points)
        print(f"{name}: {r.edge.label}  A {a.result.makespan:,} ({a.variant})  "
              f"B {b.result.makespan:,} ({b.variant})  ceiling from A {r.ceiling:.3f}x  "
              f"{'legal' if legal else 'ILLEGAL'}")
        for p in sweep.points:
            c = "none" if p.c is None else f"{p.c.result.makespan:,}"
            mark = "  (the target's figure)" if p.factor == sweep.stated else ""
            print(f"  factor {p.factor:<5g} C {c:>12}  winner {p.winner.value}{mark}")


def run(args: argparse.Namespace) -> int:
    options = replace(DEFAULT_OPTIONS, time_limit=args.time_limit)

    def study(name: str, workload: Workload, target: Target) -> list[dict[str, Any]]:
        sweeps = pressure_sweep(workload, target, args.factors, options=options)
        _print(name, sweeps)
        return [s.as_dict() for s in sweeps]

    return run_per_example(args, study)
