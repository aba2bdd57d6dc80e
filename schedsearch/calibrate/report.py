"""The calibration report: parameters with intervals, errors, outliers, residual patterns.

Typed data, turned into JSON (``as_dict``; infinite bounds become null) or text only
when written out. Percentages are of the measured duration: a residual is
``log(modelled / measured)``, shown as ``exp(r) - 1``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from schedsearch.wording import counted

__all__ = ["Status", "Parameter", "LevelResidual", "Pattern", "Outlier", "GroupReport",
           "KindError", "DdrReport", "CalibrationReport", "report_text"]


class Status(Enum):
    """How well an engine's roofline explains its rows."""

    FITTED = "fitted"
    POOR_FIT = "poor fit"  # a residual pattern the roofline form cannot explain
    ANCHORED = "anchored"  # latency and rate inseparable: latency held, rates fitted
    UNDERDETERMINED = "underdetermined"  # the rows cannot separate latency from rate


@dataclass(frozen=True, slots=True)
class Parameter:
    """A fitted figure. ``name`` is its place in the target (``costs.matrix.latency_ns``)
    or, for a diagnostic the target has no place for, ``passes.<kind>``. ``written`` is
    what the calibrated target holds (None: not written), ``prior`` the input target's;
    ``held``: not fitted but held at ``prior`` because the rows could not separate it."""

    name: str
    value: float
    low: float | None
    high: float | None
    written: float | None
    prior: float | None
    rows: int
    held: bool = False


@dataclass(frozen=True, slots=True)
class LevelResidual:
    level: str
    rows: int
    mean_percent: float


@dataclass(frozen=True, slots=True)
class Pattern:
    """Residuals grouped by one factor (a shape extent, units, dtype, layout, kind) whose
    level means differ beyond noise: the roofline misses a dependence on that factor."""

    factor: str
    p_value: float
    levels: list[LevelResidual]


@dataclass(frozen=True, slots=True)
class Outlier:
    origin: str
    kind: str
    measured: float
    modelled: float
    sigmas: float


@dataclass(frozen=True, slots=True)
class GroupReport:
    engine: str
    rows: int
    sigma_percent: float
    status: Status
    parameters: list[Parameter]
    patterns: list[Pattern] = field(default_factory=list)
    outliers: list[Outlier] = field(default_factory=list)
    unseparated: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class KindError:
    """Errors of the calibrated target on one op kind's rows (held out, if any were)."""

    kind: str
    rows: int
    mape_percent: float
    worst_percent: float
    worst_origin: str


@dataclass(frozen=True, slots=True)
class DdrReport:
    """The bus bandwidth: ``parameter`` when determined, else only ``lower_bound``."""

    budget: str
    slices: int
    parameter: Parameter | None
    lower_bound: float | None


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    target: str
    output: str
    sources: list[str]
    joint_level: float
    parameter_level: float
    held_out: bool
    groups: list[GroupReport]
    errors: list[KindError]
    ddr: DdrReport | None
    unmodelled_ops: int

    def as_dict(self) -> dict[str, Any]:
        return _plain(asdict(self))

    @property
    def poor(self) -> list[GroupReport]:
        return [g for g in self.groups if g.status is Status.POOR_FIT]


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _figure(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "-inf" if value is not None and value < 0 else "inf"
    return f"{value:.4g}"


def _parameter_line(p: Parameter) -> str:
    if p.held:
        return (f"    {p.name} = {_figure(p.value)} held at the target's figure  "
                f"({counted(p.rows, 'row')})")
    interval = f"[{_figure(p.low)}, {_figure(p.high)}]"
    written = "" if p.written is None else f" -> {_figure(p.written)}"
    prior = "" if p.prior is None else f" (was {_figure(p.prior)})"
    rows = counted(p.rows, "row")
    return f"    {p.name} = {_figure(p.value)} {interval}{written}{prior}  ({rows})"


def report_text(report: CalibrationReport) -> str:
    """The report as lines for a person: a section per engine, then errors and DDR."""
    lines = [f"calibrated {report.target} -> {report.output} from {', '.join(report.sources)}",
             f"intervals: simultaneous {report.joint_level:.0%} (each "
             f"{report.parameter_level:.4%}, Bonferroni); '->' is the figure written"]
    for group in report.groups:
        lines.append(f"{group.engine}: {group.status.value}, {counted(group.rows, 'row')}, "
                     f"typical error {group.sigma_percent:.2f}%")
        lines += [_parameter_line(p) for p in group.parameters]
        if group.unseparated:
            lines.append(f"    the rows cannot separate {', '.join(group.unseparated)} "
                         f"(one work per rate: a single kernel shape?)")
        for pattern in group.patterns:
            levels = ", ".join(f"{lv.level}: {lv.mean_percent:+.1f}% ({lv.rows})"
                               for lv in pattern.levels)
            lines.append(f"    residuals by {pattern.factor} (p={pattern.p_value:.1e}): "
                         f"{levels}")
        for o in group.outliers:
            lines.append(f"    outlier {o.origin} ({o.kind}): measured {o.measured:.4g}, "
                         f"modelled {o.modelled:.4g} ({o.sigmas:+.1f} sigma)")
    if report.ddr is not None:
        d = report.ddr
        if d.parameter is not None:
            lines.append(f"DDR bus ({counted(d.slices, 'overlapping transfer')}):")
            lines.append(_parameter_line(d.parameter))
        else:
            lines.append(f"DDR bus ({counted(d.slices, 'overlapping transfer')}): never bound; "
                         f"{d.budget} >= {_figure(d.lower_bound)} (not determined)")
    scope = "held-out rows" if report.held_out else "the fitted rows (nothing held out)"
    lines.append(f"errors of the calibrated target on {scope}:")
    for e in report.errors:
        lines.append(f"    {e.kind:<10} {counted(e.rows, 'row'):>9}  MAPE {e.mape_percent:6.2f}%  "
                     f"worst {e.worst_percent:6.2f}% ({e.worst_origin})")
    if report.unmodelled_ops:
        lines.append(f"left out {counted(report.unmodelled_ops, 'traced op')} that no "
                     f"cost group models")
    return "\n".join(lines)
