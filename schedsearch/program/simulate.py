"""Discrete-event runs of a plan under noisy durations, many runs at once in NumPy.

A :class:`RunPlan` (not :class:`schedsearch.plans.Plan`, a saved schedule with its domain)
is what a runtime policy makes of a program (:mod:`.policies`): nodes
(the ops, plus zero-length barrier or launch nodes), orders between them with a delay
(an event's or a barrier's cost), and, for a dynamic runtime, lane demands that any free
unit may serve. A run:

- a node becomes *ready* at ``max(its release, end of each predecessor + the order's
  delay)`` once every predecessor has ended;
- a static plan starts a ready node at once (its queue predecessor, which held the unit,
  is among its orders); a dynamic plan starts ready nodes in priority order while their
  lane kinds have free units (a ready node that does not fit holds back lower-priority
  nodes of the kinds it asks for: no backfilling);
- a node's *work* is its modelled duration times a noise factor; budget draws share the
  bus as :mod:`schedsearch.contention` models it: at each instant each budget is shared
  max-min fairly among the running nodes drawing from it, and every running node
  progresses at ``min over its budgets of share / draw`` (1 where no budget binds;
  :func:`fluid_rates`, :func:`schedsearch.contention.fair_shares` vectorised over runs);
- the makespan is the last end.

Noise: a node of lane kind ``k`` lasts ``duration * exp(sigma_k z - sigma_k^2 / 2)`` with
``z`` standard normal and ``sigma_k^2 = ln(1 + cv_k^2)``: lognormal with the modelled
duration as its mean and coefficient of variation ``cv_k`` (:class:`Jitter`). The ``z``
are drawn per op name, so plans of the same problem run under the same noise.

All runs advance in lockstep: each step moves every unfinished run to its own next event
(a completion or a release), so a step costs a few array operations over runs x nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from models.errors import InputError

__all__ = ["Jitter", "RunPlan", "Runs", "band_order", "fluid_rates", "noise", "run_plan"]

#: Work below this share of a node's work counts as done (float rates).
_EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class Jitter:
    """Coefficient of variation per lane kind; ``default`` for kinds not named."""

    default: float = 0.0
    by_kind: dict[str, float] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str) -> Jitter:
        """``"0.1"``, ``"HMX=0.1,DMA=0.3"`` or ``"0.1,DMA=0.3"`` (a bare number is the
        default for every kind); :class:`InputError` (rule OPTION) otherwise."""
        default = 0.0
        by_kind: dict[str, float] = {}
        for item in spec.split(","):
            kind, _, text = item.strip().rpartition("=")
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not math.isfinite(value) or value < 0 or (kind == "" and "=" in item):
                raise InputError(f"{item.strip()!r} is not CV or KIND=CV with CV >= 0",
                                 source="--jitter", rule="OPTION")
            if kind:
                by_kind[kind] = value
            else:
                default = value
        return cls(default, by_kind)

    def cv(self, kind: str | None) -> float:
        return self.by_kind.get(kind, self.default) if kind is not None else self.default

    def __str__(self) -> str:
        parts = [f"{self.default:g}"] + [f"{k}={v:g}" for k, v in sorted(self.by_kind.items())]
        return ",".join(parts)


@dataclass(frozen=True, slots=True)
class RunPlan:
    """Nodes and orders a policy runs. ``names[:ops]`` are ops; the rest are virtual."""

    names: list[str]
    ops: int
    duration: np.ndarray        # (n,) modelled ticks
    kind: list[str | None]      # lane kind of each node, for the noise
    release: np.ndarray         # (n,) earliest start (a launch)
    src: np.ndarray             # orders: src -> dst after delay
    dst: np.ndarray
    delay: np.ndarray
    draws: np.ndarray           # (n, budgets)
    capacity: np.ndarray        # (budgets,)
    lanes: list[str]            # lane kinds
    units: np.ndarray           # (n, kinds) units each node holds
    unit_counts: np.ndarray     # (kinds,)
    dynamic: bool = False
    priority: np.ndarray | None = None  # (n,) lower first, dynamic plans only


@dataclass(frozen=True, slots=True)
class Runs:
    """Start and end of every node in every run (runs x nodes)."""

    plan: RunPlan
    start: np.ndarray
    end: np.ndarray

    @property
    def makespan(self) -> np.ndarray:
        return self.end.max(axis=1, initial=0.0)


def noise(names: list[str], runs: int, seed: int) -> dict[str, np.ndarray]:
    """A standard normal draw per run for each op name, fixed by ``seed`` and the names
    (sorted), so every plan of a problem sees the same draws."""
    rng = np.random.default_rng(seed)
    ordered = sorted(names)
    z = rng.standard_normal((runs, len(ordered)))
    return {name: z[:, i] for i, name in enumerate(ordered)}


def _work(plan: RunPlan, z: dict[str, np.ndarray], runs: int, jitter: Jitter) -> np.ndarray:
    work = np.broadcast_to(plan.duration.astype(float), (runs, len(plan.names))).copy()
    for i in range(plan.ops):
        sigma2 = math.log1p(jitter.cv(plan.kind[i]) ** 2)
        if sigma2 > 0 and plan.names[i] in z:
            work[:, i] *= np.exp(math.sqrt(sigma2) * z[plan.names[i]] - sigma2 / 2)
    return work


def fluid_rates(running: np.ndarray, draws: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Progress rate of each running node (runs x nodes): over the budgets it draws
    from, the least of its max-min fair share / its draw (at most 1); 1 for a node that
    draws nothing. Per budget, the users in increasing order of draw: the first whose
    draw exceeds an equal split of what the smaller running ones left sets the level
    every larger one gets (:func:`schedsearch.contention.fair_shares`)."""
    rate = np.ones(running.shape)
    for b in range(draws.shape[1] if draws.size else 0):
        users = np.flatnonzero(draws[:, b] > 0)
        if not users.size:
            continue
        users = users[np.argsort(draws[users, b], kind="stable")]
        draw = draws[users, b]
        on = running[:, users]
        asked = on * draw
        taken = np.cumsum(asked, axis=1) - asked          # smaller running draws, whole
        after = on.sum(axis=1, keepdims=True) - np.cumsum(on, axis=1) + on
        level = (capacity[b] - taken) / np.maximum(after, 1)
        binds = on & (draw > level)
        first = binds.argmax(axis=1)
        cap = np.where(binds.any(axis=1), level[np.arange(len(on)), first], np.inf)
        rate[:, users] = np.minimum(rate[:, users], np.minimum(draw, cap[:, None]) / draw)
    return rate


def band_order(plan: RunPlan) -> np.ndarray:
    """The nodes by their earliest start without noise or contention (a longest path from
    the releases over the orders and their delays), ties by index: the order in which
    runs reach them, so that the nodes some run still has ready or running at a step
    are a short band of it (:func:`run_plan`)."""
    n = len(plan.names)
    earliest = plan.release.astype(float).copy()
    indegree = np.bincount(plan.dst, minlength=n)
    by_src = np.argsort(plan.src, kind="stable")
    ptr = np.searchsorted(plan.src[by_src], np.arange(n + 1)).tolist()
    dst, delay = plan.dst[by_src].tolist(), plan.delay[by_src].tolist()
    duration = plan.duration.astype(float).tolist()
    ready = np.flatnonzero(indegree == 0).tolist()
    missing = indegree.tolist()
    while ready:
        node = ready.pop()
        end = earliest[node] + duration[node]
        for e in range(ptr[node], ptr[node + 1]):
            after = dst[e]
            earliest[after] = max(earliest[after], end + delay[e])
            missing[after] -= 1
            if not missing[after]:
                ready.append(after)
    return np.lexsort((np.arange(n), earliest))


def run_plan(plan: RunPlan, z: dict[str, np.ndarray], runs: int, jitter: Jitter) -> Runs:
    """Run ``plan`` ``runs`` times under ``jitter`` with the normal draws ``z``.

    Each step looks only at a band of the nodes in :func:`band_order`: from the first
    one some run has not ended to the last one some run has made ready (every node
    before the band has ended in every run, every node after it is blocked in every
    run), so a step costs runs x band, not runs x nodes."""
    n = len(plan.names)
    order = band_order(plan)
    position = np.empty(n, np.int64)
    position[order] = np.arange(n)
    work = _work(plan, z, runs, jitter)[:, order]
    src, dst = position[plan.src], position[plan.dst]
    by_src = np.argsort(src, kind="stable")
    out_ptr = np.searchsorted(src[by_src], np.arange(n + 1))
    out_dst, out_delay = dst[by_src], plan.delay[by_src]
    draws, units = plan.draws[order], plan.units[order]
    priority = plan.priority[order] if plan.dynamic and plan.priority is not None else None
    missing = np.broadcast_to(np.bincount(dst, minlength=n), (runs, n)).copy()
    ready_at = np.broadcast_to(plan.release[order].astype(float), (runs, n)).copy()
    state = np.where(missing == 0, 1, 0).astype(np.int8)  # 0 blocked 1 ready 2 running 3 done
    left = np.zeros((runs, n))
    start = np.full((runs, n), np.nan)
    end = np.full((runs, n), np.nan)
    now = np.zeros(runs)
    free = np.broadcast_to(plan.unit_counts, (runs, len(plan.lanes))).astype(np.int64).copy()
    lo, hi = 0, int(np.flatnonzero(missing[0] == 0).max(initial=-1)) + 1
    live = np.ones(runs, dtype=bool)
    while live.any():
        while lo < hi and (state[:, lo] == 3).all():
            lo += 1
        band = slice(lo, hi)
        st, ready, lf, w = state[:, band], ready_at[:, band], left[:, band], work[:, band]
        startable = (st == 1) & (ready <= now[:, None] + _EPSILON)
        if priority is not None and startable.any():
            startable = _fit(startable, units[band], free,
                             np.argsort(priority[band], kind="stable"))
            free -= startable.astype(np.int64) @ units[band]
        st[startable] = 2
        start[:, band][startable] = np.broadcast_to(now[:, None], st.shape)[startable]
        lf[startable] = w[startable]
        running = st == 2
        rate = fluid_rates(running, draws[band], plan.capacity)
        finish = np.where(running, lf / np.where(running, rate, 1.0), np.inf)
        wake = np.where((st == 1) & (ready > now[:, None] + _EPSILON), ready, np.inf)
        step = np.minimum(finish.min(axis=1, initial=np.inf),
                          wake.min(axis=1, initial=np.inf) - now)
        live = np.isfinite(step)
        step = np.where(np.isfinite(step), np.maximum(step, 0.0), 0.0)
        lf[...] = np.where(running, lf - rate * step[:, None], lf)
        now = now + step
        done = running & (lf <= _EPSILON * (1.0 + w))
        if not done.any():
            continue
        st[done] = 3
        end[:, band][done] = np.broadcast_to(now[:, None], st.shape)[done]
        if priority is not None:
            free += done.astype(np.int64) @ units[band]
        rr, ii = np.nonzero(done)
        ii = ii + lo
        counts = out_ptr[ii + 1] - out_ptr[ii]
        if counts.sum():
            edges = np.repeat(out_ptr[ii] - np.cumsum(counts) + counts, counts) + \
                np.arange(counts.sum())
            r = np.repeat(rr, counts)
            d = out_dst[edges]
            np.subtract.at(missing, (r, d), 1)
            np.maximum.at(ready_at, (r, d), now[r] + out_delay[edges])
            newly = (state[r, d] == 0) & (missing[r, d] == 0)
            state[r[newly], d[newly]] = 1
            hi = max(hi, int(d[newly].max(initial=-1)) + 1)
    return Runs(plan, start[:, position], end[:, position])


def _fit(startable: np.ndarray, units: np.ndarray, free: np.ndarray,
         rank: np.ndarray) -> np.ndarray:
    """Startable nodes in priority order while each lane kind they ask for has room
    (only the columns startable in some run are looked at)."""
    cols = rank[startable[:, rank].any(axis=0)]
    ordered = startable[:, cols]
    need = units[cols]
    fits = ordered.copy()
    for k in np.flatnonzero(need.any(axis=0)).tolist():
        fits &= need[:, k] <= free[:, k:k + 1]
    ok = fits.copy()
    for k in np.flatnonzero(need.any(axis=0)).tolist():
        used = np.cumsum(fits * need[:, k], axis=1)
        ok &= (need[:, k] == 0) | (used <= free[:, k:k + 1])
    chosen = np.zeros_like(startable)
    chosen[:, cols] = ok
    return chosen
