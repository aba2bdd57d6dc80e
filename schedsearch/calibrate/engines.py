"""One engine's roofline fitted to its rows: parameters, residual patterns, outliers.

An engine's rows share one start-up latency and have one inverse rate per rate key
(:mod:`schedsearch.calibrate.work`), so the design matrix is ``[1, work * [key == k]...]``
and ``theta = (latency, 1 / rate_k ...)``. Rows of one work per rate key (one kernel
shape) cannot separate the latency from the rate: the target's latency is then the
anchor (held), and the rates are fitted with it. A rate's interval is its inverse rate's
interval inverted (exact for a monotone map; an inverse rate whose interval reaches 0 has
no upper rate bound).

The residual pattern test: the residuals are grouped by each factor of the rows (a shape
extent, the units, the dtype, the layout, the vector kind); numeric factors with many
values go into quartile bins. A one-way ANOVA whose p-value is below
``PATTERN_ALPHA / factors`` and whose level means spread by more than
``PATTERN_PERCENT`` says the roofline misses a dependence: the engine is a poor fit, and
the pattern is reported rather than averaged into one error figure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import linalg, special

from models.cost import VECTOR_PASSES, CostModel
from schedsearch.calibrate.fit import LinearFit, robust_fit
from schedsearch.calibrate.report import (
    LevelResidual,
    Outlier,
    Parameter,
    Pattern,
    Status,
)
from schedsearch.calibrate.work import Engine, FitRow

__all__ = ["EngineFit", "fit_engine", "model_figures", "passes_parameters", "parameter_count",
           "PATTERN_ALPHA", "PATTERN_PERCENT"]

PATTERN_ALPHA = 1e-3
#: Level means must differ by at least this much (percent) to count as a pattern.
PATTERN_PERCENT = 3.0
_MAX_LEVELS = 6


@dataclass(frozen=True, slots=True)
class EngineFit:
    """An engine's fit. ``latency`` and ``rates`` are what the model predicts with (the
    written figures where written, else the fitted ones); ``unseparated`` names the
    parameters the rows could not tell apart (empty when they could)."""

    engine: Engine
    keys: tuple[str, ...]
    fit: LinearFit
    latency: float
    rates: dict[str, float]
    status: Status
    parameters: list[Parameter]
    patterns: list[Pattern]
    outliers: list[Outlier]
    unseparated: list[str]


def parameter_count(rows: list[FitRow]) -> int:
    """How many parameters with intervals the engines' fits will report for ``rows``."""
    count = 0
    for engine in Engine:
        mine = [r for r in rows if r.engine is engine]
        if mine:
            count += 1 + len({r.key for r in mine})
    return count + len(_passes_columns([r for r in rows if r.engine is Engine.VECTOR]))


def _passes_columns(rows: list[FitRow]) -> list[tuple[str, str]]:
    """The (rate key, kind) pairs that get a passes estimate: kinds the library has
    passes for, under rate keys measured with at least two of them."""
    pairs = {(row.key, row.kind) for row in rows if row.kind in VECTOR_PASSES}
    keys = [key for key, _ in pairs]
    return sorted(pair for pair in pairs if keys.count(pair[0]) > 1)


def _design(rows: list[FitRow], columns: Sequence[object],
            column_of: Callable[[FitRow], object]) -> np.ndarray:
    """``[1, work * [column_of(row) == c] for c in columns]`` per row."""
    X = np.zeros((len(rows), 1 + len(columns)))
    X[:, 0] = 1
    index = {column: i for i, column in enumerate(columns, start=1)}
    for i, row in enumerate(rows):
        X[i, index[column_of(row)]] = row.work
    return X


def _rate_name(engine: Engine, key: str) -> str:
    rate = {Engine.MATRIX: "macs_per_ns", Engine.VECTOR: "bytes_per_ns"}.get(engine)
    if rate is None:
        return f"costs.{engine.value}.bytes_per_ns[{key}]"
    return f"costs.{engine.value}.{rate}" if not key else \
        f"costs.{engine.value}.dtypes.{key}.{rate}"


def model_figures(model: CostModel, engine: Engine, key: str) -> tuple[float, float | None]:
    """The input target's latency and rate for ``key`` (None: the target has no rate)."""
    if engine is Engine.MATRIX:
        found = model.matrix.rate(key) if key else None
        return model.matrix.latency_ns, (found.macs_per_ns if found else
                                         None if key else model.matrix.macs_per_ns)
    if engine is Engine.VECTOR:
        return model.vector.latency_ns, (model.vector.rate(key) if key
                                         else model.vector.bytes_per_ns)
    transfer = model.load if engine is Engine.LOAD else model.store
    return transfer.latency_ns, float(transfer.rates[int(key)])


def _writable(model: CostModel, engine: Engine, key: str) -> bool:
    """Whether the target has a place for this rate (a dtype it lists, a mode it has)."""
    if engine in (Engine.LOAD, Engine.STORE) or not key:
        return True
    table = model.matrix.dtypes if engine is Engine.MATRIX else model.vector.dtypes
    return table is not None and key in table


def _written_rate(engine: Engine, rate: float) -> float:
    """Transfer rates are integer budget draws; engine rates keep three decimals."""
    if engine in (Engine.LOAD, Engine.STORE):
        return float(max(1, round(rate)))
    return max(round(rate, 3), 1e-3)


def _inverse(low: float, high: float) -> tuple[float, float]:
    return (1 / high if high > 0 else 0.0), (1 / low if low > 0 else math.inf)


def _levels(values: list[int | str]) -> list[str]:
    """Each value's level label: itself, or its quartile bin when numeric and many."""
    distinct = sorted(set(values), key=str)
    if len(distinct) <= _MAX_LEVELS or not all(isinstance(v, int) for v in values):
        return [str(v) for v in values]
    edges = np.unique(np.quantile(np.array(values, dtype=float), [0.25, 0.5, 0.75]))
    bins = np.searchsorted(edges, np.array(values, dtype=float), side="right")
    bounds = [-math.inf, *edges, math.inf]
    return [f"{bounds[b]:g}..{bounds[b + 1]:g}" for b in bins]


def _anova(samples: list[list[float]]) -> float | None:
    """The p-value of a one-way ANOVA F test (what ``scipy.stats.f_oneway`` computes,
    without its per-call overhead, which dominated a calibration); None if the residuals
    within every level are all equal (no noise to compare with)."""
    values = np.concatenate(samples)
    within = sum(float(np.sum((np.asarray(s) - np.mean(s)) ** 2)) for s in samples)
    between = sum(len(s) * (float(np.mean(s)) - float(np.mean(values))) ** 2 for s in samples)
    k, n = len(samples), len(values)
    if within <= 0:
        return None
    return float(special.fdtrc(k - 1, n - k, between / (k - 1) / (within / (n - k))))


def _patterns(rows: list[FitRow], residuals: np.ndarray, keep: np.ndarray) -> list[Pattern]:
    factors = sorted({name for row in rows for name in row.factors})
    tests = []
    for factor in factors:
        picked = [i for i in np.flatnonzero(keep) if factor in rows[i].factors]
        labels = _levels([rows[i].factors[factor] for i in picked])
        groups: dict[str, list[float]] = {}
        for i, label in zip(picked, labels, strict=True):
            groups.setdefault(label, []).append(float(residuals[i]))
        groups = {label: values for label, values in groups.items() if len(values) >= 2}
        if len(groups) < 2:
            continue
        means = [float(np.mean(values)) for values in groups.values()]
        p_value = _anova(list(groups.values()))
        if p_value is not None:
            tests.append((factor, p_value, max(means) - min(means), groups))
    found = []
    for factor, p_value, spread, groups in tests:
        if p_value < PATTERN_ALPHA / len(tests) and 100 * math.expm1(spread) >= PATTERN_PERCENT:
            levels = [LevelResidual(label, len(values), 100 * math.expm1(float(np.mean(values))))
                      for label, values in sorted(groups.items(), key=lambda kv: _order(kv[0]))]
            found.append(Pattern(factor, p_value, levels))
    return found


def _order(label: str) -> tuple[float, str]:
    head = label.split("..")[0]
    try:
        return float(head), label
    except ValueError:
        return math.inf, label


def _latency_held(X: np.ndarray, y: np.ndarray, latency: float, level: float) -> LinearFit:
    """The fit of the rates alone with the latency held at ``latency`` (a known part of
    every duration), in the layout of a full fit: ``theta[0]`` is the held latency, with
    no interval of its own."""
    rates = robust_fit(X[:, 1:], y, level, offset=np.full(len(y), latency))
    return LinearFit(theta=np.r_[latency, rates.theta], low=np.r_[latency, rates.low],
                     high=np.r_[latency, rates.high], level=level,
                     residuals=rates.residuals, sigma=rates.sigma, rank=rates.rank + 1)


def _unseparated(X: np.ndarray, names: list[str]) -> list[str]:
    """The parameters the rows cannot tell apart: those that move along a null direction
    of the design (one kernel shape: the latency and that shape's rate trade off)."""
    scaled = X / np.maximum(X.max(axis=0), 1e-300)
    null = linalg.null_space(scaled)
    return [name for name, weights in zip(names, null, strict=True)
            if np.any(np.abs(weights) > 1e-9)]


def fit_engine(engine: Engine, rows: list[FitRow], model: CostModel, level: float) -> EngineFit:
    """Fit one engine's latency and rate(s) to its rows and test the residuals.

    Rows that cannot separate the latency from the rates (every row of a rate the same
    work: one profiled kernel shape, the common case) are anchored to the target: the
    latency is held at the target's figure and the rates are fitted with it, so the
    measured shapes are predicted as measured (status ``anchored``; the report names the
    parameters the rows could not separate). Only when the target's latency is not
    shorter than every measured duration (a rate would need negative time) is nothing
    written."""
    keys = tuple(sorted({row.key for row in rows}))
    X = _design(rows, keys, lambda row: row.key)
    y = np.array([r.duration for r in rows])
    prior_latency = model_figures(model, engine, keys[0])[0]
    latency_name = f"costs.{engine.value}.latency_ns"
    fit = robust_fit(X, y, level)
    unseparated: list[str] = []
    status = Status.FITTED
    if not fit.determined:
        unseparated = _unseparated(X, [latency_name, *(_rate_name(engine, k) for k in keys)])
        if float(y.min()) > prior_latency:  # else a rate would need negative time
            held = _latency_held(X, y, float(prior_latency), level)
            if held.determined:
                fit, status = held, Status.ANCHORED
        if status is not Status.ANCHORED:
            status = Status.UNDERDETERMINED
    written = status is not Status.UNDERDETERMINED
    anchored = status is Status.ANCHORED
    latency = float(max(1, round(fit.theta[0]))) if status is Status.FITTED \
        else float(prior_latency)
    parameters = [Parameter(latency_name, float(fit.theta[0]),
                            None if anchored else float(fit.low[0]),
                            None if anchored else float(fit.high[0]),
                            latency if status is Status.FITTED else None,
                            float(prior_latency), len(rows), held=anchored)]
    rates = {}
    for i, key in enumerate(keys, start=1):
        count = sum(row.key == key for row in rows)
        prior = model_figures(model, engine, key)[1]
        fitted = 1 / fit.theta[i] if fit.theta[i] > 0 else math.inf
        low, high = _inverse(float(fit.low[i]), float(fit.high[i]))
        ok = written and _writable(model, engine, key) and math.isfinite(fitted)
        rates[key] = _written_rate(engine, fitted) if ok else (
            fitted if written and math.isfinite(fitted) else prior or fitted)
        parameters.append(Parameter(_rate_name(engine, key), fitted, low, high,
                                    rates[key] if ok else None, prior, count))
    outliers_at = fit.outliers()
    keep = np.ones(len(rows), dtype=bool)
    keep[outliers_at] = False
    patterns = _patterns(rows, fit.residuals, keep) if written else []
    if patterns:
        status = Status.POOR_FIT
    outliers = [Outlier(rows[i].origin, rows[i].kind, rows[i].duration,
                        latency + rows[i].work / rates[rows[i].key],
                        float(fit.residuals[i] / fit.sigma))
                for i in outliers_at] if fit.sigma > 0 else []
    return EngineFit(engine, keys, fit, latency, rates, status, parameters, patterns,
                     outliers, unseparated)


def passes_parameters(rows: list[FitRow], shared: EngineFit, level: float
                      ) -> tuple[list[Parameter], list[str]]:
    """Vector passes per kind, relative to the engine's fitted rate: each kind gets its
    own inverse rate, and ``passes = library passes * own / shared``. The interval adds
    both relative half-widths (conservative when the two estimates are correlated, as
    they are: they come from the same rows). Only for rate keys (dtypes) measured with
    several kinds: one kind alone is its own reference. Also the names of the passes
    the rows cannot separate from the latency (one shape of that kind): not estimated."""
    wanted = _passes_columns(rows)
    if not wanted:
        return [], []
    kinds = tuple(sorted({(row.key, row.kind) for row in rows}))
    X = _design(rows, kinds, lambda row: (row.key, row.kind))
    fit = robust_fit(X, np.array([r.duration for r in rows]), level)
    names = ["latency", *(f"passes.{kind}" + (f"[{key}]" if key else "")
                          for key, kind in kinds)]
    unseparated = [] if fit.determined else _unseparated(X, names)
    shared_theta = dict(zip(shared.keys, shared.fit.theta[1:], strict=True))
    shared_half = dict(zip(shared.keys, (shared.fit.high[1:] - shared.fit.low[1:]) / 2,
                           strict=True))
    found = []
    for i, (key, kind) in enumerate(kinds, start=1):
        base = shared_theta[key]
        own = fit.theta[i]
        name = names[i]
        if (key, kind) not in wanted or base <= 0 or own <= 0 or name in unseparated:
            continue
        passes = VECTOR_PASSES[kind] * own / base
        relative = math.hypot((fit.high[i] - fit.low[i]) / 2 / own, shared_half[key] / base)
        found.append(Parameter(name, passes, passes * (1 - relative), passes * (1 + relative),
                               None, float(VECTOR_PASSES[kind]),
                               sum(row.kind == kind and row.key == key for row in rows)))
    return found, [name for name in unseparated if name in
                   {names[i] for i, pair in enumerate(kinds, start=1) if pair in wanted}]
