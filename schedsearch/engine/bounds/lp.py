"""Turning an LP optimum into a makespan bound.

The simplex method's optimum is exact only to about 1e-9, and a bound must never exceed
the true optimum; makespans are integers, so a bound may be rounded up once a small
relative slack is taken off.
"""

from __future__ import annotations

import math

__all__ = ["LP_TOLERANCE", "ceil_bound"]

#: Relative slack taken off an LP optimum before rounding up.
LP_TOLERANCE = 1e-6


def ceil_bound(value: float) -> int:
    """The integer makespan bound an LP optimum ``value`` proves."""
    return max(0, math.ceil(value - LP_TOLERANCE * max(1.0, value)))
