"""Pictures (issue #17 item 10): compare's panels title the makespan the table shows and
mark launches, barriers and illegal panels; ``plot --violations`` draws a report; the
DDR budget's axis has its unit. Read back from SVG with text kept as text."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import pytest

from models.formats import read_schedule
from schedsearch.cli import main
from schedsearch.plot import Panel, plot_paths


@pytest.fixture(scope="module")
def schedule_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pictures") / "s.json"
    assert main(["solve", "rmsnorm-gemm-chain-v75", "-o", str(out), "--time-limit", "0.3"]) == 0
    return out


def _svg_text(draw: object, path: Path) -> str:
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        draw()  # type: ignore[operator]
    return path.read_text()


def test_a_panel_titles_the_makespan_with_overheads_and_marks_an_illegal_one(
        schedule_file: Path, tmp_path: Path) -> None:
    schedule = read_schedule(schedule_file)
    out = tmp_path / "paths.svg"
    panels = [Panel("separate", schedule, schedule.makespan + 2000, 2000, launches=2),
              Panel("broken", schedule, schedule.makespan + 1000, 1000, launches=1,
                    barriers=1, violations=("LANE_OVERLAP",))]
    svg = _svg_text(lambda: plot_paths(panels, out), out)
    assert f"makespan {schedule.makespan + 2000} ns (device {schedule.makespan} + " \
           f"overhead 2000; 2 launches, 0 barriers)" in svg
    assert "1 barrier)" in svg and "ILLEGAL: LANE_OVERLAP" in svg


def test_plot_draws_a_report_and_labels_the_ddr_axis(
        schedule_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(schedule_file.read_text())
    op = next(iter(document["ops"]))
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"legal": False, "violations": [
        {"code": "LANE_OVERLAP", "message": "made up", "ops": [op], "time": 100}]}))
    out = tmp_path / "gantt.svg"
    svg = _svg_text(lambda: main(["plot", str(schedule_file), "-o", str(out),
                                  "--violations", str(report)]), out)
    assert "1 violation: LANE_OVERLAP" in svg and "1 violations" not in svg
    assert "(bytes/ns)" in svg
