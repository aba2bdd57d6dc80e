"""Small chain workloads, tiled and solved once per session (short, deterministic solves)."""

from __future__ import annotations

from typing import Any

import pytest

from models.formats import Problem, Schedule, Target
from models.targets import load_target
from models.workload import tile, workload_from_dict
from schedsearch.chains.paths import ChainResult, chain_paths
from schedsearch.engine.search import solve
from schedsearch.paths import SolveOptions

OPTIONS = SolveOptions(time_limit=0.5, seed=0, workers=1)

#: RMSNorm feeding a GEMM through the temp tensor H.
CHAIN: dict[str, Any] = {
    "name": "chain", "target": "hexagon-v75",
    "tasks": [{"name": "r0", "kind": "rmsnorm", "rows": 64, "cols": 128,
               "block_rows": 32, "x": "X", "weight": "W", "out": "H"},
              {"name": "g0", "kind": "gemm", "M": 64, "N": 64, "K": 128, "a": "H",
               "b": "Wq", "out": "Q"}]}


def tiled(document: dict[str, Any]) -> tuple[Problem, Target]:
    target = load_target(document["target"])
    return tile(workload_from_dict(document, document["name"]), target), target


@pytest.fixture(scope="session")
def chain_problem() -> tuple[Problem, Target]:
    return tiled(CHAIN)


@pytest.fixture(scope="session")
def chain_schedule(chain_problem: tuple[Problem, Target]) -> Schedule:
    problem, target = chain_problem
    return solve(problem, target, time_limit=OPTIONS.time_limit, seed=OPTIONS.seed,
                 workers=OPTIONS.workers)


@pytest.fixture(scope="session")
def chain_result() -> ChainResult:
    """Paths A, B and C of CHAIN's one edge."""
    _, target = tiled(CHAIN)
    (only,) = chain_paths(workload_from_dict(CHAIN, "chain"), target, options=OPTIONS)
    return only
