"""The DDR bandwidth the NPU sees, from measured transfers that ran at the same time.

A transfer of ``bytes`` on a rate mode ``cap`` starts streaming after its latency. Alone
it streams at ``cap``; when several stream at once they share the bus of bandwidth ``B``
max-min fairly (each gets at most its cap, the rest is split evenly among the others).
Given a measured run, the model predicts how many bytes each transfer moved in its
measured streaming window; ``B`` is fitted so that these match the bytes it really moved
(a robust fit of one parameter in log ratio, as :mod:`schedsearch.calibrate.fit`).

Only transfers that overlapped another one say anything about ``B``. If the bus never
bound (every overlap streamed at full caps), the data only say ``B`` is at least the
largest total draw seen: :class:`DdrFit` then carries that lower bound, not an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from schedsearch.calibrate.fit import loss_scale, robust_scale, sandwich_width

__all__ = ["TransferSlice", "DdrFit", "fair_shares", "streamed_bytes", "fit_ddr",
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


def fair_shares(caps: list[float], bandwidth: float) -> list[float]:
    """Max-min fair rates of streams with ``caps`` on a bus of ``bandwidth`` (same order)."""
    shares = [0.0] * len(caps)
    left = bandwidth
    order = sorted(range(len(caps)), key=caps.__getitem__)
    for position, index in enumerate(order):
        shares[index] = min(caps[index], left / (len(caps) - position))
        left -= shares[index]
    return shares


def _segments(slices: list[TransferSlice]) -> list[tuple[float, list[int]]]:
    """(length, indices streaming) for each interval between streaming window bounds."""
    times = sorted({t for s in slices for t in s.streaming})
    found = []
    for lo, hi in zip(times, times[1:], strict=False):
        active = [i for i, s in enumerate(slices)
                  if s.streaming[0] <= lo and hi <= s.streaming[1]]
        if active:
            found.append((hi - lo, active))
    return found


def streamed_bytes(slices: list[TransferSlice], bandwidth: float,
                   segments: list[tuple[float, list[int]]] | None = None) -> np.ndarray:
    """Bytes each transfer moves in its measured streaming window on a bus of ``bandwidth``."""
    moved = np.zeros(len(slices))
    for length, active in segments if segments is not None else _segments(slices):
        for index, share in zip(active, fair_shares([slices[i].cap for i in active],
                                                    bandwidth), strict=True):
            moved[index] += share * length
    return moved


def overlapping(slices: list[TransferSlice]) -> list[TransferSlice]:
    """The transfers whose streaming window overlaps another one's."""
    return [s for s in slices
            if any(o is not s and o.streaming[0] < s.streaming[1]
                   and s.streaming[0] < o.streaming[1] for o in slices)]


def fit_ddr(slices: list[TransferSlice], level: float) -> DdrFit | None:
    """Fit the bus bandwidth from the overlapping transfers of a measured run; None if
    no two transfers overlapped (nothing to fit)."""
    shared = overlapping(slices)
    if len(shared) < 2:
        return None
    segments = _segments(shared)
    peak = max(sum(shared[i].cap for i in active) for _, active in segments)
    measured = np.array([s.nbytes for s in shared])

    def residuals(b: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(streamed_bytes(shared, float(b[0]), segments), 1e-300)) \
            - np.log(measured)

    start = np.array([peak / 2])
    f_scale = loss_scale(residuals(start))
    for _ in range(2):
        result = optimize.least_squares(residuals, start, bounds=(1e-9, peak), loss="soft_l1",
                                        f_scale=f_scale, diff_step=1e-4)
        start = result.x
        f_scale = loss_scale(residuals(start))
    r = residuals(start)
    bandwidth = float(start[0])
    step = bandwidth * 1e-4
    jacobian = ((residuals(start + step) - residuals(start - step)) / (2 * step))[:, None]
    if not np.any(np.abs(jacobian) > 1e-12) or bandwidth >= peak * (1 - 1e-6):
        return DdrFit(None, peak, float("inf"), peak, len(shared), robust_scale(r))
    width = float(sandwich_width(r, jacobian, f_scale, level)[0])
    return DdrFit(bandwidth, max(bandwidth - width, 0.0), bandwidth + width,
                  bandwidth - width, len(shared), robust_scale(r))
