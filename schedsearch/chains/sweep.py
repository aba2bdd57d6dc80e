"""Which path wins as the fused-kernel compute pressure varies.

Path C pays ``costs.layouts.fused_compute_factor`` on its compute
(:func:`models.layouts.fused_pressure`), a figure no measurement gives: the winner of
an edge may flip with it. :func:`pressure_sweep` solves paths A and B once (they do
not depend on the figure) and path C once per factor, so a reader sees at which factor
the winner changes instead of trusting one guess. Every schedule is verified, as in
:func:`schedsearch.chains.paths.chain_paths`.

    python -m schedsearch.chains.sweep [EXAMPLE ...] [--factors 1,1.05,1.1,1.15,1.2,1.3]
                                       [--time-limit 2] [--json PATH]

Without examples, every bundled chain example (``chain-*``, ``rmsnorm-gemm-chain-v75``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from models.errors import InputError
from models.formats import Target
from models.layouts import layout_costs, with_fused_factor
from models.workload import Workload
from schedsearch.chains.command import number_list, run_per_example
from schedsearch.chains.forward import NotForwardable
from schedsearch.chains.paths import (
    DEFAULT_OPTIONS,
    ChainPath,
    ChainResult,
    PathName,
    chain_paths,
    path_c,
)
from schedsearch.commands.options import add_target_option, limit_seconds
from schedsearch.output import output_file_only
from schedsearch.paths import SolveOptions

__all__ = ["FACTORS", "SweepPoint", "EdgeSweep", "pressure_sweep", "main"]

#: The factors a sweep tries by default: no pressure up to 30% slower compute.
FACTORS = (1.0, 1.05, 1.1, 1.15, 1.2, 1.3)


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """Path C solved with one factor (``c`` None: C cannot be built) and the winner."""

    factor: float
    c: ChainPath | None
    winner: PathName

    def as_dict(self) -> dict[str, Any]:
        return {"factor": self.factor, "winner": self.winner.value,
                "C": None if self.c is None else self.c.result.makespan,
                "legal": self.c is None or self.c.result.legal}


@dataclass(frozen=True, slots=True)
class EdgeSweep:
    """One edge: its paths at the target's own figure, and C at every factor swept."""

    result: ChainResult
    stated: float
    points: tuple[SweepPoint, ...]

    def as_dict(self) -> dict[str, Any]:
        paths = {p.path.value: p.result.makespan for p in self.result.paths}
        b = self.result.path(PathName.B)
        return {"edge": self.result.edge.label, "A": paths["A"], "B": paths["B"],
                "B_variant": None if b is None else b.variant, "stated_factor": self.stated,
                "removable_share": self.result.removable_share,
                "ceiling": self.result.ceiling,
                "points": [p.as_dict() for p in self.points]}


def _winner(result: ChainResult, c: ChainPath | None) -> PathName:
    """The fastest of A, B and ``c`` (ties as :attr:`ChainResult.best`: by letter)."""
    paths = [p for p in result.paths if p.path is not PathName.C]
    paths += [c] if c is not None else []
    return min(paths, key=lambda p: (p.result.makespan, p.path.value)).path


def pressure_sweep(workload: Workload, target: Target, factors: Sequence[float] = FACTORS,
                   *, options: SolveOptions = DEFAULT_OPTIONS) -> tuple[EdgeSweep, ...]:
    """Every edge of ``workload`` (as :func:`chain_paths`), path C at each of
    ``factors`` (module docstring). C at the target's own factor is reused, not solved
    twice."""
    stated = layout_costs(target).fused_compute_factor
    sweeps = []
    for result in chain_paths(workload, target, options=options):
        points = []
        for factor in factors:
            c = result.path(PathName.C) if factor == stated else None
            if c is None and not result.c_note:
                try:
                    c = path_c(workload, result.edge, with_fused_factor(target, factor),
                               options)
                except (NotForwardable, InputError):
                    c = None
            points.append(SweepPoint(factor, c, _winner(result, c)))
        sweeps.append(EdgeSweep(result, stated, tuple(points)))
    return tuple(sweeps)


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


def main(argv: list[str] | None = None) -> int:
    """The command: exit 0, 2 on bad input (one line naming the file, path and rule, as
    ``schedsearch`` does), 130 when interrupted."""
    parser = argparse.ArgumentParser(prog="python -m schedsearch.chains.sweep",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", help="bundled examples or workload files")
    parser.add_argument("--factors",
                        type=number_list(float, lambda f: 1 <= f < float("inf"),
                                         "a finite number >= 1"), default=FACTORS,
                        help="comma-separated fused compute factors (each >= 1; default "
                             + ",".join(f"{f:g}" for f in FACTORS) + ")")
    parser.add_argument("--time-limit", type=limit_seconds,
                        default=DEFAULT_OPTIONS.time_limit,
                        help="seconds per solve (default 2)")
    add_target_option(parser, "each workload's")
    parser.add_argument("--json", type=output_file_only, help="write the figures to this file")
    args = parser.parse_args(argv)
    options = replace(DEFAULT_OPTIONS, time_limit=args.time_limit)

    def study(name: str, workload: Workload, target: Target) -> list[dict[str, Any]]:
        sweeps = pressure_sweep(workload, target, args.factors, options=options)
        _print(name, sweeps)
        return [s.as_dict() for s in sweeps]

    return run_per_example(parser, args, study)


if __name__ == "__main__":
    sys.exit(main())
