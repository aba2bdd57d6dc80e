"""``whatif``: one thing idealised at a time, then all together, each solved and verified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.cost import overheads
from models.formats import Problem, Target
from schedsearch.cli import main
from schedsearch.idealise import (
    Idealisation,
    IdealKind,
    WhatIf,
    idealisations,
    idealise,
    whatif,
)
from tests.chains.conftest import OPTIONS


def test_idealise_each_resource(chain_problem: tuple[Problem, Target]) -> None:
    problem, target = chain_problem
    costs = overheads(target)
    fast, _, _ = idealise(problem, target, costs, [Idealisation(IdealKind.LANE, "HMX")])
    for name, op in problem.ops.items():
        for before, after in zip(op.modes, fast.ops[name].modes, strict=True):
            assert after.duration == (1 if before.lanes.get("HMX") else before.duration)
    _, wide, _ = idealise(problem, target, costs, [Idealisation(IdealKind.BUDGET, "DDR_BW")])
    draws = sum(max(m.budgets.get("DDR_BW", 0) for m in op.modes)
                for op in problem.ops.values())
    assert wide.budgets["DDR_BW"] >= draws > target.budgets["DDR_BW"]
    _, roomy, _ = idealise(problem, target, costs, [Idealisation(IdealKind.MEMORY, "VTCM")])
    assert roomy.memories["VTCM"].capacity_bytes >= sum(b.size for b in
                                                         problem.buffers.values())
    same, _, free = idealise(problem, target, costs, [Idealisation(IdealKind.SYNC)])
    assert same == problem
    assert (free.launch_ns, free.event_ns, free.barrier_ns) == (0, 0, 0)


@pytest.fixture(scope="module")
def result(chain_problem: tuple[Problem, Target]) -> WhatIf:
    return whatif(*chain_problem, options=OPTIONS)


def test_rows_are_baseline_singles_and_combined(result: WhatIf,
                                                 chain_problem: tuple[Problem, Target]) -> None:
    _, target = chain_problem
    assert result.rows[0].idealised == ()
    assert [row.idealised for row in result.rows[1:-1]] == [(i,) for i in
                                                            idealisations(target)]
    assert set(result.combined.idealised) == set(idealisations(target))


def test_every_row_is_legal_and_no_slower_than_the_baseline(result: WhatIf) -> None:
    base = result.rows[0].result
    for row in result.rows:
        assert row.result.legal, (row.label, row.result.violations)
        assert row.result.makespan <= base.makespan
        assert row.gain == pytest.approx(base.makespan / row.result.makespan)


def test_free_sync_removes_exactly_the_overhead(result: WhatIf) -> None:
    base = result.rows[0].result
    row = next(r for r in result.rows if r.idealised == (Idealisation(IdealKind.SYNC),))
    assert row.result.device_makespan == base.device_makespan
    assert row.result.overhead == 0
    assert row.estimate == pytest.approx(row.gain)


def test_combined_row_is_solved_not_multiplied(result: WhatIf) -> None:
    """All lanes at 1 tick: the combined device time is tiny, far from any product."""
    assert result.combined.result.device_makespan < result.rows[0].result.device_makespan / 10
    assert result.combined.result.overhead == 0


def test_cli_json_and_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    workload = tmp_path / "w.toml"
    workload.write_text('name = "w"\ntarget = "hexagon-v75"\n[[tasks]]\nname = "c"\n'
                        'kind = "copy"\nrows = 32\ncols = 64\n')
    assert main(["whatif", str(workload), "--json", "--time-limit", "0.3",
                 "--workers", "1"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["rows"][0]["idealised"] == "baseline"
    assert figures["rows"][-1]["idealised"] == "all together"
    assert figures["combined_gain"] == figures["rows"][-1]["gain"]
    assert main(["whatif", str(tmp_path / "missing.toml")]) == 2
