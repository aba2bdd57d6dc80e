"""Three ways to serve a mix, each a legal schedule of the mix's problem and its overheads.

- ``sequential``: the requests one after another in file order, each task a separate
  kernel (:func:`schedsearch.paths.separate_kernels`, in the order this module gives it).
- ``chunked``: what serving systems do on GPUs (Sarathi-Serve's chunked prefill): each
  prefill in chunks of :data:`CHUNK_TOKENS` tokens, and after each chunk every decode
  step still pending, separate kernels. A decode request is one step, so every decode
  runs after the first chunk of the first prefill; the remaining chunks follow.
- ``searched``: one fused entry, the requests' tiles interleaved by the search
  (:func:`schedsearch.engine.search.solve`, which minimises the makespan), each prefill
  whole or in chunks of :data:`SEARCH_CHUNKS` tokens: the shortest is kept. The two
  kernel schedules are fused schedules too (one entry, their events paid): if one of
  them is shorter, it is kept and the note says so: ``searched`` is never slower than
  a kernel schedule run as one entry (nor, then, than the kernel policy itself whenever
  that entry's events cost less than the launches it saves, as in every mix measured).

Overheads, as in :mod:`schedsearch.paths`: paid serially by the control processor, each
a *charge* at a device time: a kernel's launch when its first op starts, the fused
entry's launch at 0, and an event per cross-task dependency whose ops share no unit
(:func:`schedsearch.paths.cross_task_event_edges`) when its second op starts.

Time: each fused search gets the whole ``time_limit``; the kernels of a kernel policy
share it in proportion to their ops (at least :data:`MIN_KERNEL_SECONDS` each). A kernel
that both kernel policies run (a decode request's task) is solved once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from models.cost import overheads
from models.formats import Problem, Schedule, Target
from models.requests import MixProblem, Part, mix_problem
from schedsearch.engine.slicing import cross_task_edges, task_order
from schedsearch.paths import SolveOptions, cross_task_event_edges, separate_kernels

__all__ = ["POLICIES", "CHUNK_TOKENS", "SEARCH_CHUNKS", "MIN_KERNEL_SECONDS", "PolicyRun",
           "Search", "run_policies", "sequential_parts", "chunked_parts", "fused_charges",
           "total"]

POLICIES = ("sequential", "chunked", "searched")
#: The chunk of the ``chunked`` policy (the issue's figure; Sarathi-Serve's chunks are
#: token budgets of a few hundred to a few thousand on GPUs, where a layer is faster).
CHUNK_TOKENS = 64
#: Chunk sizes the ``searched`` policy tries besides the whole prefill.
SEARCH_CHUNKS = (128, 64)
#: The least time a separate kernel's search gets: a 14-task layer per request makes tens
#: of kernels, most of them a few ops that the search finishes in far less.
MIN_KERNEL_SECONDS = 0.05

#: ``(problem, target, seconds) -> schedule``: the search, as the policies call it.
Search = Callable[[Problem, Target, float], Schedule]
#: ``(device time, ns)``: an overhead paid serially when the device reaches that time.
Charge = tuple[int, int]


@dataclass(frozen=True, slots=True)
class PolicyRun:
    """One policy's schedule (of ``mix_problem.problem``), its overhead charges, how many
    launches and events they are, and a note (which candidate ``searched`` kept)."""

    name: str
    mix_problem: MixProblem
    schedule: Schedule
    charges: tuple[Charge, ...]
    launches: int
    events: int
    note: str = ""


def sequential_parts(mp: MixProblem) -> list[Part]:
    """The parts in file order (a request's chunks in order)."""
    return list(mp.parts)


def chunked_parts(mp: MixProblem) -> list[Part]:
    """Each prefill part, then every decode step still pending (module docstring)."""
    phase = {r.name: r.phase for r in mp.mix.requests}
    pending = [p for p in mp.parts if phase[p.request] == "decode"]
    order: list[Part] = []
    for part in mp.parts:
        if phase[part.request] == "prefill":
            order += [part, *pending]
            pending = []
    return order + pending


def _task_order(mp: MixProblem, target: Target, part_order: Sequence[Part]) -> list[str]:
    """The tasks part by part in ``part_order``, each part's in dependency order;
    ValueError if that breaks a dependency between tasks (a policy's bug)."""
    tasks = task_order(mp.problem, target)
    order = [t for part in part_order for t in tasks if mp.part_of[t] == part]
    position = {task: i for i, task in enumerate(order)}
    for a, b in cross_task_edges(mp.problem):
        first, then = mp.problem.ops[a].task, mp.problem.ops[b].task
        if position[first] > position[then]:
            raise ValueError(f"task order breaks the dependency {first} -> {then}")
    return order


def _kernel_charges(schedule: Schedule, launch_ns: int) -> tuple[Charge, ...]:
    """One launch per task, when its kernel's first op starts."""
    first: dict[str, int] = {}
    for name, placement in schedule.ops.items():
        task = schedule.problem.ops[name].task
        first[task] = min(first.get(task, placement.start), placement.start)
    return tuple(sorted((start, launch_ns) for start in first.values()))


def fused_charges(schedule: Schedule, target: Target) -> tuple[Charge, ...]:
    """The fused entry's launch at 0 and an event per cross-task dependency whose ops share
    no unit, when its second op starts."""
    costs = overheads(target)
    events = [(schedule.ops[b].start, costs.event_ns)
              for _, b in cross_task_event_edges(schedule)]
    return ((0, costs.launch_ns), *sorted(events))


class _KernelSolver:
    """The :data:`schedsearch.paths.Solver` that separate kernels call: a share of the
    time limit by ops, and each kernel solved once for both kernel policies."""

    def __init__(self, search: Search, seconds_per_op: float) -> None:
        self.search = search
        self.seconds_per_op = seconds_per_op
        self.solved: dict[str, tuple[Problem, Schedule]] = {}

    def __call__(self, sub: Problem, target: Target, **_options: Any) -> Schedule:
        (task,) = sub.tasks
        known = self.solved.get(task)
        if known is not None and known[0] == sub:
            return known[1]
        seconds = max(MIN_KERNEL_SECONDS, self.seconds_per_op * len(sub.ops))
        schedule = self.search(sub, target, seconds)
        self.solved[task] = (sub, schedule)
        return schedule


def _kernel_policy(name: str, mp: MixProblem, target: Target, parts: Sequence[Part],
                   solver: _KernelSolver, options: SolveOptions) -> PolicyRun:
    order = _task_order(mp, target, parts)
    schedule, _ = separate_kernels(mp.problem, target, solver, options, order)
    charges = _kernel_charges(schedule, overheads(target).launch_ns)
    return PolicyRun(name, mp, schedule, charges, launches=len(charges), events=0)


def _fused(mp: MixProblem, schedule: Schedule, target: Target) -> PolicyRun:
    charges = fused_charges(schedule, target)
    return PolicyRun("searched", mp, schedule, charges, launches=1, events=len(charges) - 1)


def total(run: PolicyRun) -> int:
    """The policy's makespan: the device's plus every overhead."""
    return run.schedule.makespan + sum(ns for _, ns in run.charges)


def _chunkings(mp: MixProblem) -> list[int | None]:
    """Whole prefills, then each of :data:`SEARCH_CHUNKS` that splits some prefill."""
    longest = max((r.tokens for r in mp.mix.requests if r.phase == "prefill"), default=0)
    return [None, *(k for k in SEARCH_CHUNKS if k < longest)]


def run_policies(whole: MixProblem, target: Target, search: Search,
                 options: SolveOptions, max_ops: int) -> dict[str, PolicyRun]:
    """The three policies of the module docstring on the mix of ``whole`` (its problem
    with whole prefills), in :data:`POLICIES` order."""
    mix = whole.mix
    chunked_mp = mix_problem(mix, target, CHUNK_TOKENS, max_ops)
    solver = _KernelSolver(search, options.time_limit / max(1, len(whole.problem.ops)))
    runs = {"sequential": _kernel_policy("sequential", whole, target, sequential_parts(whole),
                                         solver, options),
            "chunked": _kernel_policy("chunked", chunked_mp, target,
                                      chunked_parts(chunked_mp), solver, options)}
    candidates: list[tuple[str, PolicyRun]] = []
    for chunk in _chunkings(whole):
        mp = whole if chunk is None else mix_problem(mix, target, chunk, max_ops)
        label = "whole prefills" if chunk is None else f"prefill in chunks of {chunk}"
        schedule = search(mp.problem, target, options.time_limit)
        candidates.append((label, _fused(mp, schedule, target)))
    for kernels in runs.values():
        candidates.append((f"the {kernels.name} kernels' schedule, fused",
                           _fused(kernels.mix_problem, kernels.schedule, target)))
    label, best = min(candidates, key=lambda c: total(c[1]))  # the first of equals
    tried = "; ".join(f"{what} {total(run)}" for what, run in candidates)
    runs["searched"] = replace(best, note=f"kept {label} (tried: {tried})")
    return runs
