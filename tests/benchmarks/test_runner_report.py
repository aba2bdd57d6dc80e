"""The runner's process handling and the Markdown page, on tiny stand-in jobs."""

from __future__ import annotations

import sys

from benchmarks.common import external_dir
from benchmarks.report import markdown
from benchmarks.runner import Job, machine, profile, run_job


def test_profiles_name_every_benchmark_and_scale_with_the_profile() -> None:
    quick = profile("quick", seed=3, workers=2, external=None)
    full = profile("full", seed=3, workers=2, external="/data")
    names = [job.name for job in quick]
    assert names == [job.name for job in full]
    assert {"psplib-j30", "psplib-j60", "peer-pyjobshop", "search-scaling", "placement",
            "checker-throughput"} == set(names)
    by_name = {job.name: job for job in quick}
    assert "--sample" in by_name["psplib-j30"].argv
    assert "--sample" not in {job.name: job for job in full}["psplib-j30"].argv
    assert "--quick" in by_name["search-scaling"].argv
    assert "--only" in by_name["placement"].argv
    assert "--only" not in {job.name: job for job in full}["placement"].argv
    assert all("--seed" in job.argv for job in quick if job.figures)
    assert all("/data" in job.argv for job in full
               if job.name.startswith("psplib") or job.name == "placement")


def test_a_missing_script_is_skipped_not_run() -> None:
    job = Job("x", "X", ("benchmarks/not_there.py",), False, "benchmarks/not_there.py")
    assert run_job(job, timeout=10)["skipped"] == "benchmarks/not_there.py not present"


def test_a_job_reports_exit_time_rss_and_output() -> None:
    job = Job("echo", "Echo", ("-c", "print('hello'); raise SystemExit(3)"), False)
    result = run_job(job, timeout=60)
    assert result["exit_code"] == 3
    assert result["output"].strip() == "hello"
    assert result["peak_rss_mib"] > 0 and result["wall_s"] >= 0
    assert not result["timed_out"]


def test_a_job_that_outlives_its_timeout_is_stopped() -> None:
    job = Job("sleep", "Sleep", ("-c", "import time; time.sleep(60)"), False)
    result = run_job(job, timeout=0.5)
    assert result["timed_out"] and result["wall_s"] < 30


def test_figures_come_back_through_json(tmp_path) -> None:
    code = ("import sys, json; p = sys.argv[sys.argv.index('--json') + 1]; "
            "open(p, 'w').write(json.dumps({'rows': []}))")
    result = run_job(Job("fig", "Fig", ("-c", code), True), timeout=60)
    assert result["figures"] == {"rows": []}
    assert "output" not in result


def test_external_dir_skips_when_absent(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NPU_BENCH_EXTERNAL", str(tmp_path / "absent"))
    assert external_dir() is None
    assert external_dir(str(tmp_path)) == tmp_path


def test_markdown_page_has_every_section() -> None:
    document = {
        "started": "20250101T000000Z", "profile": "quick", "seed": 0, "workers": 2,
        "wall_s": 12.0, "machine": {**machine(), "cpu": "Test CPU"},
        "benchmarks": [
            {"name": "psplib-j30", "title": "J30", "exit_code": 0, "timed_out": False,
             "wall_s": 1.0, "cpu_s": 1.0, "peak_rss_mib": 100.0,
             "figures": {"time_limit_s": 2.0, "sample": 2, "sets": {"j30": {
                 "instances": 2, "published": "480/480", "peer": None,
                 "ours": {"instances": 2, "at_best_known": 1, "proven_optimal": 1,
                          "mean_gap_pct": 1.0, "max_gap_pct": 2.0, "mean_wall_s": 0.5,
                          "max_wall_s": 0.9, "all_legal": True,
                          "statuses": {"OPTIMAL": 2}}}}}},
            {"name": "peer-pyjobshop", "title": "Peer", "exit_code": 0, "timed_out": False,
             "wall_s": 1.0, "cpu_s": 1.0, "peak_rss_mib": 100.0,
             "figures": {"time_limit_s": 5.0, "workers": 2, "seed": 0, "rows": [
                 {"workload": "pair", "factor": 1.0, "ops": 10, "ours_makespan": 90,
                  "peer_makespan": 100, "makespan_ratio": 0.9, "ours_legal": True,
                  "peer_legal": True, "ours_time_to_equal_s": 0.1,
                  "peer_time_to_equal_s": 1.0, "time_to_equal_ratio": 0.1}]}},
            {"name": "checker-throughput", "title": "Checker", "command": "bench_checker.py",
             "exit_code": 0, "timed_out": False, "wall_s": 2.0, "cpu_s": 2.0,
             "peak_rss_mib": 400.0, "output": "ops verify\n1000 0.03\n"},
            {"name": "placement", "title": "Placement", "skipped": "not present"},
        ]}
    page = markdown(document)
    assert "Test CPU" in page and f"Python {sys.version_info.major}." in page
    assert "| J30 | schedsearch | 2 (sample) | 2 s | 1/2 | 1/2 | 1.00% | 2.00% |" in page
    assert "| yes | OPTIMAL 2 |" in page
    assert "PyJobShop CP-SAT |" not in page
    assert "| pair x1 | 10 | 90 | 100 | 0.900 |" in page
    assert "1000 0.03" in page
    assert "Skipped: not present." in page
    assert "| checker-throughput | 2.0 | 2.0 | 400.0 | 0 |" in page
