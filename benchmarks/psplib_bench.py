"""RCPSP on PSPLIB (J30, J60): how close ``schedsearch.solve`` gets to the best known makespans.

Work nobody here wrote: each Patterson-format instance becomes an ``npu-problem/1`` (every
activity an op, including the zero-duration dummy source and sink; each renewable resource
a budget with its availability as capacity; each successor an ``after`` edge; one task;
no buffers, no lanes), is solved, the schedule is verified by the independent checker,
and its makespan is compared with the best known one from ``bks-<set>.csv``.

Per set and solver it reports: instances at the best known makespan, instances proven
optimal (by our own bound; by CP-SAT's status for the peer), mean and max gap to the best
known, mean and max wall time, and whether every schedule was legal. Two peers run on
the same instances in the same run, at the same time limit, seed and workers: PyJobShop's
CP-SAT (``--no-peer`` skips it), and a plain CP-SAT model written here
(:func:`solve_plain_cpsat`: one optional interval per mode, a cumulative per resource,
the precedences, minimise the makespan; ``--no-cpsat`` skips it), the simplest thing a
user could write with the same solver. The published figures beside them (8 workers,
900 s): J30 480/480 optimal, J60 435/480 optimal with a mean gap of 0.13%.

    python -m benchmarks.psplib_bench [--sets j30 j60] [--sample N] [--time-limit S]
                                      [--workers W] [--seed K] [--no-peer] [--no-cpsat]
                                      [--reproducible [--wall-limit S]] [--json PATH]

With ``--reproducible`` our search stops by its deterministic work budget, so the figures
do not depend on the machine's load, unless the wall-clock safety net cuts a run (on a
shared machine at load 10-16 a 10 s J30 run was cut on a dozen hard instances): each
such run counts in ``cut`` (``meta.reproducible`` false), and ``--wall-limit`` moves the
net further out.

The files ``J30_<id>.txt`` carry the ``ID`` of the CSV rows (checked: every file's
critical path and total duration equal the row's ``CPM`` and ``Sum PT``).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import checker
from benchmarks.common import external_dir, write_figures
from benchmarks.data import skip_reason
from benchmarks.peer_pyjobshop import PeerInstance, PeerResult, peer_instance, peer_schedule
from models.formats import (
    PROBLEM_FORMAT,
    TARGET_FORMAT,
    Problem,
    Target,
    problem_from_dict,
    schedule_to_dict,
    target_from_dict,
)
from schedsearch import solve

__all__ = ["BestKnown", "read_best_known", "rcpsp_documents", "to_problem", "sample_ids",
           "solve_plain_cpsat", "solve_instance", "summarize", "run", "main"]

SETS = ("j30", "j60")
#: Published figures quoted beside ours (../shared/external/README.md).
PUBLISHED = {"j30": "CP-SAT via PyJobShop, 8 workers, 900 s: 480/480 optimal, mean 0.4 s",
             "j60": "CP-SAT via PyJobShop, 8 workers, 900 s: 435/480 optimal, mean gap 0.13%"}


# ----------------------------------------------------------------------------- input
class _Mode(Protocol):
    duration: int
    demands: list[int]


class _Activity(Protocol):
    modes: list[_Mode]
    successors: list[int]


class _Resource(Protocol):
    capacity: int
    renewable: bool


class ProjectLike(Protocol):
    """What the converter reads of a ``psplib.ProjectInstance``."""

    resources: list[_Resource]
    activities: list[_Activity]


@dataclass(frozen=True, slots=True)
class BestKnown:
    """One row of a PSPLIB results file: bounds on the optimum, and the optimum if known."""

    instance_id: int
    reference: str
    lower: int
    upper: int
    optimum: int | None


def read_best_known(text: str) -> dict[int, BestKnown]:
    """The rows of a PSPLIB ``bks-*.csv`` (``;``-separated, a preamble of ``key;value``
    lines, then a header starting with ``ID``, then one row per instance, then record
    notes). ``OPT value`` 0 means the optimum is not known."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("ID;")
                  and "UB value" in line), None)
    if start is None:
        raise ValueError("no header row starting with 'ID;' and naming 'UB value'")
    rows = csv.reader(io.StringIO("\n".join(lines[start:])), delimiter=";")
    header = next(rows)
    column = {name.strip(): i for i, name in enumerate(header)}
    table: dict[int, BestKnown] = {}
    for row in rows:
        if not row or not row[0].strip().isdigit():
            break
        optimum = int(row[column["OPT value"]])
        table[int(row[0])] = BestKnown(
            instance_id=int(row[0]), reference=row[column["Ref1"]].strip(),
            lower=int(row[column["LB value"]]), upper=int(row[column["UB value"]]),
            optimum=optimum or None)
    return table


def rcpsp_documents(project: ProjectLike, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """An RCPSP instance as ``(npu-problem/1, npu-target/1)`` documents.

    Activity ``i`` (0-based in psplib, 1-based in the file) is op ``j<i+1>``; resource
    ``k`` is budget ``R<k+1>``. A renewable resource is exactly a budget: at every instant
    the running ops' draws sum to at most its capacity. The target has no lanes, which the
    format allows; modes keep only non-zero draws.
    """
    budgets: dict[str, int] = {}
    for k, resource in enumerate(project.resources):
        if not resource.renewable:
            raise ValueError(f"{name}: resource {k + 1} is not renewable; not an RCPSP")
        budgets[f"R{k + 1}"] = resource.capacity
    ops: dict[str, Any] = {}
    after: list[list[str]] = []
    for i, activity in enumerate(project.activities):
        modes = [{"duration": mode.duration,
                  "budgets": {f"R{k + 1}": d for k, d in enumerate(mode.demands) if d}}
                 for mode in activity.modes]
        ops[f"j{i + 1}"] = {"task": "project", "modes": modes}
        after += [[f"j{i + 1}", f"j{s + 1}"] for s in activity.successors]
    problem = {"format": PROBLEM_FORMAT, "name": name,
               "tasks": {"project": {"kind": "rcpsp"}}, "ops": ops, "after": after}
    target = {"format": TARGET_FORMAT, "name": f"rcpsp-{name}", "time_unit": "period",
              "lanes": {}, "budgets": budgets}
    return problem, target


def to_problem(project: ProjectLike, name: str) -> tuple[Problem, Target]:
    """:func:`rcpsp_documents`, read back through the strict format readers."""
    problem_doc, target_doc = rcpsp_documents(project, name)
    target = target_from_dict(target_doc, name)
    return problem_from_dict(problem_doc, name, target), target


def sample_ids(ids: Sequence[int], count: int | None) -> list[int]:
    """``count`` ids spread evenly over the sorted ``ids`` (all of them for None).

    PSPLIB orders instances by parameter group (ten per group), so the first ``count``
    would all share one group; an even spread samples many groups."""
    ordered = sorted(ids)
    if count is None or count >= len(ordered):
        return ordered
    step = len(ordered) / max(count, 1)
    return [ordered[int(k * step)] for k in range(count)]


# ----------------------------------------------------------------------------- solving
def _side(makespan: int, best: BestKnown, *, proven: bool, status: str | None,
          wall: float, legal: bool) -> dict[str, Any]:
    return {"makespan": makespan, "status": status,
            "gap_pct": 100.0 * (makespan - best.upper) / best.upper,
            "at_best_known": makespan <= best.upper, "proven_optimal": proven,
            "wall_s": round(wall, 3), "legal": legal}


def solve_plain_cpsat(peer: PeerInstance, *, time_limit: float, workers: int,
                      seed: int) -> PeerResult:
    """``peer`` as the plain CP-SAT model (see the module docstring), solved with
    ``workers`` workers for ``time_limit`` seconds."""
    from ortools.sat.python import cp_model

    began = time.perf_counter()
    model = cp_model.CpModel()
    horizon = sum(max(m.duration for m in task.modes) + 1 for task in peer.tasks) + sum(
        delay for _, _, delay in peer.edges)
    starts, ends, chosen = [], [], []
    demands: dict[str, list[tuple[Any, int]]] = {r: [] for r in peer.capacities}
    for t, task in enumerate(peer.tasks):
        start = model.new_int_var(0, horizon, f"s{t}")
        end = model.new_int_var(0, horizon, f"e{t}")
        picks = []
        for k, mode in enumerate(task.modes):
            on = model.new_constant(1) if len(task.modes) == 1 else \
                model.new_bool_var(f"m{t}_{k}")
            interval = model.new_optional_interval_var(start, mode.duration, end, on,
                                                       f"i{t}_{k}")
            for resource, amount in mode.demands.items():
                demands[resource].append((interval, amount))
            picks.append(on)
        model.add_exactly_one(picks)
        starts.append(start)
        ends.append(end)
        chosen.append(picks)
    for resource, items in demands.items():
        if items:
            model.add_cumulative([i for i, _ in items], [d for _, d in items],
                                 peer.capacities[resource])
    for pred, succ, delay in peer.edges:
        model.add(starts[succ] >= ends[pred] + delay)
    makespan = model.new_int_var(0, horizon, "makespan")
    model.add_max_equality(makespan, ends)
    model.minimize(makespan)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    code = solver.solve(model)
    status = solver.status_name(code)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return PeerResult((), (), None, (), status, time.perf_counter() - began)
    modes = tuple(next(k for k, on in enumerate(picks) if solver.boolean_value(on))
                  for picks in chosen)
    return PeerResult(modes, tuple(solver.value(s) for s in starts),
                      solver.value(makespan), (), status, time.perf_counter() - began)


def solve_instance(path: Path, best: BestKnown, *, time_limit: float, workers: int,
                   seed: int, peer: bool, cpsat: bool = True,
                   reproducible: bool = False, wall_limit: float | None = None
                   ) -> dict[str, Any]:
    """Parse, convert, solve and verify one instance; with ``peer``, PyJobShop's CP-SAT
    solves the same instance at the same limit (the published reference, run here), and
    with ``cpsat`` the plain CP-SAT model (:func:`solve_plain_cpsat`). ``wall_limit`` is
    our search's hard wall-clock limit (:func:`schedsearch.solve`'s default if None)."""
    import psplib  # a benchmark-only dependency: imported where it is needed

    name = path.stem
    problem, target = to_problem(psplib.parse(path, instance_format="patterson"), name)
    began = time.perf_counter()
    schedule = solve(problem, target, time_limit=time_limit, seed=seed, workers=workers,
                     reproducible=reproducible, wall_limit=wall_limit)
    wall = time.perf_counter() - began
    meta = schedule.meta or {}
    bound = int(meta.get("bound", 0))
    record: dict[str, Any] = {
        "name": name, "ops": len(problem.ops), "best_known": best.upper,
        "optimum_known": best.optimum is not None,
        "ours": {**_side(schedule.makespan, best, proven=schedule.makespan <= bound,
                         status=meta.get("status"), wall=wall,
                         legal=checker.verify(schedule_to_dict(schedule)).legal),
                 "bound": bound, "solver": meta.get("solver"),
                 "cut": reproducible and meta.get("reproducible") is False}}
    for who, wanted in (("peer", peer), ("cpsat", cpsat)):
        if not wanted:
            continue
        if who == "peer":
            from benchmarks.peer_pyjobshop import solve_peer

            result = solve_peer(peer_instance(problem, target), time_limit=time_limit,
                                workers=workers, seed=seed)
        else:
            result = solve_plain_cpsat(peer_instance(problem, target),
                                       time_limit=time_limit, workers=workers, seed=seed)
        if result.makespan is not None:
            legal = checker.verify(peer_schedule(problem, target, result)).legal
            record[who] = _side(result.makespan, best, proven=result.status == "OPTIMAL",
                                status=result.status, wall=result.wall_s, legal=legal)
    return record


def summarize(sides: list[dict[str, Any]]) -> dict[str, Any]:
    """One solver's figures over a set, from its side of each record; ``statuses`` counts
    final statuses (OPTIMAL, FEASIBLE, or a CP-SAT failure such as MODEL_INVALID)."""
    if not sides:
        return {"instances": 0}
    gaps = [r["gap_pct"] for r in sides]
    walls = [r["wall_s"] for r in sides]
    return {"instances": len(sides),
            "at_best_known": sum(r["at_best_known"] for r in sides),
            "proven_optimal": sum(r["proven_optimal"] for r in sides),
            "mean_gap_pct": round(statistics.fmean(gaps), 3),
            "max_gap_pct": round(max(gaps), 3),
            "mean_wall_s": round(statistics.fmean(walls), 3),
            "max_wall_s": round(max(walls), 3),
            "all_legal": all(r["legal"] for r in sides),
            "statuses": dict(Counter(str(r["status"]) for r in sides).most_common()),
            **({"cut": sum(r["cut"] for r in sides)} if any("cut" in r for r in sides)
               else {})}


def run(external: Path | None, sets: Sequence[str], sample: int | None, *,
        time_limit: float, workers: int, seed: int, peer: bool, cpsat: bool = True,
        reproducible: bool = False, only: Sequence[int] = (),
        wall_limit: float | None = None, log: Any = sys.stdout) -> dict[str, Any]:
    """Every requested set that is present under ``external/psplib``; absent ones are
    reported as skipped. ``peer`` is dropped when pyjobshop is not installed. ``only``
    keeps the instances of those numbers (the hard ones a closing note cites)."""
    peer = peer and importlib.util.find_spec("pyjobshop") is not None
    figures: dict[str, Any] = {"time_limit_s": time_limit, "workers": workers,
                               "seed": seed, "sample": sample, "peer": peer,
                               "cpsat": cpsat, "reproducible": reproducible,
                               "wall_limit_s": wall_limit, "sets": {}}
    root = external / "psplib" if external else None
    for name in sets:
        folder = root / name if root else None
        bks_file = root / f"bks-{name}.csv" if root else None
        if folder is None or bks_file is None or not folder.is_dir() or not bks_file.is_file():
            figures["sets"][name] = {"skipped": skip_reason(str(external) if external
                                                            else None)}
            continue
        if importlib.util.find_spec("psplib") is None:
            figures["sets"][name] = {"skipped": "psplib is not installed "
                                                "(pip install '.[bench]')"}
            continue
        # The J60 file is not UTF-8 (a cp1252 byte in its notes); the figures are ASCII.
        best = read_best_known(bks_file.read_text(encoding="latin-1"))
        files = {int(p.stem.split("_")[-1]): p for p in folder.glob("*.txt")}
        records = []
        known = [i for i in files if i in best and (not only or i in only)]
        for instance_id in sample_ids(known, sample):
            record = solve_instance(files[instance_id], best[instance_id],
                                    time_limit=time_limit, workers=workers, seed=seed,
                                    peer=peer, cpsat=cpsat, reproducible=reproducible,
                                    wall_limit=wall_limit)
            records.append(record)
            line = f"{record['name']:>10} best {record['best_known']:>4}"
            for who in ("ours", "peer", "cpsat"):
                if who in record:
                    side = record[who]
                    line += (f" | {who} {side['makespan']:>4} {side['gap_pct']:6.2f}% "
                             f"{side['wall_s']:6.2f} s {side['status']}"
                             f"{'' if side['legal'] else ' ILLEGAL'}"
                             f"{' CUT' if side.get('cut') else ''}")
            print(line, file=log, flush=True)
        figures["sets"][name] = {
            "instances": len(records), "ours": summarize([r["ours"] for r in records]),
            "peer": summarize([r["peer"] for r in records if "peer" in r]) if peer else None,
            "peer_missing": sum("peer" not in r for r in records) if peer else None,
            "cpsat": summarize([r["cpsat"] for r in records if "cpsat" in r])
            if cpsat else None,
            "cpsat_missing": sum("cpsat" not in r for r in records) if cpsat else None,
            "published": PUBLISHED[name], "records": records}
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--sample", type=int, default=None,
                        help="instances per set, spread evenly (default: all)")
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--external", default=None,
                        help="public data folder (default ../shared/external)")
    parser.add_argument("--no-peer", dest="peer", action="store_false",
                        help="skip PyJobShop's CP-SAT on the same instances")
    parser.add_argument("--reproducible", action="store_true",
                        help="stop our search by its deterministic work budget (default: "
                             "use the whole time limit, as the peers do)")
    parser.add_argument("--wall-limit", type=float, default=None,
                        help="our search's hard wall-clock limit per instance (default: "
                             "the time limit, or with --reproducible a far safety net)")
    parser.add_argument("--no-cpsat", dest="cpsat", action="store_false",
                        help="skip the plain CP-SAT model on the same instances")
    parser.add_argument("--only", type=int, nargs="+", default=(), metavar="N",
                        help="only the instances of these numbers (J30_N, J60_N)")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    figures = run(external_dir(args.external), args.sets, args.sample,
                  time_limit=args.time_limit, workers=args.workers, seed=args.seed,
                  peer=args.peer, cpsat=args.cpsat, reproducible=args.reproducible,
                  only=args.only, wall_limit=args.wall_limit)
    for name, result in figures["sets"].items():
        for who in ("ours", "peer", "cpsat"):
            if result.get(who):
                print(f"{name} {who}: " + ", ".join(f"{k} {v}"
                                                    for k, v in result[who].items()))
        if "skipped" in result:
            print(f"{name}: skipped, {result['skipped']}")
    write_figures(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
