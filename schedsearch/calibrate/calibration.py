"""Calibrate a target: fit every engine to the measurements, the bus to the overlaps,
score the result on held-out rows, and write the figures back as an ``npu-target/1``.

Rows come from CSV measurements and from traced runs of a schedule. A traced transfer
that overlapped another transfer shared the bus, so it measures the bus, not its engine:
it goes to the DDR fit (:mod:`schedsearch.calibrate.ddr`), every other traced op to its
engine's fit like a CSV row. A CSV row that crossed layouts (``strided``, ``scatter``)
measures a ``costs.layouts`` figure instead, fitted after the engines
(:mod:`schedsearch.calibrate.crossing`). Held-out rows are drawn per op kind
(``holdout`` of each, seeded), never used in the fit, and only they are scored.

Every interval in the report is at one per-parameter level chosen so that all of them
hold at once with probability ``joint_level`` (Bonferroni over the parameters reported).
"""

from __future__ import annotations

import copy
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.cost import CostModel, cost_model
from models.formats import Target, target_from_dict, target_to_dict
from schedsearch.calibrate.crossing import crossing_count, crossing_group, is_crossing
from schedsearch.calibrate.ddr import TransferSlice, fit_ddr, overlapping
from schedsearch.calibrate.engines import (
    EngineFit,
    fit_engine,
    model_figures,
    parameter_count,
    passes_parameters,
)
from schedsearch.calibrate.fit import simultaneous_level
from schedsearch.calibrate.measurements import MeasuredRun, Measurement
from schedsearch.calibrate.report import (
    CalibrationReport,
    DdrReport,
    GroupReport,
    KindError,
    Parameter,
)
from schedsearch.calibrate.work import Engine, FitRow, measurement_row, run_rows

__all__ = ["Calibration", "calibrate", "set_figure", "JOINT_LEVEL", "FIT_METHOD"]

#: The probability that every reported interval holds at once.
JOINT_LEVEL = 0.99
FIT_METHOD = ("robust least squares (SciPy least_squares, soft_l1 loss) of log(modelled/"
              "measured); sandwich-covariance t-intervals per engine, a profile interval "
              "for the bus; Bonferroni-joint")


@dataclass(frozen=True, slots=True)
class Calibration:
    """The report and the calibrated target document (plain JSON data)."""

    report: CalibrationReport
    target: dict[str, Any]


def _split(rows: list[FitRow], holdout: float, seed: int) -> tuple[list[FitRow], list[FitRow]]:
    """(fitted, held out): ``round(holdout * n)`` of each kind's rows, keeping >= 3 fitted."""
    if holdout <= 0:
        return rows, []
    rng = np.random.default_rng(seed)
    by_kind: dict[str, list[FitRow]] = defaultdict(list)
    for row in rows:
        by_kind[row.kind].append(row)
    fitted, held = [], []
    for kind in sorted(by_kind):
        mine = by_kind[kind]
        order = rng.permutation(len(mine))
        count = min(round(holdout * len(mine)), max(0, len(mine) - 3))
        held += [mine[i] for i in order[:count]]
        fitted += [mine[i] for i in order[count:]]
    return fitted, held


def _errors(model: CostModel, rows: list[FitRow]) -> list[KindError]:
    """Each kind's errors of ``model`` (the calibrated target, figures as written) on
    ``rows``: a rate the fit never saw (every row of a dtype held out) is the target's."""
    by_kind: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for row in rows:
        latency, rate = model_figures(model, row.engine, row.key)
        if rate is None:
            continue
        predicted = latency + row.work / rate
        by_kind[row.kind].append((100 * abs(predicted - row.duration) / row.duration,
                                  row.origin))
    errors = []
    for kind in sorted(by_kind):
        found = by_kind[kind]
        worst, origin = max(found)
        errors.append(KindError(kind, len(found), float(np.mean([e for e, _ in found])),
                                worst, origin))
    return errors


def set_figure(document: dict[str, Any], name: str, value: float) -> None:
    """Set ``costs.load.bytes_per_ns[0]`` or ``costs.matrix.dtypes.i8.macs_per_ns`` etc."""
    *parents, last = name.split(".")
    node = document
    for key in parents:
        node = node.setdefault(key, {})
    match = re.fullmatch(r"(\w+)\[(\d+)\]", last)
    integer = (last.startswith("latency_ns") or last.endswith("_passes") or match is not None
               or parents[0] == "budgets")
    number: float | int = int(value) if integer else float(value)
    if match:
        node[match.group(1)][int(match.group(2))] = number
    else:
        node[last] = number


def _source_text(p: Parameter, files: str, level: float) -> str:
    high = "inf" if p.high is None or not math.isfinite(p.high) else f"{p.high:.4g}"
    return (f"calibrated: {p.value:.4g} from {p.rows} measured rows of {files} by "
            f"`schedsearch calibrate` ({FIT_METHOD}); {level:.0%} simultaneous interval "
            f"[{p.low:.4g}, {high}]")


def _document(target: Target, name: str, parameters: list[Parameter], sources: list[str],
              joint_level: float) -> dict[str, Any]:
    document = copy.deepcopy(target_to_dict(target))
    document["name"] = name
    meta = document.setdefault("meta", {})
    if not isinstance(meta.get("sources"), dict):
        meta["sources"] = {}
    notes = meta["sources"]
    files = ", ".join(sources)
    for p in parameters:
        if p.written is not None:
            set_figure(document, p.name, p.written)
            notes[p.name] = _source_text(p, files, joint_level)
    meta["calibration"] = {"from": target.name, "measurements": sources, "fit": FIT_METHOD}
    return document


def _ddr(bus_rows: list[tuple[MeasuredRun, dict[str, FitRow]]],
         fits: dict[Engine, EngineFit], model: CostModel, prior: float,
         level: float) -> DdrReport | None:
    """The bus fit over every run's overlapping transfers, with their engines' fitted
    latency and rates (the input target's where an engine was not fitted). Runs are laid
    one after another on one clock, so transfers of different runs never overlap."""
    slices = []
    offset = 0.0
    for run, rows in bus_rows:
        shift = offset - run.origin
        for name, row in rows.items():
            fitted = fits.get(row.engine)
            latency, rate = ((fitted.latency, fitted.rates.get(row.key)) if fitted
                             else model_figures(model, row.engine, row.key))
            start, end = run.windows[name]
            slices.append(TransferSlice(name, start + shift, end + shift, row.work,
                                        float(rate or 1), latency))
        offset += run.makespan + 1
    found = fit_ddr(slices, level)
    if found is None:
        return None
    if found.bandwidth is None:
        return DdrReport(model.ddr_budget, found.slices, None, found.lower_bound)
    top_rate = max((rate for fit in fits.values() if fit.engine in (Engine.LOAD, Engine.STORE)
                    for rate in fit.rates.values()), default=1.0)
    written = float(max(round(found.bandwidth), math.ceil(top_rate)))
    return DdrReport(model.ddr_budget, found.slices,
                     Parameter(f"budgets.{model.ddr_budget}", found.bandwidth, found.low,
                               found.high, written, prior, found.slices), None)


def calibrate(target: Target, measurements: list[Measurement], runs: list[MeasuredRun], *,
              sources: list[str], output: str, holdout: float = 0.0, seed: int = 0,
              joint_level: float = JOINT_LEVEL) -> Calibration:
    """Fit ``target``'s cost parameters to the measurements (see the module docstring)."""
    model = cost_model(target)
    rows = [measurement_row(m, model) for m in measurements]
    bus_rows: list[tuple[MeasuredRun, dict[str, FitRow]]] = []
    unmodelled = 0
    for run in runs:
        found = run_rows(run, model)
        unmodelled += len(run.windows) - len(found)
        transfers = [TransferSlice(name, *run.windows[name], row.work, 1.0, 0.0)
                     for name, row in found.items()
                     if row.engine in (Engine.LOAD, Engine.STORE)]
        shared = {s.name for s in overlapping(transfers)}
        rows += [row for name, row in found.items() if name not in shared]
        bus_rows.append((run, {name: found[name] for name in shared}))
    crossed = [row for row in rows if is_crossing(row)]
    fitted, held = _split([row for row in rows if not is_crossing(row)], holdout, seed)
    count = (parameter_count(fitted) + crossing_count(crossed)
             + (1 if any(shared for _, shared in bus_rows) else 0))
    level = simultaneous_level(joint_level, count)
    fits: dict[Engine, EngineFit] = {}
    groups = []
    for engine in Engine:
        mine = [row for row in fitted if row.engine is engine]
        if not mine:
            continue
        fit = fits[engine] = fit_engine(engine, mine, model, level)
        extra, unseparated = passes_parameters(mine, fit, level) \
            if engine is Engine.VECTOR else ([], [])
        groups.append(GroupReport(engine.value, len(mine), 100 * math.expm1(fit.fit.sigma),
                                  fit.status, fit.parameters + extra, fit.patterns,
                                  fit.outliers, fit.unseparated + unseparated))
    layouts = crossing_group(crossed, fits, target, model, level)
    if layouts is not None:
        groups.append(layouts)
    ddr = _ddr(bus_rows, fits, model, float(target.budgets[model.ddr_budget]), level)
    parameters = [p for g in groups for p in g.parameters]
    if ddr is not None and ddr.parameter is not None:
        parameters.append(ddr.parameter)
    name = f"{target.name}-calibrated"
    document = _document(target, name, parameters, sources, joint_level)
    calibrated = cost_model(target_from_dict(document, name))
    report = CalibrationReport(target.name, output, sources, joint_level, level, bool(held),
                               groups, _errors(calibrated, held or fitted), ddr, unmodelled)
    return Calibration(report, document)
