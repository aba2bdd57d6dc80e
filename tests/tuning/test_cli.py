"""``schedsearch tune``: one workload, --many on a process pool and on Dask, reruns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dask.distributed import LocalCluster

from checker import verify
from schedsearch.cli import main
from tests.tuning.workloads import TINY


def _write_batch(directory: Path) -> None:
    """Two workloads smaller than :data:`TINY`, whose every search proves its optimum in
    well under a second (TINY's took seconds, and missed its optimum on a loaded
    machine, where the local and Dask results then differed)."""
    directory.mkdir()
    gemm, norm = TINY["tasks"]
    pair = {**TINY, "name": "a", "tasks": [{**gemm, "M": 64, "N": 64},
                                           {**norm, "rows": 16, "cols": 128}]}
    (directory / "a.json").write_text(json.dumps(pair))
    small = {**TINY, "name": "b", "tasks": [{**gemm, "M": 64, "order": "nmk"}]}
    (directory / "b.json").write_text(json.dumps(small))


def test_one_workload_prints_the_chosen_configuration_and_both_makespans(
        tmp_path: Path, capsys) -> None:
    (tmp_path / "w.json").write_text(json.dumps(TINY))
    out = tmp_path / "tuned.json"
    code = main(["tune", str(tmp_path / "w.json"), "--time-limit", "0.5", "-o", str(out),
                 "--verify"])
    captured = capsys.readouterr()
    assert code == 0
    assert "default configuration" in captured.out and "top candidates" in captured.out
    assert "g0" in captured.out and "r0" in captured.out
    assert "verify tuned: legal" in captured.err and "verify default: legal" in captured.err
    assert verify(json.loads(out.read_text())).legal


def test_json_output_is_the_result_document(tmp_path: Path, capsys) -> None:
    (tmp_path / "w.json").write_text(json.dumps(TINY))
    assert main(["tune", str(tmp_path / "w.json"), "--time-limit", "0.5", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"chosen", "makespan", "default_makespan", "candidates"}
    assert document["makespan"] <= document["default_makespan"]


@pytest.mark.parametrize("argv", [
    ["tune"], ["tune", "x", "--many", "d"], ["tune", "gemm-rmsnorm-v75", "--time-limit", "0"],
    ["tune", "--many", "d", "--executor", "ray"], ["tune", "--many", "d", "-o", "x.json"],
    ["tune", "no-such-workload"]])
def test_bad_options_and_input_exit_2_with_one_line(argv: list[str], capsys) -> None:
    assert main(argv) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def _results(directory: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))}


@pytest.mark.slow
def test_many_on_dask_gives_the_local_results_and_a_rerun_skips_them(tmp_path: Path,
                                                                     capsys) -> None:
    batch = tmp_path / "batch"
    _write_batch(batch)
    (batch / "broken.toml").write_text("name = 'x'\n")
    local, remote = tmp_path / "local", tmp_path / "dask"
    # reproducible, and far longer than every search needs to prove its optimum: the
    # results then repeat exactly (using the time, a loaded machine's wall clock would
    # cut screening at a point of its own: its limit is the run's whole budget)
    common = ["tune", "--many", str(batch), "--time-limit", "10", "--reproducible"]
    assert main([*common, "--results", str(local), "--jobs", "1"]) == 2  # broken.toml
    err = capsys.readouterr().err
    assert "3/3" in err and "broken" in err
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:
        code = main([*common, "--results", str(remote),
                     "--executor", f"dask={cluster.scheduler_address}"])
    assert code == 2
    assert set(_results(local)) == {"a", "b"}
    assert _results(local) == _results(remote)
    assert all(r["makespan"] <= r["default_makespan"] for r in _results(local).values())
    capsys.readouterr()
    (batch / "broken.toml").unlink()
    before = {p: p.stat().st_mtime_ns for p in local.glob("*.json")}
    assert main([*common, "--results", str(local), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {row["status"] for row in summary["workloads"]} == {"skipped (done)"}
    assert before == {p: p.stat().st_mtime_ns for p in local.glob("*.json")}
