"""Which path wins as the fused-kernel compute pressure varies.

Path C pays ``costs.layouts.fused_compute_factor`` on its compute
(:func:`models.layouts.fused_pressure`), a figure no measurement gives: the winner of
an edge may flip with it. :func:`pressure_sweep` solves paths A and B once (they do
not depend on the figure) and path C once per factor, so a reader sees at which factor
the winner changes instead of trusting one guess. Every schedule is verified, as in
:func:`schedsearch.chains.paths.chain_paths`.

The command is ``schedsearch chain sweep`` (:mod:`schedsearch.commands.chain_sweep`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from models.errors import InputError
from models.formats import Target
from models.layouts import layout_costs, with_fused_factor
from models.workload import Workload
from schedsearch.chains.forward import NotForwardable
from schedsearch.chains.paths import (
    DEFAULT_OPTIONS,
    ChainPath,
    ChainResult,
    PathName,
    chain_paths,
    path_c,
)
from schedsearch.paths import SolveOptions

__all__ = ["FACTORS", "SweepPoint", "EdgeSweep", "pressure_sweep"]

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
