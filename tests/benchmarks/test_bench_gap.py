"""The gap benchmark's invariants: bound <= proven bound <= best answer <= the search's
answer, every answer legal, the lane waits no shorter than the forced ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_gap import Case, main, measure, scaled_document
from tests.engine.problems import gemm_problem, target


def check_row(row: dict[str, Any]) -> None:
    assert row["answer_legal"]
    assert row["free_orders"] == 0  # CP-SAT's bound holds for the problem itself
    assert row["bound"] <= row["proven"] <= row["best"] <= row["answer"]
    assert row["optimal"] == (row["proven"] == row["best"])
    for relaxation in row["relaxations"].values():
        assert row["bound"] <= relaxation["bound"] <= row["proven"]
        assert relaxation["bound"] <= relaxation["best"] <= row["answer"]
        if relaxation["status"] == "OPTIMAL":  # a relaxation's optimum is a bound
            assert relaxation["bound"] == relaxation["best"] <= row["best"]
    low, high = row["bound_share"]
    assert 0 <= low <= high <= 1
    waits = row["waits"]
    for found in (waits["answer"], waits["best"]):
        assert found["lead"] >= waits["forced_lead"]
        assert found["tail"] >= waits["forced_tail"]
        assert found["inner"] >= 0


def test_a_small_gemm_splits_its_gap_exactly() -> None:
    case = Case("gemm", target(1 << 16), "full", gemm_problem(blocks=3, k_steps=2))
    row = measure(case, limit=1.0, cpsat_limit=30.0, seed=0, workers=2, reproducible=True,
                  whole_model_stage=False)
    check_row(row)
    assert set(row["relaxations"]) == {"MX", "DMA+BW"}
    assert row["optimal"]  # 12 ops: CP-SAT proves its optimum in well under a second
    assert row["bound_share"][0] == row["bound_share"][1]
    # MX has one unit: its idle gaps before and between its ops are its lead and inner
    waits, gaps = row["waits"]["answer"], row["idle_gaps"]["answer"]
    assert sum(g["idle"] for g in gaps.values()) == waits["lead"] + waits["inner"]
    assert all(0 <= g["late"] + g["slow"] <= g["idle"] for g in gaps.values())


def test_scaled_layers_keep_the_models_proportions() -> None:
    llama = scaled_document("llama-3.2-1b-prefill", "h4t32")
    gemms = {t["name"]: t for t in llama["tasks"] if t["kind"] == "gemm"}
    attention = next(t for t in llama["tasks"] if t["kind"] == "attention")
    assert (attention["heads"], attention["kv_heads"], attention["q_len"]) == (4, 1, 32)
    assert gemms["q_proj"]["K"] == 4 * 64 and gemms["gate_proj"]["N"] == 4 * 4 * 64
    decode = scaled_document("qwen2.5-0.5b-decode", "p128")
    attention = next(t for t in decode["tasks"] if t["kind"] == "attention")
    assert (attention["heads"], attention["past"], attention["q_len"]) == (14, 128, 1)
    with pytest.raises(ValueError):
        scaled_document("llama-3.2-1b-prefill", "x4")


def test_the_quick_run_holds_every_invariant(tmp_path: Path) -> None:
    out = tmp_path / "gap.json"
    assert main(["--quick", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 1
    check_row(rows[0])
