"""Three ways to serve a mix, each a legal schedule of the mix's problem and its overheads.

- ``sequential``: the requests one after another in file order, each task a separate
  kernel (:func:`schedsearch.paths.separate_kernels`, in the order this module gives it).
- ``chunked``: what serving systems do on GPUs (Sarathi-Serve's chunked prefill): each
  prefill in chunks of :data:`CHUNK_TOKENS` tokens, and after each chunk every decode
  step still pending, separate kernels. A decode request is one step, so every decode
  runs after the first chunk of the first prefill; the remaining chunks follow.
- ``searched``: one fused entry, the requests' tiles interleaved by the search, each
  prefill whole or in chunks of :data:`SEARCH_CHUNKS` tokens. Per chunking, the makespan
  search (:func:`schedsearch.engine.search.solve`); with deadlines or ``weighted``, then
  the per-request search (:func:`schedsearch.engine.deadlines.search_objectives`) from
  that schedule, the deadline pass, and the kernel schedule of the same problem. The two
  kernel schedules are fused candidates too (one entry, their events paid), and the two
  kernel policies' own runs are its floor (legal schedules of the same problems). The
  candidate kept is the best by (total lateness, objective, makespan), each figure with
  the overheads (:mod:`.figures`): so ``searched`` never loses to either kernel policy
  by that key (without deadlines it is never slower than either; with them never later
  in total, so it meets them all when a kernel policy does).

Overheads, as in :mod:`schedsearch.paths`: paid serially by the control processor, each
a *charge* at a device time: a kernel's launch when its first op starts, the fused
entry's launch at 0, and an event per cross-task dependency whose ops share no unit
(:func:`schedsearch.paths.cross_task_event_edges`) when its second op starts. The
per-request search gets device deadlines (the request's deadline minus the entry's
launch); events are known only from its answer, so a request they make late gets its
device deadline tightened by the events charged before its end, and the search goes on
from that answer (at most :data:`TIGHTENINGS` times).

Time: the allotment's limit (:mod:`schedsearch.allotment`, started when the command
began) is the budget of the whole command. The separate kernels are solved once per
content (:class:`~schedsearch.mix.kernels.KernelCache`: identical kernels, such as every
decode of one family and past, share one search) and together weigh
:data:`KERNEL_SHARE` of the limit, each distinct kernel in proportion to its ops; the
fused searches weigh the rest equally, per chunking, half for the makespan search and
half for the per-request search when there is one (a third of that half per round, see
:data:`TIGHTENINGS`). Each search is granted its weight's part of what is left as it
begins (of the work, so a reproducible run repeats, and of the wall time, so the command
ends near its limit whatever the load); a tightening round that does not run gives its
weight back to the searches after it. Using the time (not reproducible), once the wall
time for searches is spent the chunked candidates not yet searched are skipped (the note
says so): whole prefills are always tried. A search whose grant cannot pay for its fixed
cost gets the list schedule alone, and a fused candidate whose grant cannot pay even for
that is not built when no per-request search starts from it (:mod:`~schedsearch.mix.cuts`;
the notes say so); the tail kept for
scoring is at least what the checker takes on the three policies' schedules.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from models.cost import overheads
from models.formats import Problem, Schedule, Target
from models.heap import cycles_uncollected
from models.requests import MixProblem, Part, chunkable, mix_problem
from schedsearch.allotment import Allotment, Grant
from schedsearch.engine.deadlines import (
    PROVED,
    DeadlinesMissed,
    Group,
    ObjectiveAnswer,
    Objectives,
    unmeetable_groups,
)
from schedsearch.engine.slicing import cross_task_edges
from schedsearch.mix.cuts import (
    Cuts,
    FusedCut,
    list_cost,
    list_schedule_only,
    scoring_cost,
    search_cost,
)
from schedsearch.mix.kernels import KernelCache, MixKernels
from schedsearch.paths import SolveOptions, cross_task_event_edges, separate_kernels
from schedsearch.wording import counted

__all__ = ["POLICIES", "CHUNK_TOKENS", "SEARCH_CHUNKS", "KERNEL_SHARE", "TIGHTENINGS",
           "PolicyRun", "Tried", "Search", "ObjectiveSearch", "Goal", "MAKESPAN", "run_policies",
           "sequential_parts", "chunked_parts", "fused_charges", "total", "request_ends",
           "objectives_of"]

POLICIES = ("sequential", "chunked", "searched")
#: The chunk of the ``chunked`` policy (the issue's figure; Sarathi-Serve's chunks are
#: token budgets of a few hundred to a few thousand on GPUs, where a layer is faster).
CHUNK_TOKENS = 64
#: Chunk sizes the ``searched`` policy tries besides the whole prefill.
SEARCH_CHUNKS = (128, 64)
#: The share of the time limit the separate kernels of both kernel policies get together:
#: a 14-task layer per request makes tens of kernels, most of them a few ops that the
#: list scheduler settles at once.
KERNEL_SHARE = 0.25
#: How many times the per-request search tightens device deadlines that events broke.
TIGHTENINGS = 2

#: ``(problem, target, grant) -> schedule``: the search, as the policies call it, within
#: its part of the command's limit.
Search = Callable[[Problem, Target, Grant], Schedule]
#: ``(problem, target, objectives, starts by name, grant) -> answer``: the per-request
#: search (:func:`schedsearch.engine.deadlines.search_objectives`).
ObjectiveSearch = Callable[[Problem, Target, Objectives, dict[str, Schedule], Grant],
                           ObjectiveAnswer]


@dataclass(frozen=True, slots=True)
class Goal:
    """What ``searched`` optimises after the deadlines (``makespan`` or ``weighted``), and
    whether deadlines are soft (least total lateness) or hard (refused when missed)."""

    objective: str = "makespan"
    soft_deadlines: bool = False


#: The plain goal: hard deadlines (if any), then the makespan.
MAKESPAN = Goal()
#: ``(device time, ns)``: an overhead paid serially when the device reaches that time.
Charge = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Tried:
    """One candidate ``searched`` weighed: what it is, its chunk (None: whole prefills),
    its makespan with overheads and its total lateness (ns)."""

    label: str
    chunk: int | None
    makespan: int
    lateness: int


@dataclass(frozen=True, slots=True)
class PolicyRun:
    """One policy's schedule (of ``mix_problem.problem``), its overhead charges, how many
    launches and events they are, a note (which candidate ``searched`` kept) and the
    candidates it weighed (``searched`` only)."""

    name: str
    mix_problem: MixProblem
    schedule: Schedule
    charges: tuple[Charge, ...]
    launches: int
    events: int
    note: str = ""
    tried: tuple[Tried, ...] = ()


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


def _task_order(mp: MixProblem, part_order: Sequence[Part]) -> list[str]:
    """The tasks part by part in ``part_order``, each part's in problem order (the order
    the operator library emits a layer's tasks in, a dependency order); ValueError if
    that breaks a dependency between tasks (a policy's bug). Why not
    :func:`schedsearch.engine.slicing.task_order`: it derives every hazard of the whole
    mix to order tasks whose order is known (15 s of a 4,174-op mix's run)."""
    order = [t for part in part_order for t in mp.problem.tasks if mp.part_of[t] == part]
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


def _kernel_policy(name: str, mp: MixProblem, kernels: MixKernels, target: Target,
                   parts: Sequence[Part], cache: KernelCache, cuts: Cuts,
                   options: SolveOptions) -> PolicyRun:
    order = _task_order(mp, parts)
    schedule, _ = separate_kernels(mp.problem, target, cache.solver(kernels), options, order,
                                   kernels.restricted)
    charges = _kernel_charges(schedule, overheads(target).launch_ns)
    distinct = set(kernels.keys.values())
    listed = len(distinct & cuts.listed_kernels)
    note = "" if not listed else (
        f"{listed} of its {counted(len(distinct), 'distinct kernel')} list-scheduled only "
        f"(the bound and the search skipped: their part of the time limit could not pay "
        f"for them)")
    return PolicyRun(name, mp, schedule, charges, launches=len(charges), events=0, note=note)


def _fused(mp: MixProblem, schedule: Schedule, target: Target) -> PolicyRun:
    charges = fused_charges(schedule, target)
    return PolicyRun("searched", mp, schedule, charges, launches=1, events=len(charges) - 1)


def total(run: PolicyRun) -> int:
    """The policy's makespan: the device's plus every overhead."""
    return run.schedule.makespan + sum(ns for _, ns in run.charges)


def _chunkings(mp: MixProblem) -> list[int | None]:
    """Whole prefills, then each of :data:`SEARCH_CHUNKS` that splits some prefill (of a
    bundled family: an ONNX prefill runs whole, :mod:`models.requests`)."""
    longest = max((r.tokens for r in mp.mix.requests if chunkable(r)), default=0)
    return [None, *(k for k in SEARCH_CHUNKS if k < longest)]


def request_ends(run: PolicyRun) -> dict[str, int]:
    """Each request's end (ns from the start of the mix): the largest end of its ops plus
    the overheads charged strictly before it, in file order."""
    schedule, mp = run.schedule, run.mix_problem
    device_end: dict[str, int] = {}
    for name, placement in schedule.ops.items():
        request = mp.part_of[schedule.problem.ops[name].task].request
        device_end[request] = max(device_end.get(request, 0), placement.end)
    return {r.name: device_end[r.name] + sum(ns for at, ns in run.charges
                                             if at < device_end[r.name])
            for r in mp.mix.requests}


@dataclass(frozen=True, slots=True)
class _Weighed:
    """A run's late requests (how late each is, ns) and its key (total lateness,
    objective, makespan; overheads included), from one pass over its request ends."""

    late: dict[str, int]
    key: tuple[int, float, int]


def _weigh(run: PolicyRun, goal: Goal) -> _Weighed:
    """``run`` weighed by ``goal`` (:class:`_Weighed`)."""
    ends = request_ends(run)
    requests = run.mix_problem.mix.requests
    late = {r.name: ends[r.name] - r.deadline_ns for r in requests
            if r.deadline_ns is not None and ends[r.name] > r.deadline_ns}
    objective = (total(run) if goal.objective == "makespan" else
                 sum(r.weight * ends[r.name] for r in requests))
    return _Weighed(late, (sum(late.values()), objective, total(run)))


def objectives_of(mp: MixProblem, goal: Goal, launch_ns: int,
                  tightened: dict[str, int] | None = None) -> Objectives:
    """The requests of ``mp`` as completion groups: device deadlines (the deadline minus
    the fused entry's launch and any ``tightened`` amount), weights, ``goal``."""
    tightened = tightened or {}
    groups = tuple(Group(r.name, frozenset(t for t, part in mp.part_of.items()
                                           if part.request == r.name),
                         None if r.deadline_ns is None
                         else r.deadline_ns - launch_ns - tightened.get(r.name, 0),
                         r.weight)
                   for r in mp.mix.requests)
    return Objectives(groups, goal.objective, goal.soft_deadlines)


def _spent(allotment: Allotment) -> bool:
    """True once a search using the time has no wall time left (only the tail kept for
    scoring): a chunking not yet searched is then skipped, and with it its searches'
    fixed costs (bound, list schedule, deadline pass), which no grant can cut. Never when
    reproducible: the candidates weighed must not depend on the machine's load."""
    budget = allotment.time_budget
    return not budget.reproducible and budget.wall_left() <= allotment.tail


def _release(allotment: Allotment, weight: float) -> None:
    """Give the weight of planned searches that will not run back to those after them."""
    allotment.plan(max(0.0, allotment.planned - weight))


def _per_request(mp: MixProblem, target: Target, goal: Goal, starts: dict[str, Schedule],
                 weight: float, allotment: Allotment, search: ObjectiveSearch
                 ) -> tuple[PolicyRun, str]:
    """The per-request search on ``mp`` from ``starts`` (``weight`` in ``allotment``, a
    part per round), its device deadlines tightened where events made a request late
    (module docstring), and the search's note; DeadlinesMissed if proved."""
    launch = overheads(target).launch_ns
    tightened: dict[str, int] = {}
    per_round = weight / (1 + TIGHTENINGS)
    rounds_left = TIGHTENINGS
    try:
        answer = search(mp.problem, target, objectives_of(mp, goal, launch), starts,
                        allotment.grant(per_round))
    except DeadlinesMissed:
        _release(allotment, per_round * rounds_left)
        raise
    run, note = _fused(mp, answer.schedule, target), answer.note
    weighed = _weigh(run, goal)
    while rounds_left:
        if answer.lateness or not weighed.late:
            break  # late on the device already, or on time
        for name, by in weighed.late.items():
            tightened[name] = tightened.get(name, 0) + by
        rounds_left -= 1
        try:
            answer = search(mp.problem, target, objectives_of(mp, goal, launch, tightened),
                            {"answer before": answer.schedule}, allotment.grant(per_round))
        except DeadlinesMissed:  # tightened past what can be met: keep the answer found
            break
        tighter = _fused(mp, answer.schedule, target)
        weighed_tighter = _weigh(tighter, goal)
        if weighed_tighter.key < weighed.key:
            run, note = tighter, f"{answer.note}, deadlines tightened by events"
            weighed = weighed_tighter
    _release(allotment, per_round * rounds_left)
    return run, note


def _refuse_proved(problems: list[MixProblem], target: Target, goal: Goal) -> None:
    """DeadlinesMissed (proved) before any search, when hard deadlines are proved
    unmeetable (:func:`unmeetable_groups`) on every chunking the search may use."""
    if goal.soft_deadlines or not any(r.deadline_ns is not None
                                      for r in problems[0].mix.requests):
        return
    launch = overheads(target).launch_ns
    cores = []
    for mp in problems:
        core = unmeetable_groups(mp.problem, target, objectives_of(mp, goal, launch))
        if not core:
            return
        cores.append(core)
    names = [r.name for r in problems[0].mix.requests if any(r.name in c for c in cores)]
    raise DeadlinesMissed(names, True, PROVED, problems[0].mix.source)


def _distinct_kernel_ops(kernels: Sequence[MixKernels]) -> int:
    """The ops of the kernels the kernel policies will solve: one per content key."""
    return sum({key: ops for k in kernels for key, ops in k.distinct_ops().items()}.values())


def _searched_or_listed(problem: Problem, target: Target, search: Search, grant: Grant,
                        reproducible: bool) -> tuple[Schedule, bool]:
    """``search`` on ``problem`` within ``grant``, or, when the grant cannot pay for a
    search's fixed cost (:func:`search_cost`), the list schedule alone; and whether it was
    the list schedule alone."""
    if grant.time_limit < search_cost(problem):
        return list_schedule_only(problem, target, grant, reproducible=reproducible), True
    return search(problem, target, grant), False


def run_policies(whole: MixProblem, target: Target, search: Search,
                 options: SolveOptions, max_ops: int, goal: Goal = MAKESPAN,
                 objective_search: ObjectiveSearch | None = None,
                 allotment: Allotment | None = None) -> dict[str, PolicyRun]:
    """The three policies of the module docstring on the mix of ``whole`` (its problem
    with whole prefills), in :data:`POLICIES` order, every search within its part of
    ``allotment`` (default: ``options.allotment``, else ``options.time_limit`` counted
    from now). With hard deadlines that ``searched`` misses, DeadlinesMissed names the
    requests: before any search when it is proved on every chunking that they cannot all
    be met, else after it."""
    allotment = allotment or options.allotment or Allotment.start(
        options.time_limit, reproducible=options.reproducible)
    mix = whole.mix
    chunked_mp = mix_problem(mix, target, CHUNK_TOKENS, max_ops)
    chunkings = _chunkings(whole)
    problems = {chunk: (whole if chunk is None else chunked_mp if chunk == CHUNK_TOKENS
                        else mix_problem(mix, target, chunk, max_ops)) for chunk in chunkings}
    _refuse_proved(list(problems.values()), target, goal)
    reproducible = allotment.time_budget.reproducible
    cuts = Cuts()
    # what scoring the three policies will take is kept back from the searches
    allotment.tail = max(allotment.tail, scoring_cost(2 * len(whole.problem.ops)
                                                      + len(chunked_mp.problem.ops)))

    def kernel_search(kernel: Problem, target_: Target, weight: float, key: str) -> Schedule:
        schedule, listed = _searched_or_listed(kernel, target_, search,
                                               allotment.grant(weight), reproducible)
        if listed:
            cuts.listed_kernels.add(key)
        return schedule

    cache = KernelCache.of((whole, chunked_mp), kernel_search)
    with cycles_uncollected():
        sequential = MixKernels.of(whole)
        kernel_sets = {"sequential": sequential,
                       "chunked": MixKernels.of(chunked_mp, known=sequential)}
    kernel_weight = _distinct_kernel_ops(list(kernel_sets.values()))
    total_weight = kernel_weight / KERNEL_SHARE
    fused_weight = (total_weight - kernel_weight) / len(chunkings)
    allotment.plan(total_weight)
    kernel_options = replace(options, allotment=None)  # the cache takes the grants
    runs = {"sequential": _kernel_policy("sequential", whole, kernel_sets["sequential"],
                                         target, sequential_parts(whole), cache, cuts,
                                         kernel_options),
            "chunked": _kernel_policy("chunked", chunked_mp, kernel_sets["chunked"], target,
                                      chunked_parts(chunked_mp), cache, cuts,
                                      kernel_options)}
    per_request = objective_search is not None and objectives_of(
        whole, goal, 0).active
    candidates: list[tuple[str, PolicyRun]] = []
    skipped: list[str] = []
    for chunk in chunkings:
        mp = problems[chunk]
        label = "whole prefills" if chunk is None else f"prefill in chunks of {chunk}"
        if chunk is not None and _spent(allotment):
            skipped.append(label)
            _release(allotment, fused_weight)
            continue
        weight = fused_weight / 2 if per_request else fused_weight
        grant = allotment.grant(weight)
        if not per_request and grant.time_limit < list_cost(mp.problem):
            cuts.fused[label] = FusedCut.SKIPPED  # (deadlines: the per-request search needs it)
            continue
        schedule, listed = _searched_or_listed(mp.problem, target, search, grant,
                                               reproducible)
        if listed:
            cuts.fused[label] = FusedCut.LISTED
            label += " (list schedule only)"
        candidates.append((label, _fused(mp, schedule, target)))
        if per_request:
            assert objective_search is not None
            starts = {"makespan search": schedule}
            for name, kernels in runs.items():
                if kernels.mix_problem is mp:
                    starts[f"{name} kernels' schedule"] = kernels.schedule
            # proved on this chunking (not on every one): its candidates are late
            with contextlib.suppress(DeadlinesMissed):
                run, note = _per_request(mp, target, goal, starts, weight, allotment,
                                         objective_search)
                candidates.append((f"{label}, per-request search {note}", run))
    for kernels in runs.values():
        candidates.append((f"the {kernels.name} kernels' schedule, fused",
                           _fused(kernels.mix_problem, kernels.schedule, target)))
    for kernels in runs.values():  # the floor: never worse than either kernel policy
        candidates.append((f"the {kernels.name} policy itself", replace(kernels,
                                                                          name="searched")))
    weighed = [_weigh(run, goal) for _, run in candidates]
    first_best = min(range(len(candidates)), key=lambda k: weighed[k].key)  # first of equals
    (label, best), late = candidates[first_best], weighed[first_best].late
    tried = tuple(Tried(what, run.mix_problem.chunk, total(run), w.key[0])
                  for (what, run), w in zip(candidates, weighed, strict=True))
    listed = "; ".join(f"{t.label} {t.makespan}" for t in tried)
    if skipped:
        listed += f"; not searched, the time limit being spent: {', '.join(skipped)}"
    cut = [what for what, how in cuts.fused.items() if how is FusedCut.SKIPPED]
    if cut:
        listed += (f"; not built, its part of the time limit not paying even for the list "
                   f"schedule: {', '.join(cut)}")
    if any(how is FusedCut.LISTED for how in cuts.fused.values()):
        listed += ("; list schedule only: the bound and the search skipped, their part "
                   "of the time limit not paying for them")
    runs["searched"] = replace(best, note=f"kept {label} (tried: {listed})", tried=tried)
    if late and not goal.soft_deadlines:
        raise DeadlinesMissed(list(late), False, "the best searched schedule is late by "
                              + ", ".join(f"{n} {ns} ns" for n, ns in late.items())
                              + "; --soft-deadlines keeps the least total lateness",
                              mix.source)
    return runs
