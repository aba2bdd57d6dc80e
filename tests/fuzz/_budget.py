"""Example budgets derived from the active Hypothesis profile (see tests/conftest.py).

Why: a property whose examples each cost a second (one search run) must not take the
profile's full ``max_examples``; it takes a fraction, so ``long`` still scales it up.
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["examples"]


def examples(fraction: float, minimum: int = 1) -> int:
    """``fraction`` of the active profile's ``max_examples``, at least ``minimum``."""
    return max(minimum, int(settings().max_examples * fraction))
