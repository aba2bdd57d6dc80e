"""The DDR bandwidth the NPU sees, from measured transfers that ran at the same time.

A transfer of ``bytes`` on a rate mode ``cap`` starts streaming after its latency. Alone
it streams at ``cap``; when several stream at once they share the bus of bandwidth ``B``
max-min fairly (each gets at most its cap, the rest is split evenly among the others:
the project's bus model, :func:`schedsearch.contention.fair_shares`).
Given a measured run, the model predicts how many bytes each transfer moved in its
measured streaming window; ``B`` is fitted so that these match the bytes it really moved
(a robust fit of one parameter in log ratio, as :mod:`schedsearch.calibrate.fit`).

Only transfers that overlapped another one say anything about ``B``. If the bus never
bound (every overlap streamed at full caps), the data only say ``B`` is at least the
largest total draw seen: :class:`DdrFit` then carries that lower bound, not an estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from schedsearch.calibrate.fit import OUTLIER_SIGMAS, loss_scale, robust_scale

__all__ = ["TransferSlice", "DdrFit", "streamed_bytes", "fit_ddr",
           "overlapping"]


@dataclass(frozen=True, slots=True)
class TransferSlice:
    """A measured transfer: its window (ticks), bytes moved, its mode's rate and latency."""

    name: str
    start: float
    end: float
    nbytes: float
    cap: float
    latency: float

    @property
    def streaming(self) -> tuple[float, float]:
        return min(self.start + self.latency, self.end), self.end


@dataclass(frozen=True, slots=True)
class DdrFit:
    """``bandwidth`` with its interval when the bus bound in the measured run; otherwise
    ``bandwidth`` is None and ``lower_bound`` the largest total draw that ran unslowed."""

    bandwidth: float | None
    low: float
    high: float
    lower_bound: float
    slices: int
    sigma: float


@dataclass(frozen=True, slots=True)
class _Segments:
    """The intervals between streaming-window bounds, grouped by how many transfers
    stream in them: per count ``k``, the lengths (S), the transfers (S x k) and their
    caps (S x k), each row sorted by cap, so fair shares are computed a column at a time
    for all intervals at once (a fit evaluates them a hundred times)."""

    groups: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    peak: float


def _segments(slices: list[TransferSlice]) -> _Segments:
    """A sweep over the window bounds (what ends at a bound leaves before what starts)."""
    starts: dict[float, list[int]] = {}
    ends: dict[float, list[int]] = {}
    for i, s in enumerate(slices):
        lo, hi = s.streaming
        if hi > lo:
            starts.setdefault(lo, []).append(i)
            ends.setdefault(hi, []).append(i)
    times = sorted(starts.keys() | ends.keys())
    by_count: dict[int, list[tuple[float, list[int]]]] = {}
    active: set[int] = set()
    for lo, hi in zip(times, times[1:], strict=False):
        active.difference_update(ends.get(lo, ()))
        active.update(starts.get(lo, ()))
        if active:
            order = sorted(active, key=lambda i: slices[i].cap)
            by_count.setdefault(len(order), []).append((hi - lo, order))
    groups = []
    for entries in by_count.values():
        who = np.array([order for _, order in entries])
        caps = np.array([[slices[i].cap for i in order] for _, order in entries])
        groups.append((np.array([length for length, _ in entries]), who, caps))
    peak = max((float(caps.sum(axis=1).max()) for _, _, caps in groups), default=0.0)
    return _Segments(groups, peak)


def streamed_bytes(slices: list[TransferSlice], bandwidth: float,
                   segments: _Segments | None = None) -> np.ndarray:
    """Bytes each transfer moves in its measured streaming window on a bus of
    ``bandwidth``, sharing it as :func:`fair_shares` does."""
    moved = np.zeros(len(slices))
    for lengths, who, caps in (segments or _segments(slices)).groups:
        left = np.full(len(lengths), float(bandwidth))
        count = who.shape[1]
        for column in range(count):
            share = np.minimum(caps[:, column], left / (count - column))
            left -= share
            np.add.at(moved, who[:, column], share * lengths)
    return moved


def overlapping(slices: list[TransferSlice]) -> list[TransferSlice]:
    """The transfers whose streaming window overlaps another one's (``o.start < s.end``
    and ``s.start < o.end``), counted by bisection rather than over all pairs: the others
    starting before ``s`` ends, less those that ended by the time ``s`` starts. Empty
    windows (a transfer no longer than its latency) stream nothing and take no part."""
    streaming = [s for s in slices if s.streaming[1] > s.streaming[0]]
    starts = np.sort([s.streaming[0] for s in streaming])
    ends = np.sort([s.streaming[1] for s in streaming])
    return [s for s in streaming
            if np.searchsorted(starts, s.streaming[1], side="left") - 1
            - np.searchsorted(ends, s.streaming[0], side="right") > 0]


def _crossing(f, a: float, b: float) -> float:
    """Where ``f`` changes sign between ``a`` and ``b`` (``f(a)``, ``f(b)`` of opposite sign)."""
    return float(optimize.brentq(f, a, b, xtol=1e-9 * b)) if f(a) * f(b) < 0 else a


def fit_ddr(slices: list[TransferSlice], level: float) -> DdrFit | None:
    """Fit the bus bandwidth from the overlapping transfers of a measured run; None if
    no two transfers overlapped (nothing to fit).

    The interval is a profile one: every bandwidth whose sum of squared residuals (over
    the rows the robust fit keeps) exceeds the best by less than ``F(1, n-1)`` at
    ``level`` times the residual variance. The model is flat in the bandwidth wherever
    the bus does not bind, so a delta-method interval would be wrong there; if the
    profile interval reaches the largest total draw seen, the data cannot tell the
    bandwidth from "never binds" and only its lower end is reported.
    """
    shared = overlapping(slices)
    if len(shared) < 2:
        return None
    segments = _segments(shared)
    peak = segments.peak
    measured = np.log([s.nbytes for s in shared])

    def residuals(bandwidth: float) -> np.ndarray:
        moved = streamed_bytes(shared, bandwidth, segments)
        return np.log(np.maximum(moved, 1e-300)) - measured

    best = np.array([peak / 2])
    f_scale = loss_scale(residuals(peak / 2))
    for _ in range(2):
        result = optimize.least_squares(lambda b: residuals(float(b[0])), best,
                                        bounds=(peak / 1000, peak), loss="soft_l1",
                                        f_scale=f_scale, diff_step=1e-4)
        best = result.x
        f_scale = loss_scale(residuals(float(best[0])))
    bandwidth = float(best[0])
    r = residuals(bandwidth)
    sigma = robust_scale(r)
    keep = np.abs(r) <= OUTLIER_SIGMAS * max(sigma, 1e-12)
    n = int(keep.sum())
    floor = float(np.sum(r[keep] ** 2))
    threshold = floor + floor / max(n - 1, 1) * float(special.fdtri(1, max(n - 1, 1), level))

    def excess(b: float) -> float:
        return float(np.sum(residuals(b)[keep] ** 2)) - threshold

    grid = np.unique(np.append(np.geomspace(peak / 1000, peak, 64), bandwidth))
    inside = [b for b in grid if excess(b) <= 0] or [bandwidth]
    below = grid[grid < inside[0]]
    low = _crossing(excess, float(below[-1]), inside[0]) if below.size else inside[0]
    if excess(peak) <= 0:
        return DdrFit(None, low, math.inf, low, len(shared), sigma)
    above = grid[grid > inside[-1]]
    high = _crossing(excess, inside[-1], float(above[0])) if above.size else inside[-1]
    return DdrFit(bandwidth, low, high, low, len(shared), sigma)
