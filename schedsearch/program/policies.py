"""Four runtime policies, each a :class:`~schedsearch.program.simulate.RunPlan` of one problem.

- ``program``: the program itself: static queues, a wait costs ``event_ns`` after the op
  it waits for ends; one launch (``launch_ns``) before anything starts.
- ``barrier``: one entry, tasks in sequence: the problem solved with a barrier between
  tasks (``granularity="task"``, as path 3 of :mod:`schedsearch.paths`), lowered, and a
  barrier node between consecutive tasks that costs ``barrier_ns``; waits the barrier
  implies are dropped (they cost nothing).
- ``dynamic``: a ready-task runtime over the program's schedule: no queues; an op is
  ready once every order its schedule needs (:mod:`.orders`) is met, plus one dispatch
  (``dispatch_ns``), and starts on any free unit of its lane kinds, by priority (its
  start in the schedule): a ready op is never stuck behind a stalled one.
- ``separate``: separate kernels one after another (path 1 of :mod:`schedsearch.paths`):
  each task solved alone, lowered, and each kernel launched (``launch_ns``) once the
  previous one has ended.

Every cost comes from the target's ``costs.overheads`` (:func:`models.cost.overheads`);
the bundled targets state each as an assumption in ``meta.sources``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from models.cost import Overheads, overheads
from models.errors import InputError
from models.formats import Schedule
from schedsearch.engine.slicing import task_order
from schedsearch.paths import SolveOptions, separate_kernels
from schedsearch.program.lower import lower
from schedsearch.program.model import Program
from schedsearch.program.orders import needed_orders
from schedsearch.program.reach import Cycle, Reach
from schedsearch.program.simulate import RunPlan

__all__ = ["Policy", "PolicyPlan", "plan_policy", "program_plan"]


class Policy(StrEnum):
    PROGRAM = "program"
    BARRIER = "barrier"
    DYNAMIC = "dynamic"
    SEPARATE = "separate"


@dataclass(frozen=True, slots=True)
class PolicyPlan:
    """A policy's plan, the static makespan of the schedule it runs, and its queues (node
    indices; empty for the dynamic runtime) for the share of time waiting on events."""

    policy: Policy
    plan: RunPlan
    static_makespan: int
    queues: list[list[int]]


def _base(schedule: Schedule) -> dict[str, Any]:
    """Per-op fields every plan shares (:class:`RunPlan`'s keywords): names, modelled
    duration, lane kind, draws, units held, capacities."""
    target, problem = schedule.target, schedule.problem
    names = list(schedule.ops)
    lanes = list(target.lanes)
    budgets = list(target.budgets)
    duration = np.zeros(len(names), dtype=np.int64)
    draws = np.zeros((len(names), len(budgets)))
    units = np.zeros((len(names), len(lanes)), dtype=np.int64)
    kind: list[str | None] = []
    for i, name in enumerate(names):
        placement = schedule.ops[name]
        mode = problem.ops[name].modes[placement.mode]
        duration[i] = mode.duration
        kind.append(next(iter(mode.lanes), None))
        for b, budget in enumerate(budgets):
            draws[i, b] = mode.budgets.get(budget, 0)
        for k, lane in enumerate(lanes):
            units[i, k] = mode.lanes.get(lane, 0)
    return {"names": names, "ops": len(names), "duration": duration, "kind": kind,
            "draws": draws, "capacity": np.array([float(target.budgets[b]) for b in budgets]),
            "lanes": lanes, "units": units,
            "unit_counts": np.array([target.lanes[k] for k in lanes], dtype=np.int64)}


def _static(program: Program, costs: Overheads, phases: Sequence[Sequence[str]] = (),
            phase_cost: int = 0, first_release: int | None = None) -> tuple[RunPlan,
                                                                              list[list[int]]]:
    """Queues and waits of ``program``, with a virtual node between consecutive phases
    that costs ``phase_cost``; waits from an earlier phase to a later one are dropped."""
    base = _base(program.schedule)
    names: list[str] = base["names"]
    index = {name: i for i, name in enumerate(names)}
    phase_of = {op: k for k, ops in enumerate(phases) for op in ops}
    queues = [[index[op] for op in ops] for ops in program.queues.values()]
    src, dst, delay = [], [], []
    for queue in queues:
        src += queue[:-1]
        dst += queue[1:]
        delay += [0] * (len(queue) - 1)
    for before, after in program.wait_edges():
        if phase_of.get(before, 0) >= phase_of.get(after, 0):
            src.append(index[before])
            dst.append(index[after])
            delay.append(costs.event_ns)
    n = len(names)
    for k in range(len(phases) - 1):
        node = n + k
        names.append(f"<phase {k + 1} -> {k + 2}>")
        base["kind"].append(None)
        src += [index[op] for op in phases[k]]
        dst += [node] * len(phases[k])
        delay += [0] * len(phases[k])
        src += [node] * len(phases[k + 1])
        dst += [index[op] for op in phases[k + 1]]
        delay += [phase_cost] * len(phases[k + 1])
    extra = len(names) - n
    release = np.full(len(names), costs.launch_ns if first_release is None else first_release)
    release[n:] = 0
    plan = RunPlan(
        names=names, ops=n, duration=np.r_[base["duration"], np.zeros(extra, np.int64)],
        kind=base["kind"], release=release, src=np.asarray(src, np.int64),
        dst=np.asarray(dst, np.int64), delay=np.asarray(delay, float),
        draws=np.vstack([base["draws"], np.zeros((extra, base["draws"].shape[1]))]),
        capacity=base["capacity"], lanes=base["lanes"],
        units=np.vstack([base["units"], np.zeros((extra, len(base["lanes"])), np.int64)]),
        unit_counts=base["unit_counts"])
    try:
        Reach(len(names), [], list(zip(src, dst, strict=True)))
    except Cycle as cycle:
        raise InputError("the plan's orders form a cycle through "
                         + " -> ".join(names[i] for i in cycle.nodes[:6]),
                         source="<program>", rule="DEADLOCK") from None
    return plan, queues


def program_plan(program: Program, costs: Overheads) -> PolicyPlan:
    plan, queues = _static(program, costs)
    return PolicyPlan(Policy.PROGRAM, plan, program.schedule.makespan, queues)


def _dynamic_plan(program: Program, costs: Overheads) -> PolicyPlan:
    schedule = program.schedule
    base = _base(schedule)
    index = {name: i for i, name in enumerate(base["names"])}
    pairs = sorted({(index[o.before], index[o.after]) for o in needed_orders(schedule)})
    src = np.asarray([a for a, _ in pairs], np.int64)
    dst = np.asarray([b for _, b in pairs], np.int64)
    plan = RunPlan(**base, release=np.full(base["ops"], costs.launch_ns + costs.dispatch_ns),
                src=src, dst=dst, delay=np.full(len(pairs), float(costs.dispatch_ns)),
                dynamic=True,
                priority=np.array([schedule.ops[n].start for n in base["names"]], float))
    return PolicyPlan(Policy.DYNAMIC, plan, schedule.makespan, [])


def _phases_by_start(schedule: Schedule) -> list[list[str]]:
    """Ops grouped by task, tasks in order of their first start."""
    groups: dict[str, list[str]] = {}
    for name in sorted(schedule.ops, key=lambda n: schedule.ops[n].start):
        groups.setdefault(schedule.problem.ops[name].task, []).append(name)
    return list(groups.values())


def _barrier_plan(program: Program, costs: Overheads, options: SolveOptions) -> PolicyPlan:
    from schedsearch.engine.search import solve

    schedule = program.schedule
    tasked = solve(schedule.problem, schedule.target, granularity="task", **options.search())
    lowered = lower(tasked)
    plan, queues = _static(lowered, costs, _phases_by_start(tasked), costs.barrier_ns)
    return PolicyPlan(Policy.BARRIER, plan, tasked.makespan, queues)


def _separate_plan(program: Program, costs: Overheads, options: SolveOptions) -> PolicyPlan:
    from schedsearch.engine.search import solve

    schedule = program.schedule
    apart, _ = separate_kernels(schedule.problem, schedule.target, solve, options)
    phases = [[n for n in apart.ops if apart.problem.ops[n].task == task]
              for task in task_order(apart.problem, schedule.target)]
    plan, queues = _static(lower(apart), costs, [p for p in phases if p], costs.launch_ns)
    return PolicyPlan(Policy.SEPARATE, plan, apart.makespan, queues)


def plan_policy(program: Program, policy: Policy, options: SolveOptions,
                costs: Overheads | None = None) -> PolicyPlan:
    """The plan of ``policy`` for ``program``'s problem; the barrier and separate
    policies solve the problem again within ``options`` (their own schedules).
    ``costs`` replaces the target's overheads (to ask what a free dispatch would give)."""
    costs = costs if costs is not None else overheads(program.schedule.target)
    if policy is Policy.PROGRAM:
        return program_plan(program, costs)
    if policy is Policy.DYNAMIC:
        return _dynamic_plan(program, costs)
    if policy is Policy.BARRIER:
        return _barrier_plan(program, costs, options)
    return _separate_plan(program, costs, options)
