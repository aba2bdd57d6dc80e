"""Example budgets derived from the active Hypothesis profile (see tests/conftest.py).

Why: no test hard-codes ``max_examples``, so every property grows with the profile
(``long`` is a deliberate hunt). A property whose examples each cost a second (one search
run) takes a fraction of the profile's count; a cheap one may take a multiple.
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["examples"]


def examples(fraction: float, minimum: int = 1) -> int:
    """``fraction`` of the active profile's ``max_examples``, at least ``minimum``."""
    return max(minimum, int(settings().max_examples * fraction))
