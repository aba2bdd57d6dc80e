"""Hypothesis settings profiles for the whole test suite, chosen by ``HYPOTHESIS_PROFILE``.

- ``ci`` (the default): few examples, derandomized so every run tries the same inputs and
  a red build is reproducible; no deadline, because shared CI machines stall at random.
- ``dev``: the same sizes with a fresh random seed each run and the example database on,
  for local runs that should explore beyond what CI already covered.
- ``long``: thousands of examples per property, for a deliberate hunt (docs/fuzzing.md).

No test hard-codes ``max_examples``: each property takes a share of the active
profile's (a fraction for the expensive ones such as the search fuzzing, a multiple for
cheap ones), see ``tests/fuzz/_budget.py``, so ``long`` reaches every property.

The fixture ``wall_never_binds`` makes every search of a test stop by its deterministic
work budget, so the test cannot depend on the machine's speed or load.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

_SLOW_DRAWS = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True, database=None,
    print_blob=True, suppress_health_check=_SLOW_DRAWS)
settings.register_profile(
    "dev", max_examples=25, deadline=None, print_blob=True,
    suppress_health_check=_SLOW_DRAWS)
settings.register_profile(
    "long", max_examples=2000, deadline=None, print_blob=True,
    suppress_health_check=[*_SLOW_DRAWS, HealthCheck.filter_too_much])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def wall_never_binds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reproducible search in the test stops by its deterministic work budget alone
    (:func:`tests.clock.wall_never_binds`)."""
    from tests.clock import wall_never_binds as unhurried

    unhurried(monkeypatch)
