"""Sampling and a genetic search over serial schedules, each improved by double justification.

Why: on memory-free problems (RCPSP such as PSPLIB) CP-SAT on the whole model, hinted
with the list scheduler's answer, stops one period above the best known makespan on a
few J30 instances within 10 s on 2 cores. The classic RCPSP heuristics find those
optima in a few thousand schedules: the serial schedule-generation scheme (SGS) over
priority orders, each schedule improved by *double justification* (Valls, Ballestin and
Quintanilla 2005; Kolisch and Hartmann's surveys): schedule every activity as late as
possible in order of decreasing finish time (right-justify), then as early as possible
in order of increasing start (left-justify); neither step lengthens the schedule.

How it is fast in Python: ``K`` schedules are built side by side in NumPy on a
time-indexed profile of free capacity (schedules x resources x time), one activity per
schedule per step, so the Python loop runs once per activity, not once per activity and
schedule. An order is given by keys (the eligible activity of least key goes next). The
first generation samples on latest-finish-time priorities with regret-based bias
(Drexl's regret-based biased random sampling); later ones are children of the
population (Hartmann's two-point crossover of activity lists, the list of a schedule
being its activities by start time; neighbour swaps), one-activity moves of the best
schedules, and a few fresh samples. Every schedule is double-justified (ties broken at
random, so that plateaus of equal makespan are explored) and the best distinct ones
survive (shortest, then least sum of finish times). After :data:`_STALL` generations
without a shorter schedule the population restarts from fresh samples.

What it handles: problems without buffers (lanes, as cumulatives of their unit counts,
and budgets are the renewable resources; the derived precedences with their lags;
barrier nodes of ``granularity="task"`` as zero-duration activities). One mode per op is
fixed before the search: among the allowed ones (``priced``, else all) the shortest, ties
to the least total demand relative to capacity. Problems with buffers (memory) get
``None``, as do horizons too long for a time-indexed profile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from schedsearch.engine import interrupt
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["justified", "double_justify", "choose_modes", "MAX_HORIZON", "MAX_NODES"]

#: The longest time-indexed profile built (in time units): sum of durations and lags.
MAX_HORIZON = 1 << 16
#: The most activities (ops and barriers) searched: the loop is per activity, with
#: ``O(K * n)`` work per step for the eligible set.
MAX_NODES = 250
#: Cells (activities x schedules x resources x time) one serial SGS batch may sweep at
#: most: bounds ``K``, so that one generation (a few batches, between two looks at the
#: budget) stays near a tenth of a second; a problem that would need ``K`` below 4 is
#: not taken.
_SWEEP = 1 << 25
#: Schedules built side by side: at most this many, fewer where the profile is long.
_BATCH = 256
#: Double-justification rounds per generation at most (each a right and a left pass).
_ROUNDS = 4
#: Share of each generation sampled afresh (regret-biased), for diversity.
_FRESH = 0.1
#: Generations without a shorter best schedule before the population restarts.
_STALL = 15
#: Share of each generation that are one-activity moves of the best schedules.
_NEAR = 0.15
#: How many of the best schedules those moves start from.
_ELITE = 4
#: Schedules kept from one generation to the next.
_POPULATION = 128
#: Probability that an activity swaps with its neighbour in a child's list.
_MUTATION = 0.05
#: Work charged per activity placed in one schedule (calibrated seconds, conservative):
#: measured 2.6-3.3 us of CPU time per activity placed on J30 and J60 on a shared 2-core
#: machine.
CHARGE_PER_PLACEMENT = 4e-6


@dataclass(frozen=True, slots=True)
class _Net:
    """One direction of the precedence network with fixed modes, padded for NumPy:
    predecessors and successors per node (index ``n`` is a sentinel whose finish is 0)."""

    dur: np.ndarray
    dem: np.ndarray
    cap: np.ndarray
    pred: np.ndarray
    lag: np.ndarray
    succ: np.ndarray
    npred: np.ndarray
    horizon: int

    @property
    def n(self) -> int:
        return len(self.dur)


def _pad(lists: list[list[tuple[int, int]]], n: int) -> tuple[np.ndarray, np.ndarray]:
    width = max((len(x) for x in lists), default=0) or 1
    idx = np.full((n, width), n, dtype=np.int64)
    lag = np.zeros((n, width), dtype=np.int64)
    for v, items in enumerate(lists):
        for j, (u, w) in enumerate(items):
            idx[v, j], lag[v, j] = u, w
    return idx, lag


def _nets(inst: Instance, dag: Dag, modes: Sequence[int]) -> tuple[_Net, _Net] | None:
    """The forward and the reversed network, or None when the profile would be too long
    or some mode draws more than a resource holds (no schedule of these modes)."""
    n = dag.n_nodes
    lanes, budgets = list(inst.target.lanes), list(inst.target.budgets)
    names = {**{("lane", k): r for r, k in enumerate(lanes)},
             **{("budget", k): len(lanes) + r for r, k in enumerate(budgets)}}
    cap = np.array([inst.target.lanes[k] for k in lanes] +
                   [inst.target.budgets[k] for k in budgets], dtype=np.int64)
    dur = np.zeros(n, dtype=np.int64)
    dem = np.zeros((n, len(cap)), dtype=np.int64)
    for i in range(inst.n_ops):
        mode = inst.modes[i][modes[i]]
        dur[i] = mode.duration
        for k, v in mode.lanes:
            dem[i, names[("lane", k)]] += v
        for k, v in mode.budgets:
            dem[i, names[("budget", k)]] += v
    if (dem > cap).any():
        return None
    horizon = int(dur.sum()) + sum(max(lag, 0) for _, _, lag in dag.edges) + int(dur.max(
        initial=0)) + 1
    if horizon > MAX_HORIZON or n > MAX_NODES or _batch(n, len(cap), horizon) < 4:
        return None
    preds: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    succs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for p, s, lag in dag.edges:
        preds[s].append((p, lag))
        succs[p].append((s, lag))
    p_idx, p_lag = _pad(preds, n)
    s_idx, s_lag = _pad(succs, n)
    npred = np.array([len(x) for x in preds], dtype=np.int64)
    nsucc = np.array([len(x) for x in succs], dtype=np.int64)
    forward = _Net(dur, dem, cap, p_idx, p_lag, s_idx, npred, horizon)
    backward = _Net(dur, dem, cap, s_idx, s_lag, p_idx, nsucc, horizon)
    return forward, backward


def _batch(n: int, resources: int, horizon: int) -> int:
    """Schedules per SGS batch: :data:`_BATCH`, fewer where a sweep would be long."""
    return min(_BATCH, _SWEEP // max(1, n * max(resources, 1) * horizon))


def _sgs(net: _Net, keys: np.ndarray, rng: np.random.Generator | None = None,
         alpha: np.ndarray | None = None) -> np.ndarray:
    """Serial SGS of ``K`` schedules side by side: per step each schedule takes its
    eligible activity of least key (with ``alpha``: one drawn with weight
    ``(max eligible key - key + 1) ** alpha``) at its earliest start that respects the
    precedences and the free capacity. Returns the starts, ``(K, n)``."""
    k_count, n = keys.shape
    rows = np.arange(k_count)
    longest = int(net.dur.max(initial=0))
    small = np.int16 if int(net.cap.max(initial=0)) < 1 << 15 else np.int64
    demand = net.dem.astype(small)
    free = np.repeat(net.cap.astype(small)[None, :, None], k_count, axis=0)
    free = np.repeat(free, net.horizon, axis=2)
    finish = np.zeros((k_count, n + 1), dtype=np.int64)
    start = np.zeros((k_count, n), dtype=np.int64)
    left = np.zeros((k_count, n + 1), dtype=np.int64)
    left[:, :n] = net.npred
    done = np.zeros((k_count, n), dtype=bool)
    span = np.zeros(k_count, dtype=np.int64)
    times = np.arange(net.horizon)
    for _ in range(n):
        eligible = (left[:, :n] == 0) & ~done
        if rng is None or alpha is None:
            act = np.where(eligible, keys, np.inf).argmin(axis=1)
        else:
            top = np.where(eligible, keys, -np.inf).max(axis=1, keepdims=True)
            weight = (np.maximum(top - keys, 0.0) + 1.0) ** alpha[:, None]
            # The least exponential draw over weight picks each with odds its weight.
            draw = rng.standard_exponential((k_count, n)) / weight
            act = np.where(eligible, draw, np.inf).argmin(axis=1)
        done[rows, act] = True
        es = (finish[rows[:, None], net.pred[act]] + net.lag[act]).max(axis=1)
        es = np.maximum(es, 0)
        dur = net.dur[act]
        lim = min(net.horizon, int(max(span.max(), es.max())) + longest + 1)
        window = free[:, :, :lim]
        fits = (window >= demand[act][:, :, None]).all(axis=1)
        bad = np.zeros((k_count, lim + 1), dtype=np.int32)
        np.cumsum(~fits, axis=1, out=bad[:, 1:])
        t = times[:lim]
        ends = np.minimum(t[None, :] + dur[:, None], lim)
        ok = ((np.take(bad, ends + (rows * (lim + 1))[:, None]) == bad[:, :lim])
              & (t[None, :] >= es[:, None]) & (ends - t[None, :] == dur[:, None]))
        at = ok.argmax(axis=1)
        busy = (t[None, :] >= at[:, None]) & (t[None, :] < (at + dur)[:, None])
        window -= demand[act][:, :, None] * busy[:, None, :]
        start[rows, act] = at
        finish[rows, act] = at + dur
        span = np.maximum(span, at + dur)
        left[rows[:, None], net.succ[act]] -= 1
    return start


def _justify(fwd: _Net, bwd: _Net, start: np.ndarray, rounds: int = _ROUNDS,
             rng: np.random.Generator | None = None) -> tuple[np.ndarray, int]:
    """Double justification of each row of ``start`` (forward schedules), repeated while
    the row shortens: right-justify in order of decreasing finish (the serial SGS on the
    reversed network, in mirrored time), then left-justify in order of increasing start.
    A row that did not shorten keeps its schedule, so none lengthens. Also returns how
    many schedules the passes built."""
    built = 0
    best = start.copy()
    best_span = _spans(fwd, best)
    active = np.arange(len(start))
    for _ in range(rounds):
        if not len(active):
            break
        finish = best[active] + fwd.dur[None, :]
        span = best_span[active]
        mirrored = _sgs(bwd, _ties(rng, span[:, None] - finish))
        back_finish = mirrored + bwd.dur[None, :]
        back_span = back_finish.max(axis=1, initial=0)
        right = back_span[:, None] - back_finish  # the right-justified schedule's starts
        current = _sgs(fwd, _ties(rng, right))
        built += 2 * len(active)
        spans = _spans(fwd, current)
        better = spans < span
        best[active[better]] = current[better]
        best_span[active[better]] = spans[better]
        active = active[better]
    return best, built


def _ties(rng: np.random.Generator | None, keys: np.ndarray) -> np.ndarray:
    """Integer keys as floats, ties broken at random when ``rng`` is given (below one
    unit, so no other order changes): a plateau of equal makespans is explored."""
    if rng is None:
        return keys.astype(np.float64)
    return keys + rng.random(keys.shape) * 0.5


def _spans(net: _Net, start: np.ndarray) -> np.ndarray:
    return (start + net.dur[None, :]).max(axis=1, initial=0)


def choose_modes(inst: Instance, priced: Sequence[Sequence[int]] | None = None
                 ) -> tuple[int, ...]:
    """Per op, the shortest of its allowed modes (``priced``, else all), ties to the least
    total demand relative to capacity, then the lowest index."""
    caps = {**inst.target.lanes, **inst.target.budgets}
    chosen = []
    for i, modes in enumerate(inst.modes):
        allowed = list(priced[i]) if priced is not None and priced[i] else range(len(modes))

        def cost(k: int, modes: tuple = modes) -> tuple[int, float, int]:
            mode = modes[k]
            share = sum(v / max(caps.get(name, 1), 1) for name, v in (*mode.lanes,
                                                                    *mode.budgets))
            return mode.duration, share, k
        chosen.append(min(allowed, key=cost))
    return tuple(chosen)


def _lower(fwd: _Net, dag: Dag) -> int:
    """The longest precedence chain and each resource's energy over its capacity."""
    early = [0] * fwd.n
    for v in dag.topo:
        for j in range(fwd.pred.shape[1]):
            u = int(fwd.pred[v, j])
            if u < fwd.n:
                early[v] = max(early[v], early[u] + int(fwd.dur[u]) + int(fwd.lag[v, j]))
    chain = max((e + int(d) for e, d in zip(early, fwd.dur, strict=True)), default=0)
    energy = (fwd.dem * fwd.dur[:, None]).sum(axis=0)
    caps = np.maximum(fwd.cap, 1)
    return max(chain, int((-(-energy // caps)).max(initial=0)))


def _latest_finish(bwd: _Net, dag: Dag) -> np.ndarray:
    """Latest finish times without resources (the priority of the first sampling), from
    the reversed network ``bwd``."""
    tail = np.zeros(bwd.n, dtype=np.int64)
    for v in reversed(dag.topo):
        for j in range(bwd.pred.shape[1]):
            s = int(bwd.pred[v, j])
            if s < bwd.n:
                tail[v] = max(tail[v], tail[s] + int(bwd.dur[s]) + int(bwd.lag[v, j]))
    chain = int((tail + bwd.dur).max(initial=0))
    return chain - tail


def _legal(fwd: _Net, edges: Sequence[tuple[int, int, int]], start: np.ndarray) -> bool:
    """An independent check of one schedule: precedences with lags and capacities."""
    finish = start + fwd.dur
    if (start < 0).any() or any(start[s] < finish[p] + lag for p, s, lag in edges):
        return False
    usage = np.zeros((len(fwd.cap), int(finish.max(initial=0)) + 1), dtype=np.int64)
    for v in range(fwd.n):
        usage[:, start[v]:finish[v]] += fwd.dem[v][:, None]
    return bool((usage <= fwd.cap[:, None]).all())


def _solution(inst: Instance, modes: Sequence[int], start: np.ndarray) -> Solution:
    return Solution(tuple(modes), tuple(int(x) for x in start[:inst.n_ops]),
                    (0,) * inst.n_buffers)


def double_justify(inst: Instance, dag: Dag, solution: Solution) -> Solution | None:
    """``solution`` (modes kept) after double justification: never longer. None where
    :func:`justified` does not apply (buffers, a profile too long); ``ValueError`` when
    ``solution`` breaks a precedence of ``dag`` or a capacity."""
    nets = None if inst.n_buffers else _nets(inst, dag, solution.modes)
    if nets is None:
        return None
    fwd, bwd = nets
    start = np.zeros((1, fwd.n), dtype=np.int64)
    start[0, :inst.n_ops] = solution.starts
    ends = solution.ends(inst)
    for v in dag.topo:  # barriers: as early as their predecessors allow
        if v >= inst.n_ops:
            start[0, v] = max((start[0, p] + int(fwd.dur[p]) + lag if p >= inst.n_ops
                               else ends[p] + lag) for p, lag in dag.preds[v]) \
                if dag.preds[v] else 0
    if not _legal(fwd, dag.edges, start[0]):
        raise ValueError("double_justify needs a legal schedule")
    out = _justify(fwd, bwd, start)[0][0]
    return _solution(inst, solution.modes, out)


def justified(inst: Instance, dag: Dag, budget: TimeBudget, seed: int = 0, *,
              priced: Sequence[Sequence[int]] | None = None, lower: int = 0
              ) -> Solution | None:
    """The shortest schedule found by justified sampling and a genetic search on
    activity lists within ``budget`` (stops early at ``lower`` or at its own lower
    bound); None for problems with buffers or where a time-indexed profile is too long
    (see the module docstring). Deterministic for a seed while the work budget, not the
    deadline, stops it: each generation is charged :data:`CHARGE_PER_PLACEMENT` per
    activity placed."""
    if inst.n_buffers or not inst.n_ops:
        return None
    modes = choose_modes(inst, priced)
    nets = _nets(inst, dag, modes)
    if nets is None:
        return None
    fwd, bwd = nets
    n = fwd.n
    size = _batch(n, len(fwd.cap), fwd.horizon)
    target = max(lower, _lower(fwd, dag))
    rng = np.random.default_rng(seed)
    lft = _latest_finish(bwd, dag).astype(np.float64)
    rank = np.empty(n, dtype=np.int64)
    rank[list(dag.topo)] = np.arange(n)
    pop = np.zeros((0, n), dtype=np.int64)
    spans = np.zeros(0, dtype=np.int64)
    best, stale = np.zeros(n, dtype=np.int64), 0
    best_span = None
    while True:
        fresh = size if not len(pop) else max(1, int(size * _FRESH))
        alpha = rng.uniform(0.5, 3.0, size=fresh)
        batch = [_sgs(fwd, np.repeat(lft[None, :], fresh, axis=0), rng, alpha)]
        if len(pop):
            near = int(size * _NEAR)
            batch.append(_sgs(fwd, _children(rng, pop, spans, size - fresh - near, rank)))
            batch.append(_sgs(fwd, _moves(rng, pop[:_ELITE], near, rank)))
        starts, built = _justify(fwd, bwd, np.concatenate(batch), rng=rng)
        budget.charge(CHARGE_PER_PLACEMENT * n * (size + built))
        pop, spans = _survivors(fwd, np.concatenate([pop, starts]), _POPULATION)
        stale += 1
        if best_span is None or spans[0] < best_span:
            best, best_span, stale = pop[0], int(spans[0]), 0
        if best_span <= target or budget.exhausted() or interrupt.requested():
            break
        if stale >= _STALL:  # restart from fresh samples; the best so far is kept aside
            pop, spans, stale = pop[:0], spans[:0], 0
    if not _legal(fwd, dag.edges, best):
        return None
    return _solution(inst, modes, best)


def _positions(start: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Each activity's position in the activity list of a schedule: by start time, ties
    by the topological rank (a precedence-feasible list)."""
    n = start.shape[1]
    order = np.argsort(start * n + rank[None, :], axis=1, kind="stable")
    return np.argsort(order, axis=1, kind="stable")


def _children(rng: np.random.Generator, pop: np.ndarray, spans: np.ndarray, count: int,
              rank: np.ndarray) -> np.ndarray:
    """Keys of ``count`` children by Hartmann's two-point crossover of activity lists:
    parents by binary tournament on makespan; the mother's list up to the first cut, then
    the father's order of the activities not yet taken up to the second cut, then the
    mother's order of the rest. Then each activity swaps with its neighbour in the list
    with probability :data:`_MUTATION`."""
    size, n = pop.shape

    def parent() -> np.ndarray:
        a, b = rng.integers(size, size=count), rng.integers(size, size=count)
        return np.where(spans[a] <= spans[b], a, b)

    mother = _positions(pop[parent()], rank)
    father = _positions(pop[parent()], rank)
    cuts = np.sort(rng.integers(0, n + 1, size=(count, 2)), axis=1)
    first = mother < cuts[:, :1]
    rest = np.where(first, n + 1, father)
    within = np.argsort(np.argsort(rest, axis=1, kind="stable"), axis=1, kind="stable")
    middle = ~first & (within < (cuts[:, 1:] - cuts[:, :1]))
    keys = np.where(first, mother, np.where(middle, n + father, 2 * n + mother))
    keys = keys.astype(np.float64)
    swap = rng.random((count, n)) < _MUTATION
    return keys + swap * rng.choice([-1.5, 1.5], size=(count, n))


def _moves(rng: np.random.Generator, elite: np.ndarray, count: int, rank: np.ndarray
           ) -> np.ndarray:
    """Keys of ``count`` neighbours of the ``elite`` schedules' activity lists: one
    activity each moved to a random position (where the precedences allow, the SGS
    takes the eligible activity of least key)."""
    n = elite.shape[1]
    keys = _positions(elite[rng.integers(len(elite), size=count)], rank).astype(np.float64)
    act = rng.integers(n, size=count)
    to = rng.integers(n, size=count)
    rows = np.arange(count)
    keys[rows, act] = to + np.where(to < keys[rows, act], -0.5, 0.5)
    return keys


def _survivors(net: _Net, starts: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``size`` shortest distinct schedules, shortest first (ties by the schedule's
    starts, so the order does not depend on how they were found)."""
    unique = np.unique(starts, axis=0)
    spans = _spans(net, unique)
    total = (unique + net.dur[None, :]).sum(axis=1)
    order = np.lexsort((total, spans))[:size]
    return unique[order], spans[order]
