"""The crossover names, at each pair of layout-crossing figures, the fastest path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.formats import target_to_dict
from models.layouts import layout_costs, with_layout_figures
from models.workload import workload_from_dict
from schedsearch import cli
from schedsearch.chains.crossover import EdgeCrossover, crossover
from schedsearch.chains.paths import PathName
from tests.chains.conftest import CHAIN, OPTIONS, tiled

#: The bundled figures, and crossing so dear both ways that a conversion task could pay.
GRID = ((0.5, 0.05), (1, 2000))
#: CHAIN with a GEMM that reads its operand again for each of four n blocks.
REREAD = {**CHAIN, "tasks": [CHAIN["tasks"][0],
                             {**CHAIN["tasks"][1], "N": 256, "bn": 64, "order": "nmk"}]}


def main(argv: list[str]) -> int:
    """``schedsearch chain crossover ARGV``."""
    return cli.main(["chain", "crossover", *argv])


@pytest.fixture(scope="module")
def grid() -> EdgeCrossover:
    _, v75 = tiled(CHAIN)
    (only,) = crossover(workload_from_dict(CHAIN, "chain"), v75, *GRID, options=OPTIONS)
    return only


def test_every_point_names_its_fastest_path_and_every_schedule_is_legal(
        grid: EdgeCrossover) -> None:
    assert [(p.strided_efficiency, p.scatter_passes) for p in grid.points] == [
        (e, n) for e in GRID[0] for n in GRID[1]]
    for point in grid.points:
        assert all(p.result.legal for p in point.result.paths)
        times = {name: point.makespan(name) for name in PathName}
        assert point.makespan(point.winner) == min(t for t in times.values() if t is not None)


def test_the_figures_reach_the_paths(grid: EdgeCrossover) -> None:
    costs = layout_costs(tiled(CHAIN)[1])
    assert grid.stated == (costs.strided_efficiency, costs.scatter_passes)
    at = {(p.strided_efficiency, p.scatter_passes): p for p in grid.points}
    cheap, dear = at[(0.5, 1)], at[(0.05, 2000)]
    for name in PathName:  # every path crosses layouts somewhere
        assert dear.makespan(name) > cheap.makespan(name)  # type: ignore[operator]
    # A's conversion costs what B pays inside a kernel and more, so with consistent
    # figures A cannot win where the GEMM reads its operand once
    assert grid.a_wins == ()


def test_a_wins_where_the_gemm_rereads_the_operand_and_crossing_is_dear() -> None:
    _, v75 = tiled(REREAD)
    (edge,) = crossover(workload_from_dict(REREAD, "reread"), v75, (0.05,), (2000,),
                        options=OPTIONS)
    (point,) = edge.points
    assert edge.a_wins == (point,) and all(p.result.legal for p in point.result.paths)
    assert point.result.path(PathName.A).variant == "convert by dma"  # type: ignore[union-attr]


def test_the_command_prints_the_grid_and_writes_json(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    document = tmp_path / "chain.json"
    document.write_text(json.dumps(CHAIN))
    out = tmp_path / "grid.json"
    assert main([str(document), "--efficiencies", "0.5", "--scatter-passes", "1",
                 "--time-limit", "0.5", "--json", str(out)]) == 0
    assert "r0 -> g0 (H)" in capsys.readouterr().out
    (edge,) = json.loads(out.read_text())[str(document)]
    (point,) = edge["points"]
    assert point["legal"] and point["winner"] in "ABC" and edge["a_wins"] == 0


@pytest.mark.parametrize("option", [["--efficiencies", "0"], ["--efficiencies", "nan"],
                                    ["--scatter-passes", "-1"], ["--scatter-passes", "1e99"]])
def test_absurd_figures_exit_2(option: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rmsnorm-gemm-chain-v75", *option]) == 2
    err = capsys.readouterr().err
    assert f"argument {option[0]}:" in err and option[1] in err


def test_a_workload_without_an_edge_exits_2(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    document = tmp_path / "alone.json"
    document.write_text(json.dumps({**CHAIN, "tasks": CHAIN["tasks"][:1]}))
    assert main([str(document)]) == 2
    err = capsys.readouterr().err
    assert str(document) in err and "CHAIN" in err


def test_an_interrupt_exits_130_without_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("schedsearch.commands.chain_crossover.crossover", interrupted)
    out = tmp_path / "grid.json"
    assert main(["rmsnorm-gemm-chain-v75", "--json", str(out)]) == 130
    assert "interrupted" in capsys.readouterr().err and not out.exists()


def test_a_calibrated_target_file_decides_instead_of_the_bundled_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, v75 = tiled(CHAIN)
    measured = tmp_path / "v75-measured.json"
    measured.write_text(json.dumps(target_to_dict(with_layout_figures(
        v75, strided_efficiency=0.02, scatter_passes=2000))))
    document = tmp_path / "chain.json"
    document.write_text(json.dumps(CHAIN))
    out = tmp_path / "grid.json"
    assert main([str(document), "--target", str(measured), "--efficiencies", "0.02",
                 "--scatter-passes", "2000", "--time-limit", "0.5", "--json", str(out)]) == 0
    (edge,) = json.loads(out.read_text())[str(document)]
    assert edge["stated"] == {"strided_efficiency": 0.02, "scatter_passes": 2000}
    assert "efficiency 0.02, 2000 scatter passes" in capsys.readouterr().out
