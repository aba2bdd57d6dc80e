"""The two layout-crossing figures fitted from measured rows that crossed layouts.

A CSV row whose ``layout`` is ``strided`` (a load or store through a 2-D descriptor
gathering its block into the other layout) or ``scatter`` (a vector kernel writing its
block in the other layout) measures a figure of ``costs.layouts``
(:mod:`models.layouts`), not its engine's plain roofline, so it is kept out of the
engine fits and fitted here, after them, in the model's own form:

- strided: ``duration = latency + bytes / (rate * strided_efficiency)``, with the
  engine's fitted latency and rate for the row's mode (the target's where the engine was
  not fitted): one parameter, ``1 / strided_efficiency``;
- scatter: ``duration = latency + bytes * (passes + scatter_passes) / (rate * units)``,
  with the vector engine's fitted latency and rate and the library's passes for the
  kind: one parameter, ``scatter_passes``.

Both are fitted like the engines (robust, in log ratio, the known part of each duration
as an offset), so the intervals are at the same per-parameter level. These two figures
decide path A against path B of a chain (:mod:`schedsearch.chains.crossover`), and no
bundled target measured them.
"""

from __future__ import annotations

import math

import numpy as np

from models.cost import VECTOR_PASSES, CostModel
from models.formats import Target
from schedsearch.calibrate.engines import EngineFit, model_figures
from schedsearch.calibrate.fit import LinearFit, robust_fit
from schedsearch.calibrate.measurements import SCATTER, STRIDED
from schedsearch.calibrate.report import GroupReport, Parameter, Status
from schedsearch.calibrate.work import Engine, FitRow

__all__ = ["GROUP", "is_crossing", "crossing_count", "crossing_group"]

#: The report group of the crossing figures.
GROUP = "layouts"


def is_crossing(row: FitRow) -> bool:
    return row.factors.get("layout") in (STRIDED, SCATTER)


def _split(rows: list[FitRow]) -> tuple[list[FitRow], list[FitRow]]:
    """(strided transfers, scattering vector kernels) among ``rows``."""
    strided = [r for r in rows if r.factors.get("layout") == STRIDED]
    scatter = [r for r in rows if r.factors.get("layout") == SCATTER]
    return strided, scatter


def crossing_count(rows: list[FitRow]) -> int:
    """How many crossing figures ``rows`` give (for the joint level)."""
    return sum(1 for part in _split(rows) if part)


def _engine(fits: dict[Engine, EngineFit], model: CostModel, engine: Engine,
            key: str) -> tuple[float, float]:
    """The latency and rate the model predicts with: fitted, else the target's."""
    fit = fits.get(engine)
    if fit is not None and key in fit.rates:
        return fit.latency, fit.rates[key]
    latency, rate = model_figures(model, engine, key)
    return latency, float(rate or 1)


def _fit(rows: list[FitRow], offset: list[float], column: list[float],
         level: float) -> LinearFit:
    return robust_fit(np.array(column)[:, None], np.array([r.duration for r in rows]),
                      level, offset=np.array(offset))


def _strided(rows: list[FitRow], fits: dict[Engine, EngineFit], model: CostModel,
             prior: float | None, level: float) -> tuple[Parameter, LinearFit]:
    figures = [_engine(fits, model, r.engine, r.key) for r in rows]
    fit = _fit(rows, [lat for lat, _ in figures], [r.work / rate for r, (_, rate)
                                                   in zip(rows, figures, strict=True)], level)
    inverse, low, high = float(fit.theta[0]), float(fit.low[0]), float(fit.high[0])
    value = 1 / inverse if inverse > 0 else math.inf
    written = (min(1.0, max(round(value, 3), 1e-3))
               if fit.determined and math.isfinite(value) and prior is not None else None)
    return Parameter("costs.layouts.strided_efficiency", value,
                     1 / high if high > 0 else 0.0, 1 / low if low > 0 else math.inf,
                     written, prior, len(rows)), fit


def _scatter(rows: list[FitRow], fits: dict[Engine, EngineFit], model: CostModel,
             prior: float | None, level: float) -> tuple[Parameter, LinearFit]:
    figures = [_engine(fits, model, Engine.VECTOR, r.key) for r in rows]
    offset = [lat + r.work / rate for r, (lat, rate) in zip(rows, figures, strict=True)]
    per_pass = [r.work / VECTOR_PASSES[r.kind] / rate
                for r, (_, rate) in zip(rows, figures, strict=True)]
    fit = _fit(rows, offset, per_pass, level)
    value = float(fit.theta[0])
    written = float(max(0, round(value))) if fit.determined and prior is not None else None
    return Parameter("costs.layouts.scatter_passes", value, max(0.0, float(fit.low[0])),
                     float(fit.high[0]), written, prior, len(rows)), fit


def crossing_group(rows: list[FitRow], fits: dict[Engine, EngineFit], target: Target,
                   model: CostModel, level: float) -> GroupReport | None:
    """The crossing figures of ``rows`` (None when no row crossed layouts). A figure is
    written only into a target that states ``costs.layouts``: the section has four
    figures, and one fitted cannot stand for the other three."""
    strided, scatter = _split(rows)
    if not strided and not scatter:
        return None
    stated = target.costs.get("layouts")
    layouts = stated if isinstance(stated, dict) else {}
    found = []
    if strided:
        found.append(_strided(strided, fits, model, layouts.get("strided_efficiency"),
                              level))
    if scatter:
        found.append(_scatter(scatter, fits, model, layouts.get("scatter_passes"), level))
    determined = all(fit.determined for _, fit in found)
    sigma = max(fit.sigma for _, fit in found)
    return GroupReport(GROUP, len(strided) + len(scatter), 100 * math.expm1(sigma),
                       Status.FITTED if determined else Status.UNDERDETERMINED,
                       [parameter for parameter, _ in found])
