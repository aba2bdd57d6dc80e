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


#: How many times its work a reproducible search's wall-clock net is under
#: :func:`wall_never_binds`: far beyond any load a shared machine reaches (at load 8 on
#: 2 cores a search ran 4 times its work), so the work budget, which repeats, always
#: stops the search first.
UNHURRIED_NET = 1000.0


@pytest.fixture
def wall_never_binds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reproducible search in the test stops by its deterministic work budget alone.

    Why: a test that compares two searches, or counts the stages one ran, must not
    depend on how much work fits into a wall-clock second. Each reproducible time budget
    (every solve's, each task's solved alone inside one, tuning's screening and
    finalists) gets a wall-clock net of :data:`UNHURRIED_NET` times its work instead of
    its nominal limit; the work granted is unchanged, so the test takes the time it took
    on an idle machine.
    """
    from schedsearch.engine.timebudget import TimeBudget

    real = TimeBudget.start

    def unhurried(seconds: float, *, wall: float | None = None, begin: float | None = None,
                  reproducible: bool = True) -> TimeBudget:
        if reproducible:
            wall = UNHURRIED_NET * seconds
        return real(seconds, wall=wall, begin=begin, reproducible=reproducible)

    monkeypatch.setattr(TimeBudget, "start", staticmethod(unhurried))
    monkeypatch.setattr("schedsearch.tuning.screen.WALL_SLACK", UNHURRIED_NET)
    monkeypatch.setattr("schedsearch.tuning.joint.WALL_SLACK", UNHURRIED_NET)
