"""Large-neighbourhood search: improve a schedule too big for one CP-SAT model.

Each step frees the ops of one time window of the incumbent and re-solves them with the
rest pinned (:mod:`schedsearch.engine.cpsat.variables`): ops starting before the window keep
their times; ops after it keep their relative timing and move left together by one
shift variable, so a window that packs tighter shortens the whole schedule. Pinned and
shifted buffers keep their offsets, so only the window's own buffers are re-placed.

Which window: ops are ranked by incumbent start; windows of ``size`` consecutive ranks
sweep from the start of the schedule to its end, each step advancing by half a window
plus a seeded random jitter; a sweep that improves nothing doubles the window size (up to
:data:`MAX_WINDOW`; a fruitless sweep at that size starts again at :data:`FIRST_WINDOW`,
with new random offsets), and so does a size whose windows CP-SAT mostly proves optimal
(:data:`EASY_SHARE`), at once: windows that easy are too small to move anything. Each
sweep opens with a round of tail windows (:data:`TAIL_SIZES`: the last ranks, which no
shifted op follows), given more work than the sweep's own (:data:`TAIL_WORK`). A step
is accepted only if it shortens the makespan, or keeps it and lowers the sum of start
times (room for the next window); the incumbent stays legal throughout, since every
model contains the incumbent itself (shift zero) as its hint.

With W workers, each round solves the next W windows of the sweep side by side from the
same incumbent and accepts the best (the sweep's windows overlap, so they would
conflict; the next sweep finds again what the others found). Where there are buffers,
rounds of idle windows (:func:`idle_windows`, :data:`FOCUS_ROUND` of them, apart) keep
every answer that improves and merges with the best (:mod:`.merge`), and each kept
answer is repeated wherever the incumbent looks the same (:mod:`.repeat`). That loop
(:func:`search_windows`) is also the per-group objectives' (:mod:`.deadlines`), with
their own score and window model.

The budget is deterministic: a round is charged the conflicts its longest run used (see
:mod:`schedsearch.engine.cpsat.model`) plus a fixed amount per node for building the models,
never a measured time, so runs repeat for a seed and worker count. The wall-clock
deadline of :class:`~schedsearch.engine.timebudget.TimeBudget` stops the loop early only on a
machine slower than calibrated.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from schedsearch.engine import interrupt
from schedsearch.engine.cpsat.model import PORTFOLIO_STRIDE, Built, build, solve_each
from schedsearch.engine.cpsat.variables import Incumbent, Neighbourhood, Status
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance, Resource
from schedsearch.engine.merge import WindowAnswer, merge_windows
from schedsearch.engine.offsets import place_offsets
from schedsearch.engine.repeat import Lookalikes, op_kinds
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["LnsResult", "improve", "search_windows", "WindowModel", "window",
           "idle_windows", "FIRST_WINDOW", "MAX_WINDOW", "EASY_SHARE", "EASY_WINDOWS",
           "IDLE_WINDOWS", "mode_draws", "Draws"]

#: Windows start small: CP-SAT settles a window of 12 ops in milliseconds where one of
#: 30 on the tight wide pair (161 ops) ran to its 1 s cap unproven, so a sweep of small
#: windows tries many more (10 s, seeds 0-8 there: 1.134 of the bound on average against
#: 1.148, before the per-op limits below). A sweep that finds nothing doubles them.
FIRST_WINDOW = 12
MAX_WINDOW = 120
#: A size whose windows CP-SAT mostly proves optimal is too small to move anything: once
#: :data:`EASY_SHARE` of at least :data:`EASY_WINDOWS` windows of one size were proven, it
#: doubles where the sweep stands. On the Qwen prefill layer (530 ops) 66 and 70 of the
#: first two sweeps' 75 windows of 12 ops were proven, and only 2 and 1 improved; on the
#: tight-memory problems of ``benchmarks/bench_memory.py`` 0-4 of 14-23 were, so there
#: the windows stay small (a first window of 24 or 48 for every problem lost there).
EASY_SHARE = 0.75
EASY_WINDOWS = 8
#: Work (calibrated seconds) one window's CP-SAT run may use, per op of the window: a
#: window of :data:`MAX_WINDOW` ops gets 1 s, one of 12 a tenth of that (a round of
#: small windows stopped at 1 s took as long as a round of large ones).
WINDOW_LIMIT_PER_OP = 1.0 / MAX_WINDOW
#: The same, in wall seconds per op, for one round when the budget is not reproducible
#: (its work is then unmetered, and a round on a loaded machine could take the whole
#: limit).
WINDOW_WALL_PER_OP = 1.0 / MAX_WINDOW
#: Work charged per node of a window model, for building and reading it, and per node of
#: the whole problem, for the scans every window makes (ranking, edges, read-back).
CHARGE_PER_NODE = 1e-3
CHARGE_PER_SCAN = 2e-5
#: Tail windows: the last ranks of the start order, nothing after them to shift, so
#: every op of the window can move and the makespan is decided there. Each sweep opens
#: with one round of them, one size per worker, each granted :data:`TAIL_WORK` (at most
#: :data:`TAIL_SHARE` of the work left). Why: on Qwen2.5-0.5B prefill v79 the window of
#: the last 48 ops, which the sweep's windows of 48 reached with 0.4 s each, is proven
#: optimal by one CP-SAT worker in about 4 s: 791,026 -> 784,533 ns.
#: A tail window is tried only where it holds at most 1/:data:`TAIL_PART` of the ops:
#: on the tight-memory problems of about 150-170 ops the tail round took time from the
#: sweep and lost (the wide pair at 161 ops 1.116 -> 1.134 of the bound at 10 s).
TAIL_SIZES = (48, 64, 32, 96)
TAIL_WORK = 4.0
TAIL_SHARE = 0.4
TAIL_PART = 8


@dataclass(frozen=True, slots=True)
class LnsResult:
    solution: Solution
    windows: int
    accepted: int


def window(inst: Instance, dag: Dag, inc: Incumbent, first: int,
           size: int) -> tuple[Neighbourhood, int]:
    """The neighbourhood freeing ranks ``[first, first + size)`` of the start order, and
    the time after which nothing interacts with what moves (the ``region_end``)."""
    nodes = inc.ranked
    starts = [inc.starts[v] for v in nodes]
    t0 = starts[first]
    last = first + size
    t1 = starts[last] if last < len(nodes) else None
    max_lag = max((lag for _, _, lag in dag.edges), default=0)
    pinned_end = max((inc.ends[v] for v in nodes[:bisect_left(starts, t0)]), default=0)
    free = nodes[bisect_left(starts, t0):bisect_left(starts, t1) if t1 is not None else None]
    t_end = max((inc.ends[v] for v in free), default=t0)
    shift = max(0, t1 - pinned_end - max_lag) if t1 is not None else 0
    region_end = t_end + shift + max_lag + 1
    status = []
    for v in range(dag.n_nodes):
        s = inc.starts[v]
        if s < t0:
            status.append(Status.FIXED)
        elif t1 is None or s < t1:
            status.append(Status.FREE)
        elif s < region_end:
            status.append(Status.SHIFTED)
        else:
            status.append(Status.ABSENT)
    return Neighbourhood(tuple(status), t0, t_end, shift), region_end


def _score(inst: Instance, solution: Solution) -> tuple[int, int]:
    return solution.makespan(inst), sum(solution.starts)


class _Sweep:
    """Where the next window starts and how big it is (see the module docstring)."""

    def __init__(self, n_nodes: int, seed: int) -> None:
        self.n_nodes = n_nodes
        self.rng = random.Random(seed)
        self.size = min(FIRST_WINDOW, n_nodes)
        self.first = 0
        self.improved = False
        self.tried = 0  # windows of the current size solved so far
        self.proven = 0  # of them, the ones CP-SAT proved optimal
        self.tail_due = True  # each sweep opens with a round of tail windows

    def tails(self, workers: int) -> list[tuple[int, int]]:
        """The tail windows of one round (:data:`TAIL_SIZES`), at most one per worker,
        each the last ``size`` ranks, where that is at most 1/:data:`TAIL_PART` of them."""
        self.tail_due = False
        return [(self.n_nodes - size, size) for size in sorted(TAIL_SIZES[:workers])
                if TAIL_PART * size <= self.n_nodes]

    def next(self) -> tuple[int, int]:
        """The next window ``(first rank, size)``; advances the sweep."""
        current = (self.first, self.size)
        self.first += max(1, self.size // 2 + self.rng.randrange(max(1, self.size // 4)))
        if self.first + self.size // 2 >= self.n_nodes:
            if not self.improved:  # double; from the largest, start small again
                self._resize(min(FIRST_WINDOW, self.n_nodes) if self.size >= self._largest
                             else min(2 * self.size, self._largest))
            self.first, self.improved, self.tail_due = 0, False, True
        return current

    def record(self, tried: int, proven: int) -> None:
        """``tried`` windows were solved, ``proven`` of them to optimality: once most
        windows of a size are proven, the size doubles where the sweep stands."""
        self.tried += tried
        self.proven += proven
        if (self.tried >= EASY_WINDOWS and self.proven >= EASY_SHARE * self.tried
                and self.size < self._largest):
            self._resize(min(2 * self.size, self._largest))

    @property
    def _largest(self) -> int:
        return min(MAX_WINDOW, self.n_nodes)

    def _resize(self, size: int) -> None:
        self.size, self.tried, self.proven = size, 0, 0


#: Where there are buffers, each incumbent's first windows are the ones where the
#: busiest resource idles most (:func:`idle_windows`), at most this many, before the
#: sweep goes on; a round of them that improves nothing ends them until the next
#: accepted window. Why: on the tight wide pair at 609 ops a norm compute in the middle
#: of each GEMM row left the bus idle, one window apart; the sweep's windows reached a
#: few of them (10 s, reproducible: 1.066 of the bound, 6 of 44 windows accepted), the
#: idle-first ones most (1.037, 23 of 46). Problems without buffers (PSPLIB's) keep the
#: sweep alone.
IDLE_WINDOWS = 16
#: A round of idle windows solves this many of them (at least one per worker, several
#: per thread): they are apart, so every one that improves is merged (:mod:`.merge`),
#: and a round's fixed costs (the new incumbent, its idle windows) are shared. On the
#: tight wide pair (10 s, reproducible) at 2,011 ops 1.0438 of the bound with 4 against
#: 1.0442 with 2, at 7,966 ops 1.0667 against 1.0674; with the whole 10 s (one run each,
#: which vary) 1.030 against 1.043 and 1.066 against 1.065; 8 per round was no better.
FOCUS_ROUND = 4


#: Per op, per mode, what the mode holds of each lane kind and budget while it runs.
Draws = Sequence[Sequence[tuple[tuple[Resource, int], ...]]]


def mode_draws(inst: Instance) -> Draws:
    """:meth:`Instance.draws` of every op in every mode, computed once."""
    return [[inst.draws(op, k) for k in range(len(modes))]
            for op, modes in enumerate(inst.modes)]


def idle_windows(inst: Instance, inc: Incumbent, size: int, count: int = IDLE_WINDOWS,
                 draws: Draws | None = None) -> list[tuple[int, int]]:
    """Up to ``count`` windows of ``size`` consecutive ranks of the start order, apart
    from each other, in decreasing order of the idle capacity (capacity minus use, over
    time) of the busiest lane kind or budget (the most work over capacity) during the
    window's span. ``draws`` is :func:`mode_draws` when the caller has it."""
    n = inst.n_ops
    if len(inc.ranked) <= size or inc.makespan <= 0 or count <= 0:
        return []
    capacities = {r: c for r, c in inst.capacities().items() if c > 0}
    if not capacities:
        return []
    table = mode_draws(inst) if draws is None else draws
    held = [table[v][inc.solution.modes[v]] for v in range(n)]
    work = dict.fromkeys(capacities, 0)
    for v in range(n):
        for resource, amount in held[v]:
            if resource in work:
                work[resource] += amount * (inc.ends[v] - inc.starts[v])
    busiest = max(capacities, key=lambda r: (work[r] / capacities[r], r))
    times = sorted({0, inc.makespan, *inc.starts, *inc.ends})
    at = {t: k for k, t in enumerate(times)}
    delta = [0] * len(times)
    for v in range(n):
        for resource, amount in held[v]:
            if resource == busiest:
                delta[at[inc.starts[v]]] += amount
                delta[at[inc.ends[v]]] -= amount
    idle_before = {times[0]: 0}  # idle capacity from time 0 up to each event time
    running = idle = 0
    for k in range(len(times) - 1):
        running += delta[k]
        idle += max(0, capacities[busiest] - running) * (times[k + 1] - times[k])
        idle_before[times[k + 1]] = idle
    starts = [inc.starts[v] for v in inc.ranked]
    scored = sorted((idle_before[starts[first + size]] - idle_before[starts[first]], -first)
                    for first in range(0, len(starts) - size, max(1, size // 4)))
    chosen: list[int] = []
    for _, negative in reversed(scored):
        if all(abs(-negative - other) >= size for other in chosen):
            chosen.append(-negative)
            if len(chosen) == count:
                break
    return [(first, size) for first in chosen]


#: A window's model from the incumbent, its neighbourhood, its region end (see
#: :func:`window`) and the best score so far.
WindowModel = Callable[[Incumbent, Neighbourhood, int, Any], Built]


def search_windows(inst: Instance, dag: Dag, solution: Solution, budget: TimeBudget, *,
                   seed: int, workers: int, score: Callable[[Solution], Any],
                   model: WindowModel, placement: bool = True,
                   done: Callable[[Any], bool] = lambda _: False,
                   on_improve: Callable[[Any], None] | None = None) -> LnsResult:
    """The accept loop of every window search (this module's and :mod:`.deadlines`'):
    rounds of ``workers`` consecutive windows of the sweep (:class:`_Sweep`), or of
    idle windows, each modelled by ``model`` from the same incumbent and solved side by
    side; the candidate of the lowest ``score`` below the incumbent's, the earliest
    window on ties, is accepted once the placement engine gives it addresses (with
    ``placement``), and with it the round's other improving answers and the copies of
    them that merge and place (:func:`_add_windows`). Until ``budget`` is spent or
    exhausted, a stop is requested, or ``done`` holds for the best score;
    ``on_improve`` hears each accepted score."""
    inc = Incumbent.of(inst, dag, solution)
    best = score(solution)
    sweep = _Sweep(dag.n_nodes, seed)

    draws = mode_draws(inst) if inst.n_buffers else []
    kinds = op_kinds(inst) if inst.n_buffers else []

    def idlest(inc: Incumbent) -> list[tuple[int, int]]:
        """The windows tried first from ``inc``: where there are buffers, the idlest."""
        return idle_windows(inst, inc, sweep.size, IDLE_WINDOWS, draws) \
            if inst.n_buffers else []

    focus = idlest(inc)
    windows = accepted = 0
    while not done(best) and not budget.exhausted() and not interrupt.requested():
        builts = []
        tails = sweep.tails(workers) if sweep.tail_due and not focus else []
        from_focus = not tails and bool(focus)
        if tails:
            planned = tails
        elif focus:  # idle windows are apart: a round of several merges what improves
            count = max(workers, FOCUS_ROUND)
            planned, focus = focus[:count], focus[count:]
        else:
            planned = [sweep.next() for _ in range(workers)]
        for first, width in planned:
            hood, region_end = window(inst, dag, inc, first, width)
            builts.append(model(inc, hood, region_end, best))
            moving = sum(1 for s in hood.status if s in (Status.FREE, Status.SHIFTED))
            budget.charge(CHARGE_PER_NODE * moving + CHARGE_PER_SCAN * dag.n_nodes)
        seeds = [seed * PORTFOLIO_STRIDE + windows + k for k in range(len(builts))]
        size = max(width for _, width in planned)  # the largest window of the round
        work = min(TAIL_WORK, TAIL_SHARE * budget.left) if tails \
            else WINDOW_LIMIT_PER_OP * size
        step = budget.within(work if tails else WINDOW_WALL_PER_OP * size)
        outcomes = solve_each(builts, step, work=work, seeds=seeds)
        budget.absorb(step)
        if not tails:  # the tail windows are not the sweep's size
            sweep.record(len(outcomes), sum(o.status == "OPTIMAL" for o in outcomes))
        windows += len(builts)
        candidates = sorted((score(o.solution), k, o.solution) for k, o in
                            enumerate(outcomes) if o.solution is not None)
        improving = [(found, k, candidate) for found, k, candidate in candidates
                     if found < best]
        for found, k, candidate in improving:
            if placement:
                candidate = place_offsets(inst, candidate, solution, budget, seed,
                                          before=inc.windows)
                if candidate is None:
                    continue
                others = [WindowAnswer(*planned[j], other) for _, j, other in improving
                          if j != k]
                found, candidate, added = _add_windows(
                    inst, dag, inc, WindowAnswer(*planned[k], candidate), found, others,
                    score, budget, seed, Lookalikes(inst, inc, kinds) if kinds else None)
                accepted += added
            solution, best = candidate, found
            inc = Incumbent.of(inst, dag, solution)
            focus = idlest(inc)
            accepted += 1
            sweep.improved = True
            from_focus = False  # an accepted window keeps the new plan
            if on_improve is not None:
                on_improve(best)
            break
        if from_focus:  # the idlest windows gave nothing: the rest will not either
            focus = []
    return LnsResult(solution, windows, accepted)


#: A group of copies (:mod:`.repeat`) that does not merge or place is halved, and each
#: half tried, down to this many halvings.
COPY_HALVINGS = 3


def _add_windows(inst: Instance, dag: Dag, inc: Incumbent, kept: WindowAnswer, found: Any,
                 others: list[WindowAnswer], score: Callable[[Solution], Any],
                 budget: TimeBudget, seed: int, lookalikes: Lookalikes | None = None
                 ) -> tuple[Any, Solution, int]:
    """The accepted (placed) answer ``kept``, of score ``found``, with each of ``others``
    in turn that merges with the answers kept so far (:func:`merge_windows`), lowers
    the score and places beside them; then, with ``lookalikes``, each kept answer's
    copies (:meth:`.repeat.Lookalikes.copies`) together, or in halves where they do
    not all merge and place: the score, the solution and how many windows were added."""
    answers, solution = [kept], kept.solution

    def add(group: list[WindowAnswer], halvings: int) -> None:
        nonlocal found, solution
        if not group:
            return
        together = merge_windows(inst, dag, inc, [*answers, *group])
        if together is not None and score(together) < found:
            placed = place_offsets(inst, together, solution, budget, seed)
            if placed is not None:
                answers.extend(group)
                found, solution = score(together), placed
                return
        if len(group) > 1 and halvings > 0:
            add(group[:len(group) // 2], halvings - 1)
            add(group[len(group) // 2:], halvings - 1)

    for answer in others:
        add([answer], 0)
    for answer in list(answers) if lookalikes is not None else []:
        add(lookalikes.copies(answer, answers), COPY_HALVINGS)
    return found, solution, len(answers) - 1


def improve(inst: Instance, dag: Dag, solution: Solution, budget: TimeBudget, *, seed: int,
            workers: int, lower: int, placement: bool = True,
            on_improve: Callable[[int], None] | None = None) -> LnsResult:
    """Improve ``solution`` by window re-solves until ``budget`` is spent or exhausted, or
    the makespan reaches ``lower``.

    Each round builds ``workers`` consecutive windows of the sweep from the same incumbent
    and solves them side by side (one thread each); the best improving answer is
    accepted, the earliest window on ties, so the result depends on ``seed`` and
    ``workers`` only (unless the deadline cut a round). With ``placement`` the windows
    keep memory as a cumulative only and the placement engine gives the moved buffers
    their addresses (:mod:`schedsearch.engine.offsets`); a candidate it cannot place is dropped.
    """
    def model(inc: Incumbent, hood: Neighbourhood, region_end: int, _: Any) -> Built:
        return build(inst, dag, inc, hood, 0, region_end, offsets=not placement)

    return search_windows(
        inst, dag, solution, budget, seed=seed, workers=workers,
        score=lambda found: _score(inst, found), model=model, placement=placement,
        done=lambda best: best[0] <= lower,
        on_improve=None if on_improve is None else lambda best: on_improve(best[0]))
