"""Fluid sharing of budgets (DDR bandwidth) between ops that run at the same time: the
project's one bus model.

Concurrent kernels (path 2 of docs/paths.md) are each scheduled as if they had the whole
DDR bandwidth. Placed side by side, their draws can add up to more than the budget's
capacity; the hardware then does not refuse an op, it slows the heavy streams down. The
model (:func:`fair_shares`):

    At each instant t, each budget b with capacity C_b is shared max-min fairly among the
    running ops that draw from it, each asking for its draw: an op asking for less than
    an equal split of what is left gets all it asks for, the others share the rest
    equally. A running op i progresses through its work (its window length in the
    uncontended schedule) at rate

        r_i(t) = min over budgets b that i draws from of share_ib(t) / draw_ib

    (1 when the budget does not bind) and ends when its work is done. An op with no draw
    always runs at rate 1.

Why max-min fair and not every stream slowed in proportion: a bus arbiter serves its
requesters in turn, so a light stream (a small copy) keeps its rate while the heavy ones
lose theirs; and the target's DDR bandwidth is fitted under this model from traced runs
(:mod:`schedsearch.calibrate.ddr`), so it is the model under which that figure means
what it says. The event simulator of programs (:func:`schedsearch.program.simulate.
fluid_rates`) applies the same rule, vectorised over runs.

Nothing else changes: an op that started after another op of its kernel had ended (in the
uncontended schedule) still starts after it, so every lane, buffer and data order inside
a kernel survives. Concretely, with ``delta_a = end'_a - end_a`` the delay of op ``a``
and ``D_k(t)`` the largest delay among ops of kernel ``k`` with ``end_a <= t``, op ``b``
of kernel ``k`` starts at ``start_b + D_k(start_b)``, and a buffer window ``[alloc, free)``
becomes ``[alloc + D_k(alloc), free + D_k(free))``. Progress runs in continuous time;
each completion is recorded rounded up to a whole tick, and starts are computed from the
recorded ends, so every stretched time is an integer.

Hand-computed example (tests/paths/test_contention.py): capacity 60, op A draws 40 over
[0, 100), op B of another kernel draws 40 over [50, 150). A runs alone until 50 (50 of
its 100 units done); from 50 both run at 60/80 = 0.75, so A finishes at 50 + 50/0.75 =
116.67, recorded as 117; B has done 0.75 * 66.67 = 50 by then and runs its last 50
alone, finishing at 166.67, recorded as 167. Uncontended makespan 150, contended 167: the
contention cost is 17 ticks.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Activity", "Contention", "simulate", "overloaded", "fair_shares"]

#: Work left below this share of an op's work counts as done (float fluid rates).
_EPSILON = 1e-9


def fair_shares(draws: Sequence[float], capacity: float) -> list[float]:
    """Max-min fair shares of ``capacity`` among streams asking for ``draws`` (same
    order): in increasing order of draw, each gets its draw or an equal split of what is
    left, whichever is less."""
    shares = [0.0] * len(draws)
    left = capacity
    order = sorted(range(len(draws)), key=draws.__getitem__)
    for position, index in enumerate(order):
        shares[index] = min(draws[index], left / (len(draws) - position))
        left -= shares[index]
    return shares


@dataclass(frozen=True, slots=True)
class Activity:
    """One op of one kernel: its uncontended window and what it draws per tick."""

    name: str
    kernel: str
    start: int
    end: int
    draws: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Contention:
    """Result of :func:`simulate`: stretched windows and the delay function per kernel."""

    windows: dict[str, tuple[int, int]]
    makespan: int
    uncontended_makespan: int
    _ends: dict[str, list[int]]
    _delays: dict[str, list[int]]

    @property
    def cost(self) -> int:
        """Contended minus uncontended makespan: what sharing the budgets costs."""
        return self.makespan - self.uncontended_makespan

    def shift(self, kernel: str, time: int) -> int:
        """``time + D_k(time)``: where an instant of ``kernel``'s timeline moves to."""
        ends = self._ends.get(kernel, [])
        count = bisect.bisect_right(ends, time)
        return time + (self._delays[kernel][count - 1] if count else 0)


def overloaded(activities: Sequence[Activity], capacities: Mapping[str, int]) -> bool:
    """Whether the running draws ever exceed a capacity in the uncontended windows."""
    events: list[tuple[int, int, Mapping[str, int]]] = []
    for a in activities:
        if a.end > a.start and a.draws:
            events.append((a.start, 1, a.draws))
            events.append((a.end, -1, a.draws))
    events.sort(key=lambda e: (e[0], e[1]))  # ends before starts at the same instant
    load = dict.fromkeys(capacities, 0)
    for _, sign, draws in events:
        for budget, amount in draws.items():
            if budget in load:
                load[budget] += sign * amount
                if load[budget] > capacities[budget]:
                    return True
    return False


def simulate(activities: Sequence[Activity], capacities: Mapping[str, int]) -> Contention:
    """Run the fluid-sharing model of the module docstring on ``activities``.

    Raises :class:`ValueError` for a window that ends before it starts, a repeated name,
    or a draw on a budget without positive capacity (the op could never progress).
    """
    by_name: dict[str, Activity] = {}
    for a in activities:
        if a.end < a.start:
            raise ValueError(f"activity {a.name!r} ends before it starts")
        if a.name in by_name:
            raise ValueError(f"activity {a.name!r} appears twice")
        for budget, amount in a.draws.items():
            if amount > 0 and capacities.get(budget, 0) <= 0:
                raise ValueError(f"activity {a.name!r} draws on {budget!r}, which has no "
                                 "capacity")
        by_name[a.name] = a
    state = _Simulation(by_name, capacities)
    state.run()
    windows = {name: (state.starts[name], state.finished[name]) for name in by_name}
    return Contention(
        windows=windows,
        makespan=max((end for _, end in windows.values()), default=0),
        uncontended_makespan=max((a.end for a in activities), default=0),
        _ends={k: [by_name[n].end for n in names] for k, names in state.order.items()},
        _delays={k: delays[1:] for k, delays in state.prefix_delay.items()})


def _key(a: Activity) -> tuple[int, int]:
    return (a.end, a.start)


class _Simulation:
    """Event-driven state of :func:`simulate` (kept in one place so the loop stays short).

    Per kernel, ops sorted by ``(end, start)``; op ``b`` waits for the prefix of ops whose
    key is at most ``(start_b, start_b)`` (strictly below for a zero-length ``b``, so that
    zero-length ops at one instant never wait for each other). Waiting only on strictly
    smaller keys rules out cycles.
    """

    def __init__(self, by_name: Mapping[str, Activity], capacities: Mapping[str, int]):
        self.by_name = by_name
        self.capacities = capacities
        kernels: dict[str, list[Activity]] = {}
        for a in by_name.values():
            kernels.setdefault(a.kernel, []).append(a)
        self.order = {k: [a.name for a in sorted(ops, key=_key)] for k, ops in kernels.items()}
        self.waits_for: dict[str, int] = {}
        for k, ops in kernels.items():
            keys = [_key(by_name[n]) for n in self.order[k]]
            for a in ops:
                point = (a.start, a.start)
                self.waits_for[a.name] = (bisect.bisect_right(keys, point) if a.end > a.start
                                          else bisect.bisect_left(keys, point))
        self.waiting = {k: sorted((a.name for a in ops), key=self.waits_for.__getitem__,
                                  reverse=True) for k, ops in kernels.items()}
        self.done_prefix = dict.fromkeys(kernels, 0)
        self.prefix_delay = {k: [0] for k in kernels}
        self.pending: list[tuple[int, str]] = []
        self.running: dict[str, float] = {}
        self.starts: dict[str, int] = {}
        self.finished: dict[str, int] = {}

    def run(self) -> None:
        for kernel in self.order:
            self._release(kernel)
        now = 0.0
        while self.pending or self.running:
            rates = self._rates()
            next_start = self.pending[0][0] if self.pending else math.inf
            next_end = min((now + left / rates[n] for n, left in self.running.items()),
                           default=math.inf)
            moment = min(next_start, next_end)
            for name in self.running:
                self.running[name] -= rates[name] * (moment - now)
            now = moment
            self._complete(now)
            while self.pending and self.pending[0][0] <= now + _EPSILON:
                start, name = heapq.heappop(self.pending)
                self.starts[name] = start
                self.running[name] = float(self.by_name[name].end - self.by_name[name].start)

    def _rates(self) -> dict[str, float]:
        users: dict[str, list[str]] = {}
        for name in self.running:
            for budget, amount in self.by_name[name].draws.items():
                if amount > 0:
                    users.setdefault(budget, []).append(name)
        rates = dict.fromkeys(self.running, 1.0)
        for budget, names in users.items():
            draws = [float(self.by_name[n].draws[budget]) for n in names]
            for name, draw, share in zip(names, draws,
                                         fair_shares(draws, self.capacities[budget]),
                                         strict=True):
                rates[name] = min(rates[name], share / draw)
        return rates

    def _complete(self, now: float) -> None:
        done = sorted(n for n, left in self.running.items()
                      if left <= _EPSILON * (1 + self.by_name[n].end - self.by_name[n].start))
        for name in done:
            del self.running[name]
            self.finished[name] = max(self.starts[name], math.ceil(now - _EPSILON))
        for kernel in sorted({self.by_name[n].kernel for n in done}):
            order = self.order[kernel]
            delays = self.prefix_delay[kernel]
            while (self.done_prefix[kernel] < len(order)
                   and order[self.done_prefix[kernel]] in self.finished):
                name = order[self.done_prefix[kernel]]
                delays.append(max(delays[-1], self.finished[name] - self.by_name[name].end))
                self.done_prefix[kernel] += 1
            self._release(kernel)

    def _release(self, kernel: str) -> None:
        queue = self.waiting[kernel]
        while queue and self.waits_for[queue[-1]] <= self.done_prefix[kernel]:
            name = queue.pop()
            start = self.by_name[name].start + self.prefix_delay[kernel][self.waits_for[name]]
            heapq.heappush(self.pending, (start, name))
