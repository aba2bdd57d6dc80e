"""A robust least-squares fit of ``duration = X @ theta`` with honest intervals.

Durations are linear in ``theta`` (a latency and one inverse rate per rate key), but the
noise of measured durations is relative (a 3 % jitter on a long op is a long jitter), so
the residual fitted is the log ratio ``log(X @ theta) - log(duration)``: the same scale
for every row, and what "percentage error" means. The fit is SciPy's ``least_squares``
with the ``soft_l1`` loss (quadratic near zero, linear far away, so an outlier pulls with
bounded force), its scale set from the median absolute deviation of a plain fit's
residuals (refitting with the robust fit's own scale changed no interval's coverage in
300 seeded repeats and doubled the time).

Intervals come from the M-estimator's sandwich covariance (Huber 1981, 7.6): with
``psi`` the loss's influence function and ``J`` the residuals' Jacobian,
``cov = K^2 * sum(psi^2) / (n - p) / mean(psi')^2 * inv(J^T J)``, ``K`` Huber's small-
sample correction. Each parameter gets a Student-t interval at the level it is asked for;
:func:`simultaneous_level` turns a joint level over many parameters into a per-parameter
one (Bonferroni), which is what a caller who wants every parameter covered at once needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

__all__ = ["OUTLIER_SIGMAS", "LinearFit", "robust_fit", "robust_scale", "sandwich_width",
           "simultaneous_level", "loss_scale"]

#: Residuals beyond this many robust standard deviations are named as outliers.
OUTLIER_SIGMAS = 4.5
#: The soft_l1 scale, in robust standard deviations of a plain fit's residuals.
_SCALE_SIGMAS = 1.5
_MIN_SCALE = 1e-4


@dataclass(frozen=True, slots=True)
class LinearFit:
    """``theta`` with per-parameter intervals at ``level``; ``residuals`` are log ratios
    (model over measured) per row; ``sigma`` their robust standard deviation; ``rank``
    below ``len(theta)`` means the rows cannot tell the parameters apart."""

    theta: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    residuals: np.ndarray
    sigma: float
    rank: int

    @property
    def determined(self) -> bool:
        return self.rank == len(self.theta)

    def outliers(self) -> np.ndarray:
        """Indices of rows whose residual lies beyond ``OUTLIER_SIGMAS`` robust sigmas."""
        return np.flatnonzero(np.abs(self.residuals) > OUTLIER_SIGMAS * self.sigma)


def simultaneous_level(joint: float, count: int) -> float:
    """The per-parameter level at which ``count`` intervals all hold with probability at
    least ``joint`` (Bonferroni: it holds whatever the dependence between them)."""
    return 1 - (1 - joint) / max(1, count)


def robust_scale(residuals: np.ndarray) -> float:
    """1.4826 * median absolute deviation: the standard deviation if the bulk is normal."""
    if residuals.size == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(residuals - np.median(residuals))))


def loss_scale(residuals: np.ndarray) -> float:
    """The soft_l1 scale for residuals like these: a few robust sigmas, never zero."""
    return max(_SCALE_SIGMAS * robust_scale(residuals), _MIN_SCALE)


def _residuals(X: np.ndarray, y: np.ndarray, theta: np.ndarray,
               offset: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(offset + X @ theta, 1e-300)) - np.log(y)


def _jacobian(X: np.ndarray, theta: np.ndarray, offset: np.ndarray) -> np.ndarray:
    return X / np.maximum(offset + X @ theta, 1e-300)[:, None]


def sandwich_width(r: np.ndarray, J: np.ndarray, f_scale: float, level: float) -> np.ndarray:
    """Half-widths of the Student-t intervals at ``level`` of a soft_l1 fit with residuals
    ``r``, Jacobian ``J`` (rows by parameters) and loss scale ``f_scale``."""
    n, p = J.shape
    u = r / f_scale
    psi = r / np.sqrt(1 + u * u)
    dpsi = (1 + u * u) ** -1.5
    mean_dpsi = float(np.mean(dpsi))
    k = 1 + p / n * float(np.var(dpsi)) / mean_dpsi**2
    variance = k * k * float(np.sum(psi * psi)) / (n - p) / mean_dpsi**2
    cov = variance * np.linalg.pinv(J.T @ J)
    quantile = float(special.stdtrit(n - p, 0.5 + level / 2))
    return quantile * np.sqrt(np.maximum(np.diag(cov), 0))


def robust_fit(X: np.ndarray, y: np.ndarray, level: float,
               offset: np.ndarray | None = None) -> LinearFit:
    """Fit ``y ~ offset + X @ theta`` (``theta >= 0``, ``y > 0``, ``X >= 0``; ``offset``,
    a known part of each duration, 0 unless given) robustly in log ratio.

    A rank-deficient ``X`` (every row the same work, say) still returns a fit, with
    ``rank`` saying so and unbounded intervals (``[0, inf]``: ``theta >= 0``) on the
    parameters it cannot separate.
    """
    n, p = X.shape
    known = np.zeros(n) if offset is None else offset
    scale = np.maximum(X.max(axis=0), 1e-300)
    Xs = X / scale  # columns of one magnitude: latency is ~1e2, work ~1e6
    rank = int(np.linalg.matrix_rank(Xs / y[:, None]))
    start, *_ = np.linalg.lstsq(Xs / y[:, None], 1 - known / y, rcond=None)
    start = np.maximum(start, 1e-9)
    f_scale = loss_scale(_residuals(Xs, y, start, known))
    theta = optimize.least_squares(
        lambda t: _residuals(Xs, y, t, known), start,
        jac=lambda t: _jacobian(Xs, t, known),
        bounds=(0, np.inf), loss="soft_l1", f_scale=f_scale, x_scale="jac").x
    r = _residuals(Xs, y, theta, known)
    width = np.full(p, np.inf)
    if rank == p and n > p:
        width = sandwich_width(r, _jacobian(Xs, theta, known), f_scale, level)
    sigma = robust_scale(r)
    theta_out = theta / scale
    return LinearFit(theta=theta_out, low=np.maximum(theta - width, 0) / scale,
                     high=(theta + width) / scale, level=level, residuals=r,
                     sigma=sigma if math.isfinite(sigma) else 0.0, rank=rank)
