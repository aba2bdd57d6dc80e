"""One run of every benchmark, each in a process of its own; one JSON file and one table.

Why a process per benchmark: peak RSS is a per-process high-water mark, so only a fresh
process gives each benchmark its own figure (``os.wait4`` reports it, descendants
included), and one benchmark's heap cannot slow the next.

Our own benchmarks (:mod:`benchmarks.psplib_bench`, :mod:`benchmarks.peer_pyjobshop`)
hand back their figures as JSON. The colleagues' scripts (``bench_search.py``,
``bench_placement.py``, ``bench_checker.py``) are run as their authors wrote them and
their printed tables are kept verbatim; a script that is not there is reported as
skipped.

Profiles: ``quick`` (a sample, short limits: under 5 minutes on 2 cores) and ``full``
(every PSPLIB instance at 10 s, every size: hours).
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.common import REPO
from benchmarks.report import markdown

__all__ = ["Job", "profile", "machine", "run_job", "run"]

#: A job still running after this many seconds is stopped and reported as such.
JOB_TIMEOUT_S = {"quick": 600.0, "full": 6 * 3600.0}
#: Versions reported with every run.
PACKAGES = ("npu-schedsearch", "ortools", "numpy", "networkx", "psplib", "pyjobshop")
#: bench_placement.py has no quick mode of its own: 5 s per instance, and of idealloc's
#: traces only the two smallest (the others take minutes to load and place).
PLACEMENT_QUICK = ("--time-limit", "5", "--minimise-time-limit", "5", "--only",
                   *"ABCDEFGHIJK", "G_1", "resnet50")


@dataclass(frozen=True, slots=True)
class Job:
    """One benchmark process: ``python <argv>``; ``figures`` says it writes ``--json``."""

    name: str
    title: str
    argv: tuple[str, ...]
    figures: bool
    script: str | None = None

    def missing(self) -> bool:
        return self.script is not None and not (REPO / self.script).is_file()


def profile(name: str, *, seed: int, workers: int, external: str | None) -> list[Job]:
    """The jobs of profile ``name``, in the order they run."""
    quick = name == "quick"
    common = ("--seed", str(seed), "--workers", str(workers))
    data = ("--external", external) if external else ()
    psplib = "2" if quick else "10"
    return [
        Job("psplib-j30", "RCPSP on PSPLIB J30",
            ("-m", "benchmarks.psplib_bench", "--sets", "j30", "--time-limit", psplib,
             *(("--sample", "48") if quick else ()), *common, *data), True),
        Job("psplib-j60", "RCPSP on PSPLIB J60",
            ("-m", "benchmarks.psplib_bench", "--sets", "j60", "--time-limit", psplib,
             *(("--sample", "12") if quick else ()), *common, *data), True),
        Job("peer-pyjobshop", "Peer: PyJobShop (CP-SAT) on our workloads, VTCM ample",
            ("-m", "benchmarks.peer_pyjobshop", "--time-limit", "5" if quick else "10",
             "--factors", *(("1",) if quick else ("0.5", "1", "2")), *common), True),
        Job("search-scaling", "Search scaling (bench_search.py)",
            ("benchmarks/bench_search.py", *(("--quick",) if quick else ())), False,
            "benchmarks/bench_search.py"),
        Job("placement", "Placement (bench_placement.py)",
            ("benchmarks/bench_placement.py", *(PLACEMENT_QUICK if quick else ()),
             *(("--data", external) if external else ())), False,
            "benchmarks/bench_placement.py"),
        Job("checker-throughput", "Checker throughput (bench_checker.py)",
            ("benchmarks/bench_checker.py", "--sizes", "1000", "10000", "100000"), False,
            "benchmarks/bench_checker.py"),
    ]


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """What the figures were measured on, including how busy the machine was."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"platform": platform.platform(), "cpu": _cpu_model(), "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "versions": {p: _version(p) for p in PACKAGES},
            "git_commit": _git("rev-parse", "HEAD"),
            "git_dirty": bool(status) if status is not None else None,
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


def run_job(job: Job, *, timeout: float) -> dict[str, Any]:
    """Run one job; its exit status, wall time, peak RSS, figures or printed output."""
    if job.missing():
        return {"name": job.name, "title": job.title, "skipped": f"{job.script} not present"}
    with tempfile.TemporaryDirectory(prefix="npu-bench-") as scratch:
        figures_path = Path(scratch) / "figures.json"
        output_path = Path(scratch) / "stdout.txt"
        argv = [sys.executable, *job.argv, *(("--json", str(figures_path)) if job.figures
                                             else ())]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
        began = time.perf_counter()
        with output_path.open("w") as output:
            child = subprocess.Popen(argv, cwd=REPO, env=env, stdout=output,
                                     stderr=subprocess.STDOUT, start_new_session=True)
            status, usage, timed_out = _wait(child, timeout)
        wall = time.perf_counter() - began
        result: dict[str, Any] = {
            "name": job.name, "title": job.title, "command": " ".join(job.argv),
            "exit_code": os.waitstatus_to_exitcode(status), "timed_out": timed_out,
            "wall_s": round(wall, 2), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2)}
        if job.figures and figures_path.is_file():
            result["figures"] = json.loads(figures_path.read_text())
        if not job.figures or result["exit_code"] != 0:
            result["output"] = output_path.read_text(errors="replace")
    return result


def _wait(child: subprocess.Popen[bytes], timeout: float
          ) -> tuple[int, Any, bool]:
    """``os.wait4`` on ``child`` (its own peak RSS and CPU, descendants included),
    stopping its whole process group if it outlives ``timeout``."""
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            child.returncode = os.waitstatus_to_exitcode(status)
            return status, usage, timed_out
        if not timed_out and time.monotonic() > deadline:
            timed_out = True
            os.killpg(child.pid, signal.SIGTERM)
        time.sleep(0.05)


def run(profile_name: str, *, seed: int, workers: int, external: str | None,
        only: Sequence[str] | None, out_dir: Path) -> tuple[Path, Path, str]:
    """Run the profile; write ``<out_dir>/<timestamp>.json`` and ``.md``; return both
    paths and the Markdown."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    document: dict[str, Any] = {"format": "npu-bench/1", "started": stamp,
                                "profile": profile_name, "seed": seed, "workers": workers,
                                "machine": machine(), "benchmarks": []}
    began = time.perf_counter()
    for job in profile(profile_name, seed=seed, workers=workers, external=external):
        if only and job.name not in only:
            continue
        print(f"[benchmarks] {job.name}: {' '.join(job.argv)}", file=sys.stderr, flush=True)
        result = run_job(job, timeout=JOB_TIMEOUT_S[profile_name])
        note = result.get("skipped") or (f"exit {result['exit_code']}, {result['wall_s']} s,"
                                         f" peak RSS {result['peak_rss_mib']} MiB")
        print(f"[benchmarks] {job.name}: {note}", file=sys.stderr, flush=True)
        document["benchmarks"].append(result)
    document["wall_s"] = round(time.perf_counter() - began, 1)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / f"{stamp}.json", out_dir / f"{stamp}.md"
    json_path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    text = markdown(document)
    md_path.write_text(text, encoding="utf-8")
    return json_path, md_path, text
