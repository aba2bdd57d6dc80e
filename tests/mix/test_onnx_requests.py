"""ONNX requests in a mix: real decoder-layer exports (``benchmarks/corpus``, Qwen2.5-0.5B
shapes) as one prefill and two decode steps, every policy legal; bad ``model`` and
``dims`` give one line naming the mix file, the JSON path and the rule."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxscript")

from checker import verify  # noqa: E402
from checker.cli import main as schedcheck  # noqa: E402
from models.errors import InputError  # noqa: E402
from models.formats import schedule_to_dict  # noqa: E402
from models.mix import load_mix  # noqa: E402
from models.requests import mix_problem  # noqa: E402
from models.targets import load_target  # noqa: E402
from schedsearch import cli  # noqa: E402
from schedsearch.mix.policies import POLICIES  # noqa: E402
from schedsearch.mix.serve import serve  # noqa: E402
from schedsearch.paths import SolveOptions  # noqa: E402
from tests.onnx.builders import node, save  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus"
PREFILL, DECODE = "qwen2-layer-prefill-dynamo-op20.onnx", "qwen2-layer-decode-dynamo-op20.onnx"
TARGET = load_target("hexagon-v75")

MIX = f"""name = "onnx-mix"
target = "hexagon-v75"
[[requests]]
name = "p0"
model = "graphs/{PREFILL}"
phase = "prefill"
tokens = 32
dims = {{ seq = "tokens" }}
[[requests]]
name = "d0"
model = "graphs/{DECODE}"
phase = "decode"
past = 32
dims = {{ past = "past" }}
deadline_us = 100000
[[requests]]
name = "d1"
model = "graphs/{DECODE}"
phase = "decode"
past = 48
dims = {{ past = "past" }}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mix file with its graphs in a folder beside it (paths relative to the mix)."""
    root = tmp_path_factory.mktemp("onnx-mix")
    (root / "graphs").mkdir()
    for name in (PREFILL, DECODE):
        shutil.copy(CORPUS / name, root / "graphs" / name)
    (root / "m.toml").write_text(MIX)
    return root


def test_the_graphs_are_found_beside_the_mix_and_bound_to_the_request_s_counts(
        folder: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # not the mix's folder
    mix = load_mix(str(folder / "m.toml"))
    p0, d0, d1 = mix.requests
    assert p0.onnx == str(folder / "graphs" / PREFILL) and p0.dims == (("seq", 32),)
    assert (d0.dims, d1.dims) == ((("past", 32),), (("past", 48),))
    whole = mix_problem(mix, TARGET)
    chunked = mix_problem(mix, TARGET, 16)  # would split a bundled prefill of 32
    assert chunked.chunk is None and [p.prefix for p in chunked.parts] == ["p0", "d0", "d1"]
    assert {task.split("-")[0] for task in whole.problem.tasks} == {"p0", "d0", "d1"}
    assert set(whole.problem.tasks) == set(chunked.problem.tasks)


def test_every_policy_is_legal(folder: Path, wall_never_binds: None) -> None:
    report = serve(load_mix(str(folder / "m.toml")), TARGET,
                   SolveOptions(time_limit=0.05, reproducible=True))
    assert list(report.runs) == list(POLICIES)
    for run in report.runs.values():
        assert verify(schedule_to_dict(run.schedule)).legal, run.name
        assert report.figures[run.name].chunk is None  # the ONNX prefill runs whole
        assert report.figures[run.name].requests["d0"].deadline_met is True


def test_the_command_runs_an_onnx_mix(folder: Path, tmp_path: Path, capsys,
                                      wall_never_binds: None) -> None:
    out = tmp_path / "s.json"
    argv = ["mix", str(folder / "m.toml"), "--json", "-o", str(out), "--time-limit", "0.05",
            "--reproducible"]
    assert cli.main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document["policies"]) == list(POLICIES)
    assert all(p["legal"] for p in document["policies"].values())
    assert schedcheck(["verify", str(out)]) == 0


def _bad(tmp_path: Path, request: str) -> Path:
    """A mix of one decode of a two-dimension graph (``x``: ``[batch, past]``) beside it."""
    save(tmp_path, [node("Relu", ["x"], ["y"])], {"x": ("batch", "past")},
         {"y": ("batch", "past")}, name="g")
    path = tmp_path / "m.toml"
    path.write_text('name = "m"\ntarget = "hexagon-v75"\n[[requests]]\nname = "d0"\n'
                    f'phase = "decode"\npast = 64\n{request}\n')
    return path


@pytest.mark.parametrize(("request_text", "where", "rule", "words"), [
    ('model = "nowhere.onnx"\ndims = { past = "past" }', "$.requests[0].model", "FILE",
     "no such ONNX model file"),
    ('model = "g.onnx"\ndims = { past = "past", batch = 1, seq = 4 }',
     "$.requests[0].dims.seq", "DIM", "has no symbolic dimension 'seq' (its symbolic "
                                      "dimensions: batch, past)"),
    ('model = "g.onnx"\ndims = { past = "past" }', "$.requests[0].dims", "DIM",
     "symbolic dimension 'batch' (of input 'x')"),
    ('model = "g.onnx"\ndims = { batch = 1, past = 64 }', "$.requests[0].dims", "DIM",
     "binds its 'past'"),
    ('model = "g.onnx"\ndims = { batch = 0, past = "past" }', "$.requests[0].dims.batch",
     "DIM", "at least 1"),
    ('model = "g.onnx"\ndims = { batch = "one", past = "past" }',
     "$.requests[0].dims.batch", "DIM", "whole number"),
    ('model = "g.onnx"\ndims = 3', "$.requests[0].dims", "FORMAT", "table"),
    ('model = "qwen2.5-0.5b"\ndims = { past = "past" }', "$.requests[0].dims", "FORMAT",
     "bundled family has none"),
])
def test_bad_onnx_requests_are_one_line(tmp_path: Path, capsys, request_text: str,
                                        where: str, rule: str, words: str) -> None:
    path = _bad(tmp_path, request_text)
    with pytest.raises(InputError) as error:
        load_mix(str(path))
    assert (error.value.path, error.value.rule) == (where, rule)
    assert cli.main(["mix", str(path)]) == 2
    line = capsys.readouterr().err
    assert line.startswith(f"schedsearch: error: {path}: {where}: {rule}: ")
    assert words in line and line.count("\n") == 1


def test_without_the_onnx_extra_an_onnx_request_is_one_line(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _bad(tmp_path, 'model = "g.onnx"\ndims = { batch = 1, past = "past" }')
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    assert cli.main(["mix", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"schedsearch: error: {path}: $.requests[0].model: ONNX: reading .onnx models needs "
        "the onnx and onnxscript packages: pip install 'npu-schedsearch[onnx]'\n")


def test_what_the_importer_refuses_is_one_line_naming_the_request(tmp_path: Path,
                                                                  capsys) -> None:
    save(tmp_path, [node("Det", ["x"], ["y"])], {"x": ("past", 4, 4)}, {"y": ("past",)},
         name="det")
    path = tmp_path / "m.toml"
    path.write_text('name = "m"\ntarget = "hexagon-v75"\n[[requests]]\nname = "d0"\n'
                    'phase = "decode"\npast = 8\nmodel = "det.onnx"\ndims = { past = "past" }\n')
    assert cli.main(["mix", str(path)]) == 2
    line = capsys.readouterr().err
    assert line.startswith(f"schedsearch: error: {path}: $.requests[0].model: ONNX: "
                           f"{tmp_path / 'det.onnx'}: node ")
    assert "op type 'Det' is not supported" in line and line.count("\n") == 1
