"""``schedsearch tune``: choose each task's tiles, vector units and buffer depth jointly.

One workload: prints the chosen configuration per task beside its default, the tuned
makespan, the default configuration's, and the top candidates (how sensitive the
makespan is to the choice); ``--json`` prints ``{"chosen", "makespan",
"default_makespan", "candidates"}`` (``default_makespan`` null when the default
configuration does not fit, in which case it is dropped and the feasible ones are
searched). ``-o X.toml`` writes the tuned workload (the chosen configuration as a
workload file every command takes), ``-o X.json`` the tuned schedule (whole or not at
all); ``--verify`` checks the tuned and the default schedule with the checker (exit 1
if either is illegal).

Many workloads (``--many DIR``): every ``*.toml``/``*.json`` workload in DIR is tuned
on ``--executor local`` (a process pool) or ``dask[=ADDRESS]`` (Dask distributed); each
result lands whole in ``RESULTS/<name>.json`` as it arrives, a rerun skips the ones
already there, and a progress line on stderr shows the batch. Exit 2 if any workload
was unusable (the others are still tuned and written).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from models.errors import InputError
from models.formats import Schedule, schedule_to_dict
from models.workload import Workload, load_workload, workload_target, workload_target_path
from schedsearch.commands.options import (
    add_dim_option,
    add_search_options,
    add_target_option,
    command_start,
    dims_of,
    worker_count,
)
from schedsearch.commands.progress import display
from schedsearch.engine import interrupt
from schedsearch.output import output_dir, output_file_only, write_json, write_with
from schedsearch.tuning.batch import (
    Job,
    Outcome,
    is_done,
    parse_executor,
    result_path,
    run_jobs,
    workload_files,
)
from schedsearch.tuning.joint import TuneResult, tune
from schedsearch.tuning.workload_file import tuned_workload, workload_toml
from schedsearch.wording import counted

#: Rows of the candidate table.
TOP = 8


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tune",
        description="Search the joint configuration space of a workload's tasks (GEMM "
                    "tiles and loop order, row blocks, vector units, buffer depth) under "
                    "the memory limit: screen configurations by the cost model's lower "
                    "bound and a constructive schedule, then run the full search on the "
                    "best few and on the default configuration.")
    parser.add_argument("workload", metavar="WORKLOAD", nargs="?",
                        help="workload file or bundled example name")
    parser.add_argument("--many", metavar="DIR",
                        help="tune every workload file in DIR instead of one")
    add_target_option(parser, default_from="the workload's")
    add_dim_option(parser)
    add_search_options(parser, time_limit=10.0,
                       time_help="seconds per workload (for one workload, the budget of "
                                 "the whole command, counted from its start)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("-o", "--output", metavar="OUT.toml|OUT.json", type=output_file_only,
                        help="write the tuned workload (.toml) or the tuned schedule "
                             "(any other suffix); one workload only")
    parser.add_argument("--verify", action="store_true",
                        help="check the tuned and default schedules; exit 1 if illegal")
    parser.add_argument("--executor", default="local", metavar="local|dask[=ADDRESS]",
                        help="where --many runs: a local process pool (default) or Dask "
                             "distributed (a LocalCluster, or the scheduler at ADDRESS)")
    parser.add_argument("--jobs", type=worker_count, default=None, metavar="N",
                        help="local processes for --many (default: cores / workers)")
    parser.add_argument("--results", metavar="DIR", type=output_dir,
                        help="where --many writes one result file per workload "
                             "(default: DIR/tuned)")
    parser.set_defaults(handler=run)


def _options(args: argparse.Namespace) -> None:
    def fail(message: str) -> InputError:
        return InputError(message, source="<options>", rule="OPTION")

    if (args.workload is None) == (args.many is None):
        raise fail("give one WORKLOAD or --many DIR")
    if args.many is None and (args.results or args.jobs or args.executor != "local"):
        raise fail("--results, --jobs and --executor go with --many")
    if args.many is not None and (args.output or args.verify):
        raise fail("-o and --verify go with one WORKLOAD")
    parse_executor(args.executor)


def _target_from(workload: Workload, output: str) -> str:
    """The workload's ``target`` as the tuned workload at ``output`` must name it: a
    target file's path is relative to the file that names it."""
    path = workload_target_path(workload)
    if path is None:
        return workload.target
    return os.path.relpath(path, Path(output).parent)


def run(args: argparse.Namespace) -> int:
    _options(args)
    if args.many is not None:
        return _run_many(args)
    workload = load_workload(args.workload, dims_of(args))
    target = workload_target(workload, args.target)
    with interrupt.cooperating(), display("tune") as shown:
        result = tune(workload, target, time_limit=args.time_limit, seed=args.seed,
                      workers=args.workers, reproducible=args.reproducible,
                      on_stage=lambda stage, note: shown.stage(stage, note, fresh=True),
                      progress=shown.progress, started=command_start(args))
    if interrupt.requested():  # configurations screened after the request were cut short
        raise interrupt.Interrupted
    if args.output and Path(args.output).suffix == ".toml":
        tuned = tuned_workload(workload, result.chosen,
                               args.target or _target_from(workload, args.output))
        text = workload_toml(tuned).encode("utf-8")
        write_with(args.output, lambda stream: stream.write(text))
    elif args.output:
        write_json(args.output, schedule_to_dict(result.schedule))
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    else:
        print(_report(result, target.time_unit))
    if args.verify:
        sys.stdout.flush()
        schedules = {"tuned": result.schedule}
        if result.default_schedule is not None:
            schedules["default"] = result.default_schedule
        return _verify(schedules)
    return 0


def _verify(schedules: dict[str, Schedule]) -> int:
    from checker import verify

    code = 0
    for label, schedule in schedules.items():
        verdict = verify(schedule_to_dict(schedule))
        if verdict.legal:
            print(f"verify {label}: legal", file=sys.stderr)
            continue
        code = 1
        for violation in verdict.violations:
            print(f"verify {label}: {violation.code}: {violation.message}", file=sys.stderr)
    return code


def _config_text(config: dict[str, Any]) -> str:
    return " ".join(f"{key}={value}" for key, value in config.items())


def _report(result: TuneResult, unit: str) -> str:
    screened = counted(result.screened, "configuration")
    lines = [f"tuned {result.workload} on {result.target}: {screened} "
             f"screened ({result.infeasible} infeasible), {result.searched} searched"
             + (f", {result.skipped} not searched (time)" if result.skipped else "")
             + f", {result.wall_s:.1f} s"]
    width = max(len(_config_text(c)) for c in result.chosen.values())
    lines.append(f"  {'task':<6} {'chosen':<{width}}  default")
    for task, config in result.chosen.items():
        lines.append(f"  {task:<6} {_config_text(config):<{width}}  "
                     f"{_config_text(result.default[task])}")
    if result.default_makespan is None:
        lines.append(f"makespan {result.makespan} {unit}; the default configuration does "
                     f"not fit the target (dropped)")
    else:
        gain = 1 - result.makespan / result.default_makespan if result.default_makespan else 0.0
        lines.append(f"makespan {result.makespan} {unit}; default configuration "
                     f"{result.default_makespan} {unit} ({gain:.1%} shorter)")
    lines.append(f"top candidates (of {len(result.candidates)}; * = full search, "
                 f"else constructive):")
    lines.append(f"  {'#':>2} {'makespan':>9} {'bound':>8}  configuration")
    for i, candidate in enumerate(result.candidates[:TOP], 1):
        mark = "*" if candidate.makespan is not None else " "
        tag = "  (default)" if candidate.default else ""
        text = "; ".join(f"{task}: {_config_text(config)}"
                         for task, config in candidate.configuration.items())
        lines.append(f"  {i:>2} {candidate.best:>8}{mark} {candidate.bound:>8}  {text}{tag}")
    return "\n".join(lines)


def _run_many(args: argparse.Namespace) -> int:
    directory = Path(args.many)
    results = Path(args.results) if args.results else directory / "tuned"
    files = workload_files(directory)
    failed: dict[str, str] = {}
    jobs, done = [], []
    keys = [path.stem for path in files]
    if len(set(keys)) != len(keys):
        raise InputError("two workload files share a name (e.g. a.toml and a.json); "
                         "each result file is named after its workload file",
                         source=str(directory), rule="FILE")
    targets: dict[str, Any] = {}
    for path in files:
        if is_done(result_path(results, path.stem)):
            done.append(path.stem)
            continue
        try:
            workload = load_workload(str(path))
            found = None if args.target else workload_target_path(workload)
            name = args.target or str(found or workload.target)
            if name not in targets:
                targets[name] = workload_target(workload, args.target)
        except InputError as error:
            failed[path.stem] = str(error)
            continue
        jobs.append(Job(path.stem, workload, targets[name], args.time_limit, args.seed,
                        args.workers, args.reproducible))
    try:
        results.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create: {error.strerror}", source=str(results),
                         rule="FILE") from None
    parallel = args.jobs or max(1, (os.cpu_count() or 1) // args.workers)
    progress = _ProgressLine(len(files), len(done) + len(failed), sys.stderr)
    finished: dict[str, Outcome] = {}
    for outcome in run_jobs(jobs, args.executor, parallel):
        if outcome.document is not None:
            write_json(result_path(results, outcome.key), outcome.document)
        else:
            failed[outcome.key] = outcome.error or "failed"
        finished[outcome.key] = outcome
        progress.advance(outcome.key)
    progress.close()
    _print_batch(keys, done, finished, failed, args.json)
    return 2 if failed else 0


def _print_batch(keys: list[str], done: list[str], finished: dict[str, Outcome],
                 failed: dict[str, str], as_json: bool) -> None:
    rows = []
    for key in keys:
        outcome = finished.get(key)
        document = outcome.document if outcome is not None else None
        status = ("skipped (done)" if key in done else "failed" if key in failed
                  else "tuned")
        rows.append({"workload": key, "status": status,
                     "makespan": document["makespan"] if document else None,
                     "default_makespan": document["default_makespan"] if document else None})
    if as_json:
        print(json.dumps({"workloads": rows, "errors": failed}, indent=1))
        return
    width = max((len(key) for key in keys), default=8)
    print(f"{'workload':<{width}}  {'status':<14} {'makespan':>9} {'default':>9}")
    for row in rows:
        makespan = "-" if row["makespan"] is None else row["makespan"]
        default = "-" if row["default_makespan"] is None else row["default_makespan"]
        print(f"{row['workload']:<{width}}  {row['status']:<14} {makespan:>9} {default:>9}")
    for key, error in failed.items():
        print(f"schedsearch: {key}: {error}", file=sys.stderr)


class _ProgressLine:
    """A one-line progress bar on a terminal; one line per finished workload otherwise."""

    WIDTH = 30

    def __init__(self, total: int, done: int, stream: TextIO) -> None:
        self.total, self.done, self.stream = total, done, stream
        self.live = stream.isatty()
        self._draw("")

    def advance(self, key: str) -> None:
        self.done += 1
        self._draw(key)

    def _draw(self, last: str) -> None:
        filled = self.WIDTH * self.done // self.total if self.total else self.WIDTH
        bar = "#" * filled + "." * (self.WIDTH - filled)
        text = f"tune [{bar}] {self.done}/{self.total}" + (f"  {last}" if last else "")
        self.stream.write(f"\r{text}\x1b[K" if self.live else text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()
