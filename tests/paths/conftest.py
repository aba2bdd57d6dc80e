"""Fixtures: the small workloads of ``paths_workloads`` tiled, and compared once per session."""

from __future__ import annotations

import pytest

from models.formats import Problem, Target
from schedsearch.paths import Comparison, compare
from tests.clock import wall_never_binds
from tests.paths.paths_workloads import CHAIN, COPIES, OPTIONS, PAIR, tiled


@pytest.fixture(scope="session")
def pair() -> tuple[Problem, Target]:
    return tiled(PAIR)


@pytest.fixture(scope="session")
def chain() -> tuple[Problem, Target]:
    return tiled(CHAIN)


@pytest.fixture(scope="session")
def copies() -> tuple[Problem, Target]:
    return tiled(COPIES)


@pytest.fixture(scope="session")
def compared(pair: tuple[Problem, Target], chain: tuple[Problem, Target],
             copies: tuple[Problem, Target]) -> dict[str, Comparison]:
    with pytest.MonkeyPatch.context() as patch:  # the same comparisons at any load
        wall_never_binds(patch)
        return {name: compare(*problem, options=OPTIONS)
                for name, problem in (("pair", pair), ("chain", chain), ("copies", copies))}
