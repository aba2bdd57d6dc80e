"""Where path A would win: the winner of each edge across the two layout-crossing figures.

Path A crosses layouts in a task of its own, so it pays one more launch and the
intermediate's DDR round trip. B crosses inside a kernel: the GEMM's loads of a
row-major tensor keep ``costs.layouts.strided_efficiency`` of their rate, or the
producer pays ``scatter_passes`` more vector passes per element to write tiles. Both
figures are assumptions (no bundled target measured them), and they decide A against
B: A wins only where crossing inside a kernel costs more, both ways, than a conversion
task. :func:`crossover` solves every path of every edge at each point of a grid of the
two figures and names the winner, so a reader sees how expensive crossing must be
before A wins, and what to measure to decide it. Every schedule is verified, as in
:func:`schedsearch.chains.paths.chain_paths`.

The figures stay consistent at every point: a standalone vector conversion does the
producer's scatter work and also reads its input, so ``relayout_passes`` is at least
``scatter_passes + 1`` (the target's own figure where larger); the other figures are
as the target states them. Without that, a grid point with 64 scatter passes beside a
2-pass conversion would let A win by a conversion cheaper than the work it does.

The command is ``schedsearch chain crossover`` (:mod:`schedsearch.commands.chain_crossover`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from models.formats import Target
from models.layouts import layout_costs, with_layout_figures
from models.workload import Workload
from schedsearch.chains.paths import ChainResult, Edge, PathName, chain_paths
from schedsearch.paths import SolveOptions

__all__ = ["EFFICIENCIES", "SCATTER_PASSES", "DEFAULT_OPTIONS", "CrossoverPoint",
           "EdgeCrossover", "crossover"]

#: The strided efficiencies a grid tries by default: the bundled guess down to a tenth.
EFFICIENCIES = (0.5, 0.25, 0.1)
#: The scatter passes a grid tries by default: the bundled guess up to 64.
SCATTER_PASSES = (1, 4, 16, 64)
#: Many points, several solves each: shorter solves than ``chain``'s.
DEFAULT_OPTIONS = SolveOptions(time_limit=1.0)


@dataclass(frozen=True, slots=True)
class CrossoverPoint:
    """One edge's paths solved with one pair of figures."""

    strided_efficiency: float
    scatter_passes: int
    result: ChainResult

    @property
    def winner(self) -> PathName:
        return self.result.best.path

    def makespan(self, name: PathName) -> int | None:
        path = self.result.path(name)
        return None if path is None else path.result.makespan

    def as_dict(self) -> dict[str, Any]:
        b = self.result.path(PathName.B)
        return {"strided_efficiency": self.strided_efficiency,
                "scatter_passes": self.scatter_passes,
                **{name.value: self.makespan(name) for name in PathName},
                "B_variant": None if b is None else b.variant,
                "winner": self.winner.value,
                "legal": all(p.result.legal for p in self.result.paths)}


@dataclass(frozen=True, slots=True)
class EdgeCrossover:
    """One edge over the whole grid; ``stated`` is the target's own pair of figures."""

    edge: Edge
    stated: tuple[float, int]
    points: tuple[CrossoverPoint, ...]

    @property
    def a_wins(self) -> tuple[CrossoverPoint, ...]:
        return tuple(p for p in self.points if p.winner is PathName.A)

    def as_dict(self) -> dict[str, Any]:
        return {"edge": self.edge.label,
                "stated": {"strided_efficiency": self.stated[0],
                           "scatter_passes": self.stated[1]},
                "points": [p.as_dict() for p in self.points],
                "a_wins": len(self.a_wins)}


def crossover(workload: Workload, target: Target,
              efficiencies: Sequence[float] = EFFICIENCIES,
              scatter_passes: Sequence[int] = SCATTER_PASSES, *,
              options: SolveOptions = DEFAULT_OPTIONS) -> tuple[EdgeCrossover, ...]:
    """Every edge of ``workload`` (as :func:`chain_paths`) at every pair of figures,
    efficiencies as the outer loop (module docstring)."""
    costs = layout_costs(target)
    grid = [(e, p) for e in efficiencies for p in scatter_passes]
    solved = [chain_paths(workload, with_layout_figures(
                  target, strided_efficiency=e, scatter_passes=p,
                  relayout_passes=max(costs.relayout_passes, p + 1)), options=options)
              for e, p in grid]
    return tuple(
        EdgeCrossover(results[0].edge, (costs.strided_efficiency, costs.scatter_passes),
                      tuple(CrossoverPoint(e, p, r)
                            for (e, p), r in zip(grid, results, strict=True)))
        for results in zip(*solved, strict=True))
