"""Tuning many workloads: one job per workload, on a process pool or a Dask cluster.

A batch is a directory of workload files (a model's layer pairs, a shape family for plan
selection). Each job is pure: it carries the parsed workload and the target itself (so a
remote worker needs neither the files nor the bundled targets' paths) and returns the
result document; the caller writes it, whole, to one file per workload, so the files
land where the caller runs whatever executes the jobs, and a rerun skips the workloads
whose result file is already there.

Executors: ``local`` runs jobs in a process pool on this machine (``spawn``ed workers:
the solver's threads and ``fork`` do not mix; they ignore SIGINT, and when the parent is
interrupted it terminates them, so a Ctrl-C stops the batch at once and leaves every
result file written so far whole); ``dask`` sends them to Dask distributed,
to the scheduler at ``dask=ADDRESS`` or, without an address, to a LocalCluster started
for the batch. Dask is imported only when asked for.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.errors import InputError
from models.formats import Target
from models.jsonio import load_json_file
from models.workload import Workload
from schedsearch.tuning.joint import tune

__all__ = ["Job", "Outcome", "RESULT_SUFFIX", "workload_files", "result_path", "is_done",
           "parse_executor", "run_job", "run_jobs"]

RESULT_SUFFIX = ".json"
_WORKLOAD_SUFFIXES = (".toml", ".json")


@dataclass(frozen=True, slots=True)
class Job:
    """One workload to tune, with everything a worker needs to do it."""

    key: str
    workload: Workload
    target: Target
    time_limit: float
    seed: int
    workers: int
    reproducible: bool = True


@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished job: its result document, or the one-line error that stopped it."""

    key: str
    document: dict[str, Any] | None
    error: str | None


def workload_files(directory: Path) -> list[Path]:
    """The workload files of a batch directory (``*.toml``, ``*.json``), sorted by name."""
    if not directory.is_dir():
        raise InputError("not a directory", source=str(directory), rule="FILE")
    return sorted(p for p in directory.iterdir()
                  if p.is_file() and p.suffix in _WORKLOAD_SUFFIXES)


def result_path(results: Path, key: str) -> Path:
    return results / f"{key}{RESULT_SUFFIX}"


def is_done(path: Path) -> bool:
    """A result file counts as done if it holds a result document (files are written
    whole, so anything else is a stranger's file, and the job runs again)."""
    try:
        document = load_json_file(path)
    except InputError:
        return False
    return isinstance(document, dict) and "chosen" in document


def parse_executor(spec: str) -> tuple[str, str | None]:
    """``local``, ``dask`` or ``dask=ADDRESS`` -> ``(kind, address)``."""
    if spec in ("local", "dask"):
        return spec, None
    if spec.startswith("dask=") and len(spec) > len("dask="):
        return "dask", spec[len("dask="):]
    raise InputError(f"--executor must be local, dask or dask=ADDRESS, got {spec!r}",
                     source="<options>", rule="OPTION")


def run_job(job: Job) -> Outcome:
    """Tune one workload; unusable input becomes the outcome's error, not an exception."""
    try:
        result = tune(job.workload, job.target, time_limit=job.time_limit, seed=job.seed,
                      workers=job.workers, reproducible=job.reproducible)
    except InputError as error:
        return Outcome(job.key, None, str(error))
    document = {"workload": job.workload.name, "target": job.target.name,
                "time_limit": job.time_limit, "seed": job.seed, **result.as_dict()}
    return Outcome(job.key, document, None)


def run_jobs(jobs: list[Job], executor: str, parallel: int) -> Iterator[Outcome]:
    """Run ``jobs`` on ``executor`` (see :func:`parse_executor`), yielding outcomes as
    they finish; ``parallel`` bounds the local pool (Dask decides for itself)."""
    kind, address = parse_executor(executor)
    if not jobs:
        return
    if kind == "local":
        context = multiprocessing.get_context("spawn")
        # Leaving the block (done, or KeyboardInterrupt from SIGINT/SIGTERM in the parent)
        # terminates the workers: SIGTERM, whose default action ends a running solve.
        with context.Pool(parallel, initializer=_ignore_sigint) as pool:
            yield from pool.imap_unordered(run_job, jobs)
        return
    yield from _run_dask(jobs, address)


def _ignore_sigint() -> None:
    """In a worker: a terminal's Ctrl-C reaches the whole process group; only the parent
    acts on it (and terminates the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_dask(jobs: list[Job], address: str | None) -> Iterator[Outcome]:
    from dask.distributed import Client, LocalCluster
    from dask.distributed import as_completed as finished

    cluster = LocalCluster() if address is None else None
    try:
        try:
            client = Client(address if cluster is None else cluster)
        except OSError as error:
            raise InputError(f"cannot reach the Dask scheduler: {error}",
                             source=str(address), rule="EXECUTOR") from None
        with client:
            futures = [client.submit(run_job, job, key=f"tune-{i}-{job.key}", pure=False)
                       for i, job in enumerate(jobs)]
            for future in finished(futures):
                yield future.result()
    finally:
        if cluster is not None:
            cluster.close()
