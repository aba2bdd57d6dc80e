"""Path C pays the fused compute factor, and the sweep names the winner at each factor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.cost import cost_model
from models.layouts import layout_costs, with_fused_factor
from models.workload import workload_from_dict
from schedsearch import cli
from schedsearch.chains.paths import PathName, chain_edges, path_c
from schedsearch.chains.sweep import EdgeSweep, pressure_sweep
from tests.chains.conftest import CHAIN, OPTIONS, tiled


def main(argv: list[str]) -> int:
    """``schedsearch chain sweep ARGV``."""
    return cli.main(["chain", "sweep", *argv])


def test_path_c_computes_slower_by_the_factor_and_moves_data_as_fast() -> None:
    workload = workload_from_dict(CHAIN, "chain")
    (edge,) = chain_edges(workload)
    _, v75 = tiled(CHAIN)
    engines = {cost_model(v75).matrix.lane, cost_model(v75).vector.lane}
    free, pressed = (path_c(workload, edge, with_fused_factor(v75, f), OPTIONS)
                     for f in (1.0, 1.5))
    assert free.result.legal and pressed.result.legal
    assert "x1.5" in pressed.variant
    before, after = free.result.schedule.problem.ops, pressed.result.schedule.problem.ops
    assert before.keys() == after.keys()
    for name, op in before.items():
        for m0, m1 in zip(op.modes, after[name].modes, strict=True):
            compute = any(m0.lanes.get(lane, 0) for lane in engines)
            assert m1.duration == (-(-m0.duration * 3 // 2) if compute else m0.duration)
    assert pressed.result.device_makespan > free.result.device_makespan


@pytest.fixture(scope="module")
def sweep() -> EdgeSweep:
    _, v75 = tiled(CHAIN)
    (only,) = pressure_sweep(workload_from_dict(CHAIN, "chain"), v75, (1.0, 1.15, 4.0),
                             options=OPTIONS)
    return only


def test_the_winner_at_each_factor_is_the_fastest_path(sweep: EdgeSweep) -> None:
    a, b = (sweep.result.path(n) for n in (PathName.A, PathName.B))
    assert a is not None and b is not None
    assert sweep.stated == layout_costs(tiled(CHAIN)[1]).fused_compute_factor
    assert [p.factor for p in sweep.points] == [1.0, 1.15, 4.0]
    for point in sweep.points:
        assert point.c is not None and point.c.result.legal
        times = {PathName.A: a.result.makespan, PathName.B: b.result.makespan,
                 PathName.C: point.c.result.makespan}
        assert times[point.winner] == min(times.values())
    # the target's own figure is path C as chain_paths built it, not solved again
    assert sweep.points[1].c is sweep.result.path(PathName.C)
    first, last = sweep.points[0].c, sweep.points[-1].c
    assert first is not None and last is not None
    assert last.result.makespan > first.result.makespan


def test_no_path_c_at_any_factor_where_it_cannot_exist() -> None:
    document = {**CHAIN, "target": "ascend-910b-core"}
    _, ascend = tiled(document)
    (only,) = pressure_sweep(workload_from_dict(document, "chain"), ascend, (1.0, 1.3),
                             options=OPTIONS)
    best = only.result.best.path
    assert [(p.c, p.winner) for p in only.points] == [(None, best), (None, best)]


def test_command_refuses_a_factor_below_one() -> None:
    assert main(["rmsnorm-gemm-chain-v75", "--factors", "1,0.9"]) == 2


def test_command_writes_each_edge_with_its_winners(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    norm, gemm = CHAIN["tasks"]
    tiny = {**CHAIN, "tasks": [{**norm, "rows": 32, "cols": 64},
                               {**gemm, "M": 32, "N": 32, "K": 64}]}
    path, out = tmp_path / "chain.json", tmp_path / "sweep.json"
    path.write_text(json.dumps(tiny))
    assert main([str(path), "--factors", "1,1.15", "--time-limit", "0.1",
                 "--json", str(out)]) == 0
    assert "(the target's figure)" in capsys.readouterr().out
    ((edge,),) = json.loads(out.read_text()).values()
    assert edge["stated_factor"] == 1.15 and edge["ceiling"] >= 1
    assert [p["factor"] for p in edge["points"]] == [1.0, 1.15]
    for point in edge["points"]:
        assert point["legal"]
        times = {"A": edge["A"], "B": edge["B"], "C": point["C"]}
        assert times[point["winner"]] == min(times.values())


def test_the_sweep_command_refuses_bad_input_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-example"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "FILE" in err[0] and "no-such-example" in err[0]
    for argv in (["--factors", "0.5"], ["--factors", "1,x"], ["--time-limit", "nan"],
                 ["--json", "/no/such/dir/x.json"]):
        assert main(argv) == 2, argv
