"""The four ways to run a workload's tasks, each a schedule of the whole problem plus accounting.

1. ``separate``: one kernel per task, one after another. Each kernel is the problem
   restricted to its task (its ops, buffers and tensors; a temp tensor an earlier task
   produced is an input of the later kernel) and solved alone on the whole target; the
   kernels' schedules are concatenated in dependency order. Buffers keep their offsets:
   kernels never overlap in time.
2. ``concurrent``: kernels whose tasks are independent run at the same time, each holding
   a static share of every lane kind and memory for its whole duration (a wave). Shares
   are searched over (``even``, ``demand``: proportional to the kernel's work and memory
   when it ran alone); each kernel is solved against its reduced target and placed
   beside the others (buffers moved into its memory share, unit indices remapped). Each
   kernel believes it has the whole DDR budget; where their draws add up to more, the
   fluid model of :mod:`schedsearch.contention` stretches the ops. Waves run in
   dependency order.
3. ``fused-barrier``: one entry, tasks in sequence (``solve(granularity="task")``).
   Path 1's kernels back to back are such a schedule too; if the time-limited search
   comes out longer than them, path 1's timeline is kept (and the note says so), so
   path 3 differs from path 1 only by what merging the entries saves.
4. ``fused-interleaved``: one entry, tiles interleaved (``solve(granularity="tile")``).
   If the time-limited search comes out slower than path 3, path 3's schedule is kept
   as path 4's answer and the note says so: the fused plan never regresses.

Overheads come from :func:`models.cost.overheads` and are added to the device makespan
(the schedule's own makespan) explicitly, as if paid serially by the control processor::

    makespan = device_makespan + launches * launch_ns + events * event_ns
               + barriers * barrier_ns

Only the synchronisation that differs between paths is counted: ``launches`` is the
number of kernels (1 for paths 3 and 4); ``barriers`` is ``tasks - 1`` for path 3;
``events`` is, for path 4, the number of cross-task dependencies (``after`` edges and DDR
read-after-write between ops of different tasks) whose two ops hold no lane unit in
common (a shared queue orders them for free). Synchronisation inside a task is the same
in every path and is left out of all four.

Legality: every schedule is verified by :func:`checker.verify` against the whole problem
and the real target. Path 2's schedule is the stretched one: when the fluid model
stretched anything, the file still declares each op's full draw over its longer window,
so the checker reports ``BUDGET`` (and only that); the note says so. The uncontended
schedule would not be legal either (it overdraws the bus); this is the honest record of
what concurrent kernels do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from checker import verify
from models.cost import Evaluation, Overheads, evaluate, overheads
from models.errors import InputError
from models.formats import (
    BufferPlacement,
    Memory,
    OpPlacement,
    Problem,
    Schedule,
    Target,
    schedule_to_dict,
)
from schedsearch.allotment import Allotment
from schedsearch.contention import Activity, overloaded, simulate
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.sequence import Restricted, in_sequence
from schedsearch.engine.slicing import cross_task_edges, restrict, task_order

__all__ = ["PATH_NAMES", "PathResult", "Comparison", "SolveOptions", "DEFAULT_OPTIONS",
           "Solver", "compare", "fallback_path", "separate_kernels", "concurrent_kernels",
           "fused", "cross_task_events", "cross_task_event_edges", "PathWeights",
           "path_weights", "kernel_solves", "INTERLEAVED_SHARE", "BARRIER_SHARE",
           "apportion", "speedup_bound", "score_path"]

PATH_NAMES = ("separate", "concurrent", "fused-barrier", "fused-interleaved")

#: ``solve(problem, target, *, time_limit, seed, workers, reproducible, granularity)
#: -> Schedule``.
Solver = Callable[..., Schedule]


@dataclass(frozen=True, slots=True)
class SolveOptions:
    """What every solve of a comparison gets: the same seed and worker count, whether the
    search stops by its deterministic work budget (``reproducible``) or uses the whole
    limit, and its limit: ``time_limit`` each, or, with an ``allotment``, the part of the
    command's one time limit granted to it as it begins (:mod:`schedsearch.allotment`)."""

    time_limit: float = 10.0
    seed: int = 0
    workers: int = 2
    reproducible: bool = True
    allotment: Allotment | None = field(default=None, compare=False)

    def search(self, weight: float = 1.0) -> dict[str, float | int | bool]:
        """The keyword arguments of :func:`schedsearch.engine.search.solve` for one solve
        that begins now; with an allotment, its grant for ``weight`` (charged at once)."""
        limits: dict[str, float] = {"time_limit": self.time_limit}
        if self.allotment is not None:
            grant = self.allotment.grant(weight)
            limits = {"time_limit": grant.time_limit, "wall_limit": grant.wall_limit}
        return {**limits, "seed": self.seed, "workers": self.workers,
                "reproducible": self.reproducible}


DEFAULT_OPTIONS = SolveOptions()

@dataclass(frozen=True, slots=True)
class PathResult:
    """One path: its schedule of the whole problem, figures, overheads and legality."""

    name: str
    schedule: Schedule
    evaluation: Evaluation
    launches: int
    events: int
    barriers: int
    overhead: int
    legal: bool
    violations: tuple[str, ...]
    note: str = ""
    uncontended_makespan: int | None = None
    contention: int = 0

    @property
    def device_makespan(self) -> int:
        return self.evaluation.makespan

    @property
    def makespan(self) -> int:
        return self.device_makespan + self.overhead

    @property
    def busy_share(self) -> dict[str, float]:
        """Busy unit-time / (units * makespan with overheads): engines idle while launching."""
        scale = self.device_makespan / self.makespan if self.makespan else 0.0
        return {lane: share * scale for lane, share in self.evaluation.busy_share.items()}


@dataclass(frozen=True, slots=True)
class Comparison:
    """The four paths in order, the lower bound, and the gains between them.

    ``overlap_bound`` is the best speed-up any fused schedule could have over path 3:
    no schedule is shorter than the lower bound plus one launch, so at most a share
    ``s = 1 - (lower_bound + launch) / path3`` of path 3's time can be removed, and the
    speed-up is at most ``1 / (1 - s) = path3 / (lower_bound + launch)``.
    """

    paths: tuple[PathResult, ...]
    lower_bound: int
    launch_ns: int

    def path(self, name: str) -> PathResult:
        return next(p for p in self.paths if p.name == name)

    def gain(self, before: str, after: str) -> float:
        """Speed-up of path ``after`` over path ``before`` (> 1: ``after`` is faster)."""
        return self.path(before).makespan / self.path(after).makespan

    @property
    def removable_share(self) -> float:
        best = self.lower_bound + self.launch_ns
        return max(0.0, 1.0 - best / self.path("fused-barrier").makespan)

    @property
    def overlap_bound(self) -> float:
        return speedup_bound(self.removable_share)

    @property
    def contention_cost(self) -> int:
        """Contended minus uncontended time of path 2's best concurrent split per wave."""
        return self.path("concurrent").contention

    def as_dict(self) -> dict[str, Any]:
        """The figures of ``compare --json``: the four paths in order, gains, bounds."""
        first = self.path("separate").makespan
        paths = [{"name": p.name, "makespan": p.makespan, "speedup": first / p.makespan,
                  "device_makespan": p.device_makespan, "overhead": p.overhead,
                  "launches": p.launches, "events": p.events, "barriers": p.barriers,
                  "busy_share": p.busy_share, "peak_bytes": dict(p.evaluation.peak_bytes),
                  "ddr_bytes": p.evaluation.ddr_bytes, "legal": p.legal,
                  "violations": list(p.violations), "note": p.note,
                  "uncontended_makespan": p.uncontended_makespan,
                  "contention": p.contention}
                 for p in self.paths]
        return {"paths": paths,
                "gains": {"entry_merge": self.gain("separate", "fused-barrier"),
                          "overlap": self.gain("fused-barrier", "fused-interleaved"),
                          "over_concurrent": self.gain("concurrent", "fused-interleaved")},
                "contention_cost": self.contention_cost,
                "lower_bound": self.lower_bound,
                "overlap_bound": {"removable_share": self.removable_share,
                                  "speedup": self.overlap_bound}}


def speedup_bound(removable_share: float) -> float:
    """Best speed-up when a share ``s`` of the time can be removed: ``1 / (1 - s)``.

    8% removable gives at most 1.087x, 40% gives at most 1.667x.
    """
    if not 0.0 <= removable_share < 1.0:
        raise ValueError(f"a removable share is in [0, 1), got {removable_share}")
    return 1.0 / (1.0 - removable_share)


# ----------------------------------------------------------------------------- tasks
def _task_preds(problem: Problem) -> dict[str, set[str]]:
    preds: dict[str, set[str]] = {t: set() for t in problem.tasks}
    for a, b in cross_task_edges(problem):
        preds[problem.ops[b].task].add(problem.ops[a].task)
    return preds


# ----------------------------------------------------------------------------- kernels
@dataclass(frozen=True, slots=True)
class _Kernel:
    """One task solved as its own kernel, and where its units and memory sit globally."""

    task: str
    schedule: Schedule
    modes: dict[str, list[int]]
    lane_base: dict[str, int]
    memory_base: dict[str, int]

    @property
    def span(self) -> int:
        """How long the kernel holds the engines: its last op end or buffer free."""
        frees = (b.free for b in self.schedule.buffers.values())
        return max(self.schedule.makespan, *frees, 0)


def _solve_kernel(problem: Problem, target: Target, task: str, solver: Solver,
                  options: SolveOptions, *, lanes: Mapping[str, int] | None = None,
                  lane_base: Mapping[str, int] | None = None,
                  memory: Mapping[str, tuple[int, int]] | None = None) -> _Kernel:
    """Solve ``task`` alone; ``lanes``/``memory`` (base, size) restrict it to a share."""
    sub, modes = restrict(problem, task, lanes)
    reduced = target
    if lanes is not None or memory is not None:
        memories = dict(target.memories)
        for name, (_, size) in (memory or {}).items():
            memories[name] = Memory(size, target.memories[name].alignment_bytes)
        reduced = replace(target, name=f"{target.name}/{task}",
                          lanes={k: n for k, n in (lanes or target.lanes).items() if n > 0},
                          memories=memories, meta=None)
    schedule = solver(sub, reduced, granularity="tile", **options.search())
    return _Kernel(task, schedule, modes, dict(lane_base or {}),
                   {name: base for name, (base, _) in (memory or {}).items()})


def _place(kernel: _Kernel, shift: int, ops: dict[str, OpPlacement],
           buffers: dict[str, BufferPlacement],
           windows: Mapping[str, tuple[int, int]] | None = None,
           moved: Callable[[int], int] = lambda t: t) -> None:
    """Copy ``kernel``'s placements into the whole problem's coordinates.

    Times move by ``shift`` (after ``windows``/``moved`` stretched them, for path 2),
    modes map back to the original indices, unit indices and buffer offsets move into the
    kernel's share.
    """
    for name, p in kernel.schedule.ops.items():
        start, end = windows[name] if windows is not None else (p.start, p.end)
        units = {kind: tuple(kernel.lane_base.get(kind, 0) + u for u in indices)
                 for kind, indices in p.units.items()}
        ops[name] = OpPlacement(kernel.modes[name][p.mode], start + shift, end + shift, units)
    problem = kernel.schedule.problem
    for name, b in kernel.schedule.buffers.items():
        base = kernel.memory_base.get(problem.buffers[name].memory, 0)
        buffers[name] = BufferPlacement(b.offset + base, moved(b.alloc) + shift,
                                        moved(b.free) + shift)


def _whole(problem: Problem, target: Target, ops: dict[str, OpPlacement],
           buffers: dict[str, BufferPlacement], path: str) -> Schedule:
    return Schedule(target=target, problem=problem, ops=ops, buffers=buffers,
                    makespan=max((p.end for p in ops.values()), default=0),
                    meta={"path": path})


def separate_kernels(problem: Problem, target: Target, solver: Solver,
                     options: SolveOptions, order: Sequence[str] | None = None,
                     restricted: Restricted | None = None
                     ) -> tuple[Schedule, dict[str, _Kernel]]:
    """Path 1: each task's kernel solved alone, run one after another in dependency order
    (:func:`schedsearch.engine.sequence.in_sequence`), or in ``order`` (a dependency
    order of the tasks that a caller chose: a serving policy's); ``restricted`` as
    there."""
    ops: dict[str, OpPlacement] = {}
    buffers: dict[str, BufferPlacement] = {}
    kernels: dict[str, _Kernel] = {}

    def solve_kernel(sub: Problem, _after: int) -> Schedule:
        return solver(sub, target, granularity="tile", **options.search())

    run = in_sequence(problem, task_order(problem, target) if order is None else order,
                      solve_kernel, restricted)
    assert run is not None  # the solver raises, it never gives up
    for alone in run:
        kernel = kernels[alone.task] = _Kernel(alone.task, alone.schedule, alone.modes, {}, {})
        _place(kernel, alone.start, ops, buffers)
    return _whole(problem, target, ops, buffers, "separate"), kernels


# ----------------------------------------------------------------------------- path 2
#: Ways to split lanes and memory between concurrent kernels; ``compare`` keeps the best.
SPLITS = ("even", "demand")


@dataclass(frozen=True, slots=True)
class _Wave:
    """Kernels run side by side: their stretched placements and how long they take."""

    ops: dict[str, OpPlacement]
    buffers: dict[str, BufferPlacement]
    span: int
    uncontended_span: int
    label: str
    overloaded: bool


@dataclass(frozen=True, slots=True)
class _Concurrent:
    """Path 2's schedule, its uncontended length, the contention cost of the best split of
    each wave (even of a wave that then ran one after another), a note, and whether the
    schedule overdraws a budget."""

    schedule: Schedule
    uncontended: int
    contention: int
    note: str
    overloaded: bool


def _lane_needs(problem: Problem, task: str) -> tuple[set[str], set[str]]:
    """Lane kinds some mode of the task uses, and those every mode of some op needs."""
    used: set[str] = set()
    required: set[str] = set()
    for op in problem.ops.values():
        if op.task != task:
            continue
        kinds = [{k for k, n in mode.lanes.items() if n > 0} for mode in op.modes]
        used |= set().union(*kinds)
        required |= set.intersection(*kinds)
    return used, required


def _waves(problem: Problem, target: Target, order: Sequence[str] | None = None
           ) -> list[list[str]]:
    """Group tasks into waves: all predecessors in earlier waves, required lanes fit.
    ``order`` is :func:`task_order`'s (computed when not given)."""
    preds = _task_preds(problem)
    needs = {t: _lane_needs(problem, t)[1] for t in problem.tasks}
    waves: list[list[str]] = []
    done: set[str] = set()
    remaining = list(task_order(problem, target) if order is None else order)
    while remaining:
        wave: list[str] = []
        for task in remaining:
            if preds[task] <= done and all(
                    sum(kind in needs[t] for t in (*wave, task)) <= count
                    for kind, count in target.lanes.items()):
                wave.append(task)
        waves.append(wave)
        done |= set(wave)
        remaining = [t for t in remaining if t not in done]
    return waves


def apportion(total: int, weights: Mapping[str, float], must: Iterable[str] = ()) -> \
        dict[str, int] | None:
    """Split ``total`` whole units between ``weights``' keys, each getting at least one.

    With too few units, the ``must`` keys get one each first, then the heaviest others;
    otherwise each key gets one and the rest go by largest remainder of
    ``rest * weight / sum(weights)`` (ties to the earlier key). ``None`` when even the
    ``must`` keys cannot each get a unit.
    """
    keys = list(weights)
    must = [k for k in keys if k in set(must)]
    if total < len(keys):
        if len(must) > total:
            return None
        others = sorted((k for k in keys if k not in must), key=lambda k: -weights[k])
        chosen = set(must + others[:total - len(must)])
        return {k: int(k in chosen) for k in keys}
    rest = total - len(keys)
    weight_sum = sum(weights.values()) or 1.0
    quotas = {k: rest * weights[k] / weight_sum for k in keys}
    shares = {k: 1 + math.floor(quotas[k]) for k in keys}
    leftover = total - sum(shares.values())
    for k in sorted(keys, key=lambda k: -(quotas[k] - math.floor(quotas[k])))[:leftover]:
        shares[k] += 1
    return shares


def _split(problem: Problem, target: Target, wave: Sequence[str], how: str,
           solo: Mapping[str, _Kernel]) -> dict[str, tuple[dict[str, int], dict[str, int],
                                                         dict[str, tuple[int, int]]]] | None:
    """Per task of the wave: its lane counts, lane bases and memory (base, size) shares."""
    lanes: dict[str, dict[str, int]] = {t: {} for t in wave}
    lane_base: dict[str, dict[str, int]] = {t: {} for t in wave}
    for kind, count in target.lanes.items():
        users = {t: (_busy(solo[t], kind) if how == "demand" else 1.0) for t in wave
                 if kind in _lane_needs(problem, t)[0]}
        if not users:
            continue
        shares = apportion(count, users, {t for t in users if kind in
                                          _lane_needs(problem, t)[1]})
        if shares is None:
            return None
        base = 0
        for task, n in shares.items():
            lanes[task][kind], lane_base[task][kind] = n, base
            base += n
    memory: dict[str, dict[str, tuple[int, int]]] = {t: {} for t in wave}
    for name, mem in target.memories.items():
        users = {t: (float(evaluate(solo[t].schedule).extent_bytes.get(name, 0)) or 1.0
                     if how == "demand" else 1.0)
                 for t in wave if any(b.memory == name for b in
                                      solo[t].schedule.problem.buffers.values())}
        align = math.lcm(mem.alignment_bytes, *(b.align for b in problem.buffers.values()
                                                if b.memory == name))
        base = 0
        weight_sum = sum(users.values())
        for task, weight in users.items():
            size = int(mem.capacity_bytes * weight / weight_sum) // align * align
            if size <= 0:
                return None
            memory[task][name] = (base, size)
            base += size
    return {t: (lanes[t], lane_base[t], memory[t]) for t in wave}


def _busy(kernel: _Kernel, kind: str) -> float:
    """Unit-time the kernel kept ``kind`` busy when it ran alone: its demand for it."""
    problem = kernel.schedule.problem
    return float(sum((p.end - p.start) * problem.ops[name].modes[p.mode].lanes.get(kind, 0)
                     for name, p in kernel.schedule.ops.items())) or 1.0


def _run_wave(problem: Problem, target: Target, wave: Sequence[str], how: str,
              solo: Mapping[str, _Kernel], solver: Solver,
              options: SolveOptions) -> _Wave | None:
    """Solve each kernel of the wave in its share and simulate DDR contention."""
    shares = _split(problem, target, wave, how, solo)
    if shares is None:
        return None
    kernels = []
    for task in wave:
        lanes, lane_base, memory = shares[task]
        try:
            kernels.append(_solve_kernel(problem, target, task, solver, options, lanes=lanes,
                                         lane_base=lane_base, memory=memory))
        except InputError:
            return None  # the kernel does not fit this share
    activities = [Activity(name, k.task, p.start, p.end,
                           k.schedule.problem.ops[name].modes[p.mode].budgets)
                  for k in kernels for name, p in k.schedule.ops.items()]
    contention = simulate(activities, target.budgets)
    ops: dict[str, OpPlacement] = {}
    buffers: dict[str, BufferPlacement] = {}
    for k in kernels:
        _place(k, 0, ops, buffers, contention.windows,
               lambda t, task=k.task: contention.shift(task, t))
    span = max([contention.makespan, *(b.free for b in buffers.values())])
    uncontended = max(k.span for k in kernels)
    label = f"{' + '.join(wave)} ({how}: " + ", ".join(
        f"{t} {_share_text(shares[t], target)}" for t in wave) + ")"
    return _Wave(ops, buffers, span, uncontended, label,
                 overloaded(activities, target.budgets))


def _share_text(share: tuple[dict[str, int], dict[str, int], dict[str, tuple[int, int]]],
                target: Target) -> str:
    lanes, _, memory = share
    parts = [f"{kind} {n}/{target.lanes[kind]}" for kind, n in lanes.items()]
    parts += [f"{name} {size // 1024} KiB" for name, (_, size) in memory.items()]
    return " ".join(parts)


def concurrent_kernels(problem: Problem, target: Target, solver: Solver,
                       options: SolveOptions, solo: Mapping[str, _Kernel],
                       order: Sequence[str] | None = None) -> _Concurrent:
    """Path 2: waves of concurrent kernels, placed one wave after another.

    ``solo`` are path 1's kernels: a wave of one task reuses its solo kernel, and their
    figures are the demands of the ``demand`` split. A wave whose best split is no faster
    than its kernels one after another (contention included), or that no split can host,
    runs them one after another instead and says so: path 2 is the best concurrent
    configuration found, so the gain of path 4 over it is not inflated. ``order`` is
    :func:`task_order`'s, if the caller has it.
    """
    ops: dict[str, OpPlacement] = {}
    buffers: dict[str, BufferPlacement] = {}
    now = uncontended = contention = 0
    labels: list[str] = []
    any_overload = False
    for wave in _waves(problem, target, order):
        runs = [] if len(wave) == 1 else [
            run for how in SPLITS
            if (run := _run_wave(problem, target, wave, how, solo, solver, options))]
        in_turn = sum(solo[task].span for task in wave)
        best = min(runs, key=lambda run: run.span, default=None)
        if best is not None:
            contention += best.span - best.uncontended_span
        if best is not None and best.span < in_turn:
            for name, p in best.ops.items():
                ops[name] = replace(p, start=p.start + now, end=p.end + now)
            for name, b in best.buffers.items():
                buffers[name] = replace(b, alloc=b.alloc + now, free=b.free + now)
            now += best.span
            uncontended += best.uncontended_span
            labels.append(best.label)
            any_overload |= best.overloaded
            continue
        for task in wave:
            _place(solo[task], now, ops, buffers)
            now += solo[task].span
        uncontended += in_turn
        labels.append(" then ".join(wave) + (
            " (alone)" if len(wave) == 1 else
            " (one after another: no split fits)" if best is None else
            f" (one after another: the best split, {best.label}, took {best.span})"))
    return _Concurrent(_whole(problem, target, ops, buffers, "concurrent"), uncontended,
                       contention, "waves: " + "; ".join(labels), any_overload)


# ----------------------------------------------------------------------------- paths 3, 4
def fused(problem: Problem, target: Target, solver: Solver, options: SolveOptions,
          granularity: str, weight: float = 1.0) -> Schedule:
    """Paths 3 (``granularity="task"``) and 4 (``"tile"``): one entry for every task;
    ``weight`` is the solve's in ``options.allotment``, if any."""
    return solver(problem, target, granularity=granularity, **options.search(weight))


def cross_task_event_edges(schedule: Schedule) -> list[tuple[str, str]]:
    """Cross-task dependencies whose two ops hold no lane unit in common (module doc):
    each costs one event, paid when its second op may start."""
    def held(name: str) -> set[tuple[str, int]]:
        return {(kind, u) for kind, units in schedule.ops[name].units.items() for u in units}

    return [(a, b) for a, b in cross_task_edges(schedule.problem) if not held(a) & held(b)]


def cross_task_events(schedule: Schedule) -> int:
    """How many events a fused schedule pays (:func:`cross_task_event_edges`)."""
    return len(cross_task_event_edges(schedule))


# ----------------------------------------------------------------------------- comparing
def score_path(name: str, schedule: Schedule, *, launches: int, events: int, barriers: int,
            costs: Overheads, note: str = "", uncontended_makespan: int | None = None,
            contention: int = 0) -> PathResult:
    """One path's schedule scored by the cost model, its overheads added, and the
    checker's verdict on it: how every path, here and in :mod:`schedsearch.chains`, is
    scored."""
    report = verify(schedule_to_dict(schedule))
    codes = tuple(sorted({v.code for v in report.violations}))
    overhead = (launches * costs.launch_ns + events * costs.event_ns
                + barriers * costs.barrier_ns)
    return PathResult(name=name, schedule=schedule, evaluation=evaluate(schedule),
                      launches=launches, events=events, barriers=barriers, overhead=overhead,
                      legal=report.legal, violations=codes, note=note,
                      uncontended_makespan=uncontended_makespan, contention=contention)


def _default_solver() -> Solver:
    from schedsearch.engine.search import solve

    return solve


def _separate(problem: Problem, target: Target, solver: Solver, options: SolveOptions,
              costs: Overheads, order: Sequence[str] | None = None
              ) -> tuple[PathResult, dict[str, _Kernel]]:
    schedule, solo = separate_kernels(problem, target, solver, options, order)
    return score_path("separate", schedule, launches=len(problem.tasks), events=0, barriers=0,
                   costs=costs), solo


def _concurrent(problem: Problem, target: Target, solver: Solver, options: SolveOptions,
                costs: Overheads, solo: Mapping[str, _Kernel],
                order: Sequence[str] | None = None) -> PathResult:
    run = concurrent_kernels(problem, target, solver, options, solo, order)
    note = run.note
    if run.overloaded:
        note += ("; DDR demand exceeded the budget: ops stretched by the fluid model, so "
                 "the file's full draws over the longer windows break BUDGET")
    return score_path("concurrent", run.schedule, launches=len(problem.tasks), events=0,
                   barriers=0, costs=costs, note=note, uncontended_makespan=run.uncontended,
                   contention=run.contention)


def fallback_path(problem: Problem, target: Target, name: str, *,
                  solver: Solver | None = None,
                  options: SolveOptions = DEFAULT_OPTIONS) -> PathResult:
    """Path 1 (``separate``) or 2 (``concurrent``) alone: what runs when no plan applies."""
    solver = solver or _default_solver()
    costs = overheads(target)
    first, solo = _separate(problem, target, solver, options, costs)
    if name == "separate":
        return first
    if name == "concurrent":
        return _concurrent(problem, target, solver, options, costs, solo)
    raise ValueError(f"no fallback path {name!r}")


#: Shares of a comparison's time limit when it is the budget of the whole comparison
#: (``options.allotment``, what ``schedsearch compare --time-limit`` means): the
#: fused-interleaved search, the one a comparison is run for, gets half; the
#: fused-barrier search a sixth; the kernels of paths 1 and 2 (each a problem of one
#: task) share the rest evenly. Each solve counted separately took up to 7.5x the limit.
INTERLEAVED_SHARE = 0.5
BARRIER_SHARE = 1 / 6


def kernel_solves(problem: Problem, target: Target, order: Sequence[str] | None = None
                  ) -> int:
    """How many kernels paths 1 and 2 solve: each task alone, and each task of a wave of
    several once per split (:data:`SPLITS`); ``order`` is :func:`task_order`'s, if known."""
    return len(problem.tasks) + sum(len(wave) * len(SPLITS)
                                    for wave in _waves(problem, target, order)
                                    if len(wave) > 1)


@dataclass(frozen=True, slots=True)
class PathWeights:
    """What each kind of solve of one comparison weighs in its allotment (a kernel 1)."""

    barrier: float
    interleaved: float
    total: float


def path_weights(kernels: int) -> PathWeights:
    """The weights of :data:`INTERLEAVED_SHARE` and :data:`BARRIER_SHARE` beside
    ``kernels`` solves of weight 1 that share the rest."""
    rest = 1 - INTERLEAVED_SHARE - BARRIER_SHARE
    barrier, interleaved = BARRIER_SHARE * kernels / rest, INTERLEAVED_SHARE * kernels / rest
    return PathWeights(barrier, interleaved, kernels + barrier + interleaved)


def compare(problem: Problem, target: Target, *, solver: Solver | None = None,
            options: SolveOptions = DEFAULT_OPTIONS) -> Comparison:
    """Build, verify and score the four paths of the module docstring, in order.

    ``options.time_limit`` is each solve's; with ``options.allotment`` the comparison's
    one limit is allotted to its solves in the shares of :data:`INTERLEAVED_SHARE` and
    :data:`BARRIER_SHARE`, each granted its share of what is left as it begins."""
    solver = solver or _default_solver()
    costs = overheads(target)
    tasks = len(problem.tasks)
    order = task_order(problem, target)
    weights = path_weights(kernel_solves(problem, target, order))
    if options.allotment is not None:
        options.allotment.plan(weights.total)
    separate, solo = _separate(problem, target, solver, options, costs, order)
    concurrent = _concurrent(problem, target, solver, options, costs, solo, order)
    task_schedule = fused(problem, target, solver, options, "task", weights.barrier)
    barrier_note = ""
    if separate.device_makespan < task_schedule.makespan:
        barrier_note = (f"the search found {task_schedule.makespan}; the separate kernels' "
                        "schedule, one after another, is also a fused schedule with "
                        "barriers and is shorter: it is kept")
        task_schedule = replace(separate.schedule, meta={"path": "fused-barrier"})
    barrier = score_path("fused-barrier", task_schedule, launches=1, events=0,
                      barriers=max(0, tasks - 1), costs=costs, note=barrier_note)
    tile = fused(problem, target, solver, options, "tile", weights.interleaved)
    interleaved = score_path("fused-interleaved", tile, launches=1,
                          events=cross_task_events(tile), barriers=0, costs=costs)
    if interleaved.makespan > barrier.makespan:
        interleaved = replace(barrier, name="fused-interleaved",
                              note=f"the search found {interleaved.makespan} within its time "
                                   "limit, slower than fused-barrier: its schedule is kept")
    return Comparison(paths=(separate, concurrent, barrier, interleaved),
                      lower_bound=lower_bound(problem, target).value,
                      launch_ns=costs.launch_ns)
