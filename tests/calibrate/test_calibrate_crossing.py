"""Rows that crossed layouts give back the two crossing figures, and nothing else moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.errors import InputError
from models.formats import Target, target_from_dict
from models.layouts import layout_costs
from schedsearch.calibrate.calibration import calibrate
from schedsearch.calibrate.measurements import read_csv
from schedsearch.calibrate.report import GroupReport, Status
from schedsearch.calibrate.synthetic import (
    TRUTH_V75,
    synthetic_crossings,
    synthetic_measurements,
    truth_target,
)

#: Crossing figures unlike the bundled guesses (0.5 and 1), so a fit visibly moves them.
CROSSING_TRUTH = {"costs.layouts.strided_efficiency": 0.3, "costs.layouts.scatter_passes": 3}


@pytest.fixture(scope="module")
def crossed_truth(v75: Target) -> Target:
    return truth_target(v75, {**TRUTH_V75, **CROSSING_TRUTH})


def _layouts(groups: list[GroupReport]) -> GroupReport:
    (group,) = [g for g in groups if g.engine == "layouts"]
    return group


def test_the_crossing_figures_come_back_inside_their_intervals_and_are_written(
        v75: Target, crossed_truth: Target) -> None:
    rows = (synthetic_measurements(crossed_truth, seed=3, rows_per_kind=24)
            + synthetic_crossings(crossed_truth, seed=3))
    result = calibrate(v75, rows, [], sources=["synthetic"], output="out.json")
    group = _layouts(result.report.groups)
    assert group.status is Status.FITTED and group.rows == 4 * 24
    found = {p.name: p for p in group.parameters}
    for name, true in CROSSING_TRUTH.items():
        p = found[name]
        assert p.low is not None and p.high is not None and p.low <= true <= p.high
        assert p.written == pytest.approx(true, abs=0.01)  # passes: a whole number
    written = layout_costs(target_from_dict(result.target, "calibrated"))
    assert written.strided_efficiency == found["costs.layouts.strided_efficiency"].written
    assert written.scatter_passes == 3
    # figures no row measured stay as the target stated them
    assert written.relayout_passes == layout_costs(v75).relayout_passes


def test_crossing_rows_stay_out_of_the_engine_fits(v75: Target, crossed_truth: Target) -> None:
    plain = synthetic_measurements(crossed_truth, seed=5, rows_per_kind=24)
    alone, mixed = (calibrate(v75, rows, [], sources=["s"], output="o.json").report
                    for rows in (plain, plain + synthetic_crossings(crossed_truth, seed=5)))
    assert not [g for g in alone.groups if g.engine == "layouts"]
    engines = {g.engine: [(p.name, p.value) for p in g.parameters] for g in alone.groups}
    assert engines == {g.engine: [(p.name, p.value) for p in g.parameters]
                       for g in mixed.groups if g.engine != "layouts"}


@pytest.mark.parametrize(("row", "column"), [("matmul,f16,64x64x64,,,strided,100", "layout"),
                                             ("load,f16,16x256,,,scatter,100", "layout")])
def test_a_crossing_word_on_the_wrong_kind_is_refused(tmp_path: Path, row: str,
                                                      column: str) -> None:
    path = tmp_path / "m.csv"
    path.write_text(f"kind,dtype,shape,units,mode,layout,duration\n{row}\n")
    with pytest.raises(InputError) as error:
        read_csv(path)
    assert error.value.rule == "MEASUREMENT" and f"column '{column}'" in str(error.value)
