"""Plans: a fused schedule saved with the domain where it applies, and choosing one.

A plan file (``npu-plan/1``)::

    {"format": "npu-plan/1",
     "domain":   {"target": {"name": "hexagon-v75", "version": "sha256:<16 hex>"},
                  "tasks": {"g0": {"kind": "gemm", "dtype": "f16",
                                   "shapes": {"M": [512, 512], "N": [512, 512], ...},
                                   "equal": {"order": "mnk", "a": "A", ...}}},
                  "min_free_bytes": {"VTCM": 5242880}},
     "schedule": {npu-schedule/1},
     "cost":     {"path": "fused-interleaved", "makespan": ..., "launches": 1, ...},
     "fallback": {"path": "separate", "makespan": ..., "launches": 2, ...,
                  "preferred": false, "reason": "..."}}

The domain holds for a request when: the target has the plan's name and ``version`` (a
digest of the target description without ``meta``, so a changed cost or capacity is a
different version); the request has exactly the plan's tasks, each of the same kind and
``dtype``, every integer parameter inside its inclusive ``[min, max]`` range, and every
other string parameter equal (float parameters such as ``eps`` do not change a schedule
and are not compared); and at least ``min_free_bytes`` of each memory is free (the
highest ``offset + size`` the schedule uses).

``cost`` and ``fallback`` are the figures of :mod:`schedsearch.paths` (makespan with
overheads). A plan is made only with the fallback it replaces beside it; if the searched
schedule is not faster, ``fallback.preferred`` is true and :func:`select` runs the
fallback even inside the domain: a plan is never slower than its fallback.

A request (``npu-request/1``) names a workload (a bundled example or a file, relative to
the request file), optionally a target (default: the workload's) and the free bytes per
memory (default: all of it)::

    {"format": "npu-request/1", "workload": "gemm-rmsnorm-v75",
     "target": "hexagon-v75", "free_bytes": {"VTCM": 4194304}}
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from models import schema
from models.errors import InputError
from models.files import write_json_atomic
from models.formats import (
    Memory,
    Problem,
    Schedule,
    Target,
    schedule_from_dict,
    schedule_to_dict,
    target_to_dict,
)
from models.jsonio import json_path, load_json_file
from models.schema import PLAN_FORMAT, REQUEST_FORMAT
from models.workload import load_problem_input
from schedsearch.paths import (
    DEFAULT_OPTIONS,
    Comparison,
    PathResult,
    SolveOptions,
    Solver,
    fallback_path,
)

__all__ = ["PLAN_FORMAT", "REQUEST_FORMAT", "Plan", "Request", "Choice", "target_version",
           "domain_of", "domain_failures", "make_plan", "plan_to_dict", "plan_from_dict",
           "read_plans", "write_plan", "read_request", "select", "FALLBACK_PATHS"]

#: The paths a request can fall back to when no plan applies.
FALLBACK_PATHS = ("separate", "concurrent")


@dataclass(frozen=True, slots=True)
class Plan:
    """A schedule, the domain where it applies, its cost and its fallback's cost."""

    domain: dict[str, Any]
    schedule: Schedule
    cost: dict[str, Any]
    fallback: dict[str, Any]
    source: str = "<plan>"


@dataclass(frozen=True, slots=True)
class Request:
    """What a caller asks to run: a tiled problem, the target, the free bytes per memory."""

    problem: Problem
    target: Target
    free_bytes: dict[str, int]
    source: str = "<request>"


@dataclass(frozen=True, slots=True)
class Choice:
    """What :func:`select` decided: ``kind`` is ``plan`` or ``fallback``; ``plan`` is the
    plan whose domain held (also when that plan prefers its fallback).

    ``cost`` holds the figures of the path that runs (``path``, ``makespan`` with
    overheads, ``device_makespan``, ``overhead``, ``launches``, ``events``, ``barriers``,
    ``ddr_bytes``, ``peak_bytes``); ``reason`` says why this and not something else.
    """

    kind: str
    path: str
    cost: dict[str, Any]
    reason: str
    schedule: Schedule
    plan: Plan | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"choice": self.kind, "plan": self.plan.source if self.plan else None,
                "path": self.path, "reason": self.reason, "cost": self.cost}


# ----------------------------------------------------------------------------- domains
def target_version(target: Target) -> str:
    """A digest of the target description without ``meta``: what a plan was made for."""
    document = target_to_dict(replace(target, meta=None))
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _task_domain(kind: str, params: Mapping[str, Any]) -> dict[str, Any]:
    shapes = {k: [v, v] for k, v in params.items()
              if isinstance(v, int) and not isinstance(v, bool)}
    equal = {k: v for k, v in params.items() if isinstance(v, str) and k != "dtype"}
    domain: dict[str, Any] = {"kind": kind, "shapes": shapes, "equal": equal}
    if isinstance(params.get("dtype"), str):
        domain["dtype"] = params["dtype"]
    return domain


def domain_of(schedule: Schedule, extent_bytes: Mapping[str, int]) -> dict[str, Any]:
    """The narrowest domain of ``schedule``: its exact shapes, target and memory extent.

    Widen a shape range by editing the file once the schedule is known to serve it.
    """
    problem = schedule.problem
    return {"target": {"name": schedule.target.name,
                       "version": target_version(schedule.target)},
            "tasks": {name: _task_domain(task.kind, task.params or {})
                      for name, task in problem.tasks.items()},
            "min_free_bytes": {m: int(extent_bytes.get(m, 0)) for m in schedule.target.memories}}


def domain_failures(domain: Mapping[str, Any], request: Request) -> list[str]:
    """Every clause of ``domain`` that ``request`` breaks, as sentences (empty: it holds)."""
    failures: list[str] = []
    target = domain["target"]
    if target["name"] != request.target.name:
        failures.append(f"target {request.target.name} is not {target['name']}")
    elif target["version"] != target_version(request.target):
        failures.append(f"target {request.target.name} version "
                        f"{target_version(request.target)} is not {target['version']}")
    tasks = request.problem.tasks
    if set(tasks) != set(domain["tasks"]):
        failures.append(f"tasks {sorted(tasks)} are not {sorted(domain['tasks'])}")
    for name, want in domain["tasks"].items():
        if name not in tasks:
            continue
        task = tasks[name]
        params = task.params or {}
        if task.kind != want["kind"]:
            failures.append(f"task {name} is a {task.kind}, not a {want['kind']}")
            continue
        if "dtype" in want and params.get("dtype") != want["dtype"]:
            failures.append(f"task {name} dtype {params.get('dtype')} is not {want['dtype']}")
        for key, (lo, hi) in want["shapes"].items():
            value = params.get(key)
            if not isinstance(value, int) or not lo <= value <= hi:
                failures.append(f"task {name} {key}={value} is outside [{lo}, {hi}]")
        for key, value in want["equal"].items():
            if params.get(key) != value:
                failures.append(f"task {name} {key}={params.get(key)!r} is not {value!r}")
    for memory, need in domain["min_free_bytes"].items():
        free = request.free_bytes.get(memory, 0)
        if free < need:
            failures.append(f"{memory} has {free} bytes free, the plan needs {need}")
    return failures


# ----------------------------------------------------------------------------- making
def path_cost(result: PathResult) -> dict[str, Any]:
    """The figures a plan or a choice records for one path."""
    return {"path": result.name, "makespan": result.makespan,
            "device_makespan": result.device_makespan, "overhead": result.overhead,
            "launches": result.launches, "events": result.events,
            "barriers": result.barriers, "ddr_bytes": result.evaluation.ddr_bytes,
            "peak_bytes": dict(result.evaluation.peak_bytes), "legal": result.legal}


def make_plan(comparison: Comparison) -> Plan:
    """A plan from a comparison: path 4's schedule, against the faster of paths 1 and 2.

    Path 2 counts as a fallback only when its schedule is legal (uncontended): a plan
    must be able to run its fallback as written.
    """
    fused = comparison.path("fused-interleaved")
    candidates = [comparison.path("separate")]
    if comparison.path("concurrent").legal:
        candidates.append(comparison.path("concurrent"))
    fallback = min(candidates, key=lambda p: p.makespan)
    preferred = fallback.makespan <= fused.makespan
    reason = (f"{fallback.name} ({fallback.makespan}) is no slower than the fused schedule "
              f"({fused.makespan}): the plan runs the fallback" if preferred else
              f"the fused schedule ({fused.makespan}) beats {fallback.name} "
              f"({fallback.makespan})")
    return Plan(domain=domain_of(fused.schedule, fused.evaluation.extent_bytes),
                schedule=fused.schedule, cost=path_cost(fused),
                fallback={**path_cost(fallback), "preferred": preferred, "reason": reason,
                          "schedule": schedule_to_dict(fallback.schedule)})


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {"format": PLAN_FORMAT, "domain": plan.domain,
            "schedule": schedule_to_dict(plan.schedule), "cost": plan.cost,
            "fallback": plan.fallback}


def write_plan(plan: Plan, directory: str | os.PathLike[str]) -> Path:
    """Write ``plan`` as ``<problem name>.<target>.plan.json`` in ``directory``."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create the plan directory: {error.strerror}",
                         source=str(folder), rule="FILE") from None
    path = folder / f"{plan.schedule.problem.name}.{plan.schedule.target.name}.plan.json"
    write_json_atomic(path, plan_to_dict(plan))
    return path


# ----------------------------------------------------------------------------- reading
_COST_KEYS = ("path", "makespan", "device_makespan", "overhead", "launches", "events",
              "barriers", "ddr_bytes", "peak_bytes", "legal")


def _fail(source: str, path: str, message: str) -> InputError:
    return InputError(message, source=source, path=path, rule="FORMAT")


def plan_from_dict(document: Any, source: str = "<plan>") -> Plan:
    """Read an ``npu-plan/1`` document (module docstring; its shape is the schema
    ``models/schemas/npu-plan-1.json``); InputError names the JSON path."""
    schema.check(document, PLAN_FORMAT, source)
    for name, task in document["domain"]["tasks"].items():
        for key, (lo, hi) in task["shapes"].items():
            if lo > hi:
                where = json_path(json_path(json_path("$.domain.tasks", name), "shapes"), key)
                raise _fail(source, where, f"a shape range is [min, max] with min <= max, "
                                           f"got [{lo}, {hi}]")
    schedule = _embedded(lambda: schedule_from_dict(document["schedule"], source), "$.schedule")
    fallback = document["fallback"]
    _embedded(lambda: schedule_from_dict(fallback["schedule"], source), "$.fallback.schedule")
    return Plan(domain=document["domain"], schedule=schedule, cost=document["cost"],
                fallback=fallback, source=source)


def _embedded(read: Any, root: str) -> Any:
    try:
        return read()
    except InputError as error:
        raise InputError(error.message, source=error.source, path=root + error.path[1:],
                         rule=error.rule) from None


def read_plans(directory: str | os.PathLike[str]) -> list[Plan]:
    """Every ``*.plan.json`` in ``directory``, by file name; a bad file is an InputError."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InputError("not a directory of plans", source=str(folder), rule="FILE")
    return [plan_from_dict(load_json_file(path), str(path))
            for path in sorted(folder.glob("*.plan.json"))]


def read_request(path: str | os.PathLike[str]) -> Request:
    """Read an ``npu-request/1`` file and tile its workload (module docstring)."""
    source = str(path)
    d = load_json_file(path)
    schema.check(d, REQUEST_FORMAT, source)
    workload = d["workload"]
    beside = Path(source).parent / workload
    if beside.is_file():
        workload = str(beside)
    problem, target = load_problem_input(workload, d.get("target"))
    free = {m: mem.capacity_bytes for m, mem in target.memories.items()}
    for memory, amount in d.get("free_bytes", {}).items():
        if memory not in target.memories:
            raise _fail(source, json_path("$.free_bytes", memory),
                        f"target {target.name} has no memory {memory!r}")
        free[memory] = min(amount, target.memories[memory].capacity_bytes)
    return Request(problem, target, free, source)


# ----------------------------------------------------------------------------- selecting
def select(plans: Sequence[Plan], request: Request, *, fallback: str = "separate",
           solver: Solver | None = None,
           options: SolveOptions = DEFAULT_OPTIONS) -> Choice:
    """A plan whose domain holds for ``request``, else the ``fallback`` path, with its cost.

    Among plans whose domain holds, the one whose run (its schedule, or its fallback when
    the plan prefers that) is fastest wins. When none holds, the fallback path is built
    for the request's own problem on the target with only the free memory (its cost:
    launches, events, DDR bytes, memory), and the reason lists why each plan failed.
    """
    if fallback not in FALLBACK_PATHS:
        raise ValueError(f"fallback is one of {FALLBACK_PATHS}")
    failures = {plan.source: domain_failures(plan.domain, request) for plan in plans}
    holding = [plan for plan in plans if not failures[plan.source]]
    if holding:
        plan = min(holding, key=_run_makespan)
        if plan.fallback["preferred"]:
            schedule = schedule_from_dict(plan.fallback["schedule"], plan.source)
            cost = {k: plan.fallback[k] for k in _COST_KEYS}
            return Choice("fallback", plan.fallback["path"], cost,
                          f"plan {plan.source} applies but prefers its fallback: "
                          f"{plan.fallback['reason']}", schedule, plan)
        return Choice("plan", plan.cost["path"], dict(plan.cost),
                      f"plan {plan.source} applies: {plan.fallback['reason']}",
                      plan.schedule, plan)
    reasons = [f"{source}: {'; '.join(found)}" for source, found in failures.items()]
    reason = ("no plan applied (" + " | ".join(reasons) + ")" if reasons
              else "no plans to choose from")
    free_target = replace(request.target, memories={
        m: Memory(request.free_bytes.get(m, mem.capacity_bytes), mem.alignment_bytes)
        for m, mem in request.target.memories.items()})
    result = fallback_path(request.problem, free_target, fallback, solver=solver,
                           options=options)
    schedule = replace(result.schedule, target=request.target)
    return Choice("fallback", fallback, path_cost(result), reason, schedule)


def _run_makespan(plan: Plan) -> int:
    side = plan.fallback if plan.fallback["preferred"] else plan.cost
    return int(side["makespan"])
