"""``schedsearch calibrate``: the calibrated target, the report, refusals; and a
calibrated target driving ``solve``, ``compare`` and ``tune`` like a bundled one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.cost import cost_model, matrix_ns
from models.formats import Schedule, Target, read_schedule, read_target_file
from schedsearch.calibrate.replay import measured_schedule
from schedsearch.calibrate.synthetic import (
    TRUTH_BANDWIDTH,
    TRUTH_V75,
    synthetic_measurements,
    synthetic_run,
    write_csv,
)
from schedsearch.cli import main
from schedsearch.trace import schedule_to_trace

EXAMPLE = Path(__file__).parents[2] / "models" / "examples" / "measurements-v75.csv"
TINY = {"name": "tiny", "target": "hexagon-v75", "tasks": [
    {"name": "g0", "kind": "gemm", "M": 128, "N": 128, "K": 64},
    {"name": "r0", "kind": "rmsnorm", "rows": 64, "cols": 256}]}


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("calibrated") / "v75-calibrated.json"
    assert main(["calibrate", "hexagon-v75", str(EXAMPLE), "-o", str(out)]) == 0
    return out


def test_the_bundled_example_is_marked_synthetic() -> None:
    assert EXAMPLE.read_text().startswith("# SYNTHETIC: not measured on any device")


def test_the_calibrated_target_is_a_plain_target_with_its_sources(calibrated: Path) -> None:
    target = read_target_file(calibrated)
    assert target.name == "hexagon-v75-calibrated"
    model = cost_model(target)  # usable by the cost model as is
    rate = model.matrix.rate("f16")
    assert rate is not None
    # the synthetic device's f16 rate, not the bundled assumption (2048)
    assert abs(rate.macs_per_ns - TRUTH_V75["costs.matrix.dtypes.f16.macs_per_ns"]) < 60
    assert model.load.rates[1] == TRUTH_V75["costs.load.bytes_per_ns[1]"]
    sources = target.meta["sources"]
    assert str(EXAMPLE) in sources["costs.matrix.dtypes.f16.macs_per_ns"]
    assert "soft_l1" in sources["costs.matrix.dtypes.f16.macs_per_ns"]
    assert target.meta["calibration"]["measurements"] == [str(EXAMPLE)]


def test_solve_compare_and_tune_take_the_calibrated_target(tmp_path: Path, calibrated: Path,
                                                          capsys) -> None:
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(TINY))
    out = tmp_path / "s.json"
    assert main(["solve", str(workload), "--target", str(calibrated), "--time-limit", "0.5",
                 "-o", str(out), "--verify"]) == 0
    schedule = read_schedule(out)
    assert schedule.target.name == "hexagon-v75-calibrated"
    engine = cost_model(read_target_file(calibrated)).matrix
    matmul = schedule.problem.ops["g0.mm.m0.n0.k0"]
    assert matmul.modes[0].duration == matrix_ns(engine, 128, 128, 64, "f16")
    assert main(["compare", str(workload), "--target", str(calibrated), "--time-limit",
                 "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target"] == "hexagon-v75-calibrated"
    assert main(["tune", str(workload), "--target", str(calibrated), "--time-limit", "0.5",
                 "--json"]) == 0


def test_json_report_with_holdout(tmp_path: Path, capsys) -> None:
    out = tmp_path / "c.json"
    assert main(["calibrate", "hexagon-v75", str(EXAMPLE), "-o", str(out), "--holdout",
                 "0.2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["held_out"] is True
    assert {g["engine"] for g in report["groups"]} == {"matrix", "vector", "load", "store"}
    assert all(g["status"] == "fitted" for g in report["groups"])
    assert {e["kind"] for e in report["errors"]} >= {"matmul", "rmsnorm", "load", "store"}
    assert 0.99 == report["joint_level"] < report["parameter_level"] < 1


def test_a_traced_run_calibrates_the_bus(tmp_path: Path, schedule: Schedule,
                                         schedule_file: Path, truth: Target, capsys) -> None:
    rows = tmp_path / "rows.csv"
    with rows.open("w") as stream:
        write_csv(synthetic_measurements(truth, seed=5), stream, "synthetic")
    trace = tmp_path / "run.json"
    run = synthetic_run(schedule, truth, bandwidth=TRUTH_BANDWIDTH, seed=5)
    trace.write_text(json.dumps(schedule_to_trace(measured_schedule(run))))
    out = tmp_path / "c.json"
    assert main(["calibrate", "hexagon-v75", str(rows), str(trace), "--schedule",
                 str(schedule_file), "-o", str(out), "--json"]) == 0
    ddr = json.loads(capsys.readouterr().out)["ddr"]["parameter"]
    assert ddr["low"] <= TRUTH_BANDWIDTH <= ddr["high"]
    assert read_target_file(out).budgets["DDR_BW"] == round(ddr["value"])


def _bad(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(("make", "words"), [
    (lambda d: _bad(d, "kind,shape,duration\nmatmul,1x1x1,3\n"), "missing column(s) dtype"),
    (lambda d: _bad(d, "kind,dtype,shape,duration\nload,f16,4x4,-1\n"), "line 2"),
    (lambda d: _bad(d, "kind,dtype,shape,duration\nload,f16,4x4,NaN\n"), "above 0"),
    (lambda d: _bad(d, "kind,dtype,shape,mode,duration\nload,f16,4x4,7,10\n"), "mode 7"),
    (lambda d: _bad(d, "kind,dtype,shape,units,duration\nsilu,f16,4x4,9,10\n"), "9 units"),
    (lambda d: str(d / "missing.csv"), "cannot read"),
])
def test_bad_measurement_files_are_one_line_and_exit_2(tmp_path: Path, make, words: str,
                                                       capsys) -> None:
    assert main(["calibrate", "hexagon-v75", make(tmp_path), "-o",
                 str(tmp_path / "c.json")]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and words in error
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("option", [["--holdout", "1"], ["--holdout", "nan"],
                                    ["--seed", "-1"], ["--seed", "x"], ["-o", "-"]])
def test_bad_options_are_one_line_and_exit_2(tmp_path: Path, option: list[str],
                                             capsys) -> None:
    assert main(["calibrate", "hexagon-v75", str(EXAMPLE), "-o", str(tmp_path / "c.json"),
                 *option]) == 2
    assert not (tmp_path / "c.json").exists()
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_trace_needs_its_schedule_and_must_be_of_it(tmp_path: Path, schedule: Schedule,
                                                      schedule_file: Path, capsys) -> None:
    trace = tmp_path / "run.json"
    trace.write_text(json.dumps(schedule_to_trace(schedule)))
    assert main(["calibrate", "hexagon-v75", str(trace), "-o", str(tmp_path / "c.json")]) == 2
    assert "needs --schedule" in capsys.readouterr().err
    other = tmp_path / "other.json"
    document = schedule_to_trace(schedule)
    document["otherData"]["problem"] = "another"
    other.write_text(json.dumps(document))
    assert main(["calibrate", "hexagon-v75", str(other), "--schedule", str(schedule_file),
                 "-o", str(tmp_path / "c.json")]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "a trace of problem 'another'" in error
