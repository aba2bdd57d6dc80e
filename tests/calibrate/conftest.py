"""Shared data for the calibration tests: a synthetic truth, a small solved schedule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.formats import Schedule, Target, schedule_to_dict
from models.targets import load_target
from models.workload import tile, workload_from_dict
from schedsearch.calibrate.synthetic import TRUTH_V75, truth_target
from schedsearch.engine.search import solve

#: A GEMM and an RMSNorm of about 60 ops, solved in a second; most of its loads overlap.
SMALL = {"name": "small", "target": "hexagon-v75", "tasks": [
    {"name": "g0", "kind": "gemm", "M": 256, "N": 256, "K": 128, "bm": 64, "bn": 128},
    {"name": "r0", "kind": "rmsnorm", "rows": 512, "cols": 1024}]}


@pytest.fixture(scope="session")
def v75() -> Target:
    return load_target("hexagon-v75")


@pytest.fixture(scope="session")
def truth(v75: Target) -> Target:
    return truth_target(v75, TRUTH_V75)


@pytest.fixture(scope="session")
def schedule(v75: Target) -> Schedule:
    problem = tile(workload_from_dict(SMALL, "<small>"), v75)
    return solve(problem, v75, time_limit=1.0, workers=1)


@pytest.fixture
def schedule_file(tmp_path: Path, schedule: Schedule) -> Path:
    path = tmp_path / "schedule.json"
    path.write_text(json.dumps(schedule_to_dict(schedule)))
    return path
