"""The benchmark's synthetic schedules: legal at scale, and one change is caught."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

import checker

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_checker",
                                                  ROOT / "benchmarks" / "bench_checker.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_synthetic_schedule_is_legal(bench: ModuleType) -> None:
    report = checker.verify(bench.synthetic_schedule(2000))
    assert report.legal, report.violations[:3]
    assert report.stats["ops"] >= 2000 and report.stats["buffers"] * 2 == report.stats["ops"]


@pytest.mark.parametrize("change, code", [
    (lambda d: d["ops"]["mm7"].update(start=d["ops"]["mm7"]["start"] - 1), "LANE_OVERLAP"),
    (lambda d: d["buffers"]["a9"].update(offset=d["buffers"]["a10"]["offset"]), "ALIAS"),
    (lambda d: d["problem"]["ops"]["vec3"]["writes"][0].update(value="Z"), "STALE_READ"),
    (lambda d: d["problem"]["ops"]["st5"]["writes"][0]["box"][0].__setitem__(1, 8),
     "OUTPUT"),
    (lambda d: d["problem"]["ops"]["ld9"]["modes"][0]["budgets"].update(DDR_BW=31), "BUDGET"),
])
def test_one_change_in_a_large_schedule_is_caught(bench: ModuleType, change, code: str) -> None:
    doc = bench.synthetic_schedule(2000)
    change(doc)
    assert code in checker.verify(doc).codes()
