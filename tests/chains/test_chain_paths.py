"""Paths A, B and C of a chain: built, solved, verified, scored and compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.errors import InputError
from models.workload import workload_from_dict
from schedsearch.chains.paths import ChainResult, PathName, chain_edges, chain_paths
from schedsearch.cli import main
from schedsearch.paths import speedup_bound
from tests.chains.conftest import CHAIN, OPTIONS, tiled


@pytest.fixture(scope="module")
def result(chain_result: ChainResult) -> ChainResult:
    return chain_result


def test_three_paths_each_legal_with_their_launches(result: ChainResult) -> None:
    assert [p.path for p in result.paths] == [PathName.A, PathName.B, PathName.C]
    launches = {p.path: p.result.launches for p in result.paths}
    assert launches == {PathName.A: 3, PathName.B: 2, PathName.C: 1}
    for p in result.paths:
        assert p.result.legal, (p.path, p.result.violations)
        assert p.split.device == p.result.device_makespan
        assert p.split.total == p.result.makespan


def test_only_a_converts_and_only_c_keeps_the_intermediate_on_chip(
        result: ChainResult) -> None:
    a, b, c = result.paths
    assert a.split.conversion > 0
    assert any(t.kind == "relayout" for t in a.result.schedule.problem.tasks.values())
    assert b.split.conversion == c.split.conversion == 0
    assert "H" in b.result.schedule.problem.tensors
    assert "H" not in c.result.schedule.problem.tensors
    assert c.split.intermediate == 0


def test_recoverable_loss_and_gains(result: ChainResult) -> None:
    a = result.path(PathName.A)
    assert a is not None
    s = a.split
    launch = a.result.overhead // a.result.launches
    expected = (s.conversion + s.intermediate + s.sync - launch) / s.total
    assert result.removable_share == pytest.approx(expected)
    assert result.ceiling == pytest.approx(speedup_bound(expected))
    for p in result.paths:
        assert result.gain(p.path) == pytest.approx(a.result.makespan / p.result.makespan)
    assert result.best.result.makespan == min(p.result.makespan for p in result.paths)


def test_no_forwarding_on_a_target_with_separate_memories() -> None:
    document = {**CHAIN, "target": "ascend-910b-core"}
    workload = workload_from_dict(document, "chain")
    _, target = tiled(document)
    (only,) = chain_paths(workload, target, options=OPTIONS)
    assert [p.path for p in only.paths] == [PathName.A, PathName.B]
    assert "UB" in only.c_note and only.gain(PathName.C) is None
    assert all(p.result.legal for p in only.paths)


def test_edges_are_vector_producers_feeding_a_gemm_operand() -> None:
    workload = workload_from_dict(CHAIN, "chain")
    (edge,) = chain_edges(workload)
    assert (edge.producer.name, edge.consumer.name, edge.tensor) == ("r0", "g0", "H")
    independent = {**CHAIN, "tasks": [CHAIN["tasks"][0],
                                       {**CHAIN["tasks"][1], "a": "Other"}]}
    assert chain_edges(workload_from_dict(independent, "w")) == ()
    transposed = {**CHAIN, "tasks": [{**CHAIN["tasks"][0], "rows": 128},
                                      {**CHAIN["tasks"][1], "trans_a": 1}]}
    assert chain_edges(workload_from_dict(transposed, "w")) == ()
    with pytest.raises(InputError) as caught:
        chain_paths(workload_from_dict(independent, "w"), tiled(CHAIN)[1], options=OPTIONS)
    assert caught.value.rule == "CHAIN"


def test_cli_json_and_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    norm, gemm = CHAIN["tasks"]
    tiny = {**CHAIN, "tasks": [{**norm, "rows": 32, "cols": 64},
                               {**gemm, "M": 32, "N": 32, "K": 64}]}
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(tiny))
    picture = tmp_path / "paths.png"
    assert main(["chain", str(path), "--json", "--time-limit", "0.1", "--workers", "1",
                 "--plot", str(picture)]) == 0
    assert picture.read_bytes().startswith(b"\x89PNG")
    (edge,) = json.loads(capsys.readouterr().out)["edges"]
    assert [p["path"] for p in edge["paths"]] == ["A", "B", "C"]
    assert all(p["legal"] for p in edge["paths"])
    assert edge["best"] in ("A", "B", "C")
    assert main(["chain", str(tmp_path / "missing.toml")]) == 2
