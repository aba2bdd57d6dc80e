"""Calibration from one kernel shape: the target's latency anchors the fit, the report
names what the rows could not separate; held-out rows of a rate the fit never saw."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.cost import cost_model
from models.formats import Schedule, Target, target_from_dict
from models.targets import load_target
from models.workload import load_workload, tile
from schedsearch.calibrate.calibration import calibrate
from schedsearch.calibrate.engines import model_figures
from schedsearch.calibrate.measurements import MeasuredRun, Measurement, read_csv
from schedsearch.calibrate.report import Status, report_text
from schedsearch.calibrate.work import Engine, run_rows
from schedsearch.engine.search import solve

EXAMPLE = Path(__file__).parents[2] / "models" / "examples" / "measurements-v75.csv"
#: How much slower than the target the "device" runs its matrix engine.
STRETCH = 1.3


@pytest.fixture(scope="module")
def gemm_rmsnorm() -> Schedule:
    """gemm-rmsnorm-v75 solved briefly: any legal schedule will do, every GEMM tile of
    it has the same shape."""
    workload = load_workload("gemm-rmsnorm-v75")
    target = load_target(workload.target)
    return solve(tile(workload, target), target, time_limit=0.3, workers=1)


def _stretched(schedule: Schedule) -> MeasuredRun:
    """A run of ``schedule`` in which every op on HMX took ``STRETCH`` times its plan."""
    model = cost_model(schedule.target)
    rows = run_rows(MeasuredRun(schedule, {n: (p.start, p.end)
                                           for n, p in schedule.ops.items()}, "plan"), model)
    windows = {}
    for name, placed in schedule.ops.items():
        row = rows.get(name)
        factor = STRETCH if row is not None and row.engine is Engine.MATRIX else 1.0
        windows[name] = (placed.start, placed.start + factor * (placed.end - placed.start))
    return MeasuredRun(schedule, windows, "stretched.json")


def test_a_single_shape_trace_stretched_1_3x_is_recovered(gemm_rmsnorm: Schedule) -> None:
    run = _stretched(gemm_rmsnorm)
    target = gemm_rmsnorm.target
    result = calibrate(target, [], [run], sources=["stretched.json"], output="c.json")
    (matrix,) = [g for g in result.report.groups if g.engine == "matrix"]
    works = {row.work for row in run_rows(run, cost_model(target)).values()
             if row.engine is Engine.MATRIX}
    assert len(works) == 1  # one kernel shape: latency and rate are inseparable
    assert matrix.status is Status.ANCHORED
    assert matrix.unseparated == ["costs.matrix.latency_ns",
                                  "costs.matrix.dtypes.f16.macs_per_ns"]
    latency, rate = next(p for p in matrix.parameters if p.held), matrix.parameters[1]
    assert latency.value == latency.prior and latency.written is None
    assert rate.written == pytest.approx(rate.prior / STRETCH, rel=0.10)
    assert "the rows cannot separate costs.matrix.latency_ns" in report_text(result.report)
    # every traced op, DMA included, predicted within 10 % by the calibrated target
    calibrated = cost_model(target_from_dict(result.target, "calibrated"))
    for name, row in run_rows(run, cost_model(target)).items():
        latency_ns, rate_per_ns = model_figures(calibrated, row.engine, row.key)
        assert rate_per_ns is not None
        start, end = run.windows[name]
        assert latency_ns + row.work / rate_per_ns == pytest.approx(end - start, rel=0.10), \
            name
    assert all(e.mape_percent < 10 for e in result.report.errors)


def test_a_measured_duration_below_the_target_latency_writes_nothing(v75: Target) -> None:
    """Holding a latency longer than what was measured would need a negative time per
    MAC: the engine stays underdetermined and the target's figures stay."""
    latency = model_figures(cost_model(v75), Engine.MATRIX, "f16")[0]
    rows = [Measurement("matmul", "f16", (64, 64, 64), 1, 0, "", latency / 2, f"x:{i}")
            for i in range(5)]
    result = calibrate(v75, rows, [], sources=["s"], output="o")
    (matrix,) = result.report.groups
    assert matrix.status is Status.UNDERDETERMINED
    assert all(p.written is None for p in matrix.parameters)
    assert result.target["costs"]["matrix"] == v75.costs["matrix"]


def _mixed_rows() -> list[Measurement]:
    """24 matmul rows of several shapes: 23 in f16 and one in i8."""
    rows = [Measurement("matmul", "f16", (64 * (1 + i % 4), 64, 64 * (1 + i % 3)), 1, 0, "",
                        60.0 + 2.0 * (1 + i % 4) * (1 + i % 3), f"m.csv:{i}")
            for i in range(23)]
    return [*rows, Measurement("matmul", "i8", (128, 128, 128), 1, 0, "", 80.0, "m.csv:23")]


def test_holding_out_every_row_of_a_dtype_scores_it_with_the_target_rate(
        v75: Target) -> None:
    """A held-out i8 row the fit never saw is scored with the calibrated target's i8
    rate (the input's, unchanged); it was a KeyError."""
    rate = "costs.matrix.dtypes.i8.macs_per_ns"
    held = 0
    for seed in range(10):
        result = calibrate(v75, _mixed_rows(), [], sources=["m.csv"], output="o",
                           holdout=0.2, seed=seed)
        (matmul,) = result.report.errors
        assert matmul.rows == 5 and 0 <= matmul.mape_percent <= matmul.worst_percent
        if rate not in {p.name for g in result.report.groups for p in g.parameters}:
            held += 1
            assert result.target["costs"]["matrix"]["dtypes"]["i8"] == \
                v75.costs["matrix"]["dtypes"]["i8"]
    assert held  # some seed held the only i8 row out


def test_the_bundled_csv_with_nine_tenths_held_out_is_scored(v75: Target) -> None:
    rows = read_csv(EXAMPLE)
    report = calibrate(v75, rows, [], sources=["m"], output="o", holdout=0.9).report
    assert report.held_out and sum(e.rows for e in report.errors) > len(rows) // 2


def test_the_report_counts_one_row_in_the_singular(v75: Target) -> None:
    text = report_text(calibrate(v75, _mixed_rows(), [], sources=["m.csv"], output="o").report)
    (i8,) = [line for line in text.splitlines() if ".i8.macs_per_ns" in line]
    assert i8.endswith("(1 row)") and "24 rows" in text and "1 rows" not in text
