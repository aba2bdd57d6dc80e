"""The model commands of ``schedsearch``: examples, targets, target, tile, bound, and the
one-line errors (file, JSON path, rule; exit 2) for unusable input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from models.formats import read_problem, target_from_dict
from models.workload import example_names
from schedsearch.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_examples_and_targets_one_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "examples") == (0, "\n".join(example_names()) + "\n", "")
    code, out, _ = run(capsys, "targets")
    assert code == 0 and out.split() == ["ascend-910b-core", "hexagon-v68", "hexagon-v73",
                                         "hexagon-v75", "hexagon-v79"]


def test_target_prints_npu_target_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "target", "ascend-910b-core")
    assert code == 0 and target_from_dict(json.loads(out)).lanes["VECTOR"] == 2


def test_tile_then_bound(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    code, out, _ = run(capsys, "tile", "gemm-rmsnorm-v75", "-o", str(path))
    assert code == 0 and "129 ops" in out
    assert len(read_problem(path).ops) == 129
    code, out, _ = run(capsys, "bound", str(path))
    assert code == 0 and out.startswith("lower bound: ") and "critical_path" in out
    code, out, _ = run(capsys, "bound", str(path), "--json")
    figures = json.loads(out)
    assert figures["target"] == "hexagon-v75"
    assert figures["value"] == max(figures["parts"].values())
    code, out, _ = run(capsys, "bound", "gemm-rmsnorm-v75", "--json")  # a workload too
    assert json.loads(out)["value"] == figures["value"]


def test_tile_scale_and_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tile", "rmsnorm-gemm-chain-v75", "--scale", "2")
    assert code == 0 and json.loads(out)["name"] == "rmsnorm-gemm-chain-v75x2"


def _problem(tmp_path: Path) -> dict[str, Any]:
    main(["tile", "rmsnorm-gemm-chain-v75", "-o", str(tmp_path / "good.json")])
    return json.loads((tmp_path / "good.json").read_text())


def _op(document: dict[str, Any]) -> dict[str, Any]:
    return document["ops"]["r0.ldX.b0"]


#: (what is wrong, mutation of a good problem document, expected JSON path, rule)
BAD_PROBLEMS: list[tuple[str, Callable[[dict], Any], str, str]] = [
    ("missing key", lambda d: _op(d).pop("task"), '$.ops["r0.ldX.b0"]', "FORMAT"),
    ("wrong type", lambda d: _op(d)["modes"][0].update(duration="5"),
     '$.ops["r0.ldX.b0"].modes[0].duration', "FORMAT"),
    ("unknown lane", lambda d: _op(d)["modes"][0].update(lanes={"NPU": 1}),
     '$.ops["r0.ldX.b0"].modes[0].lanes.NPU', "FORMAT"),
    ("unknown memory", lambda d: d["buffers"]["r0.W"].update(memory="L2"),
     '$.buffers["r0.W"].memory', "FORMAT"),
    ("negative size", lambda d: d["buffers"]["r0.W"].update(size=-2048),
     '$.buffers["r0.W"].size', "FORMAT"),
    ("cycle in after", lambda d: d["after"].append(["r0.st.b0", "r0.ldX.b0"]), "$.after",
     "CYCLE"),
    ("tile larger than memory", lambda d: d["buffers"]["r0.W"].update(size=9 << 20),
     '$.buffers["r0.W"].size', "FIT"),
]


@pytest.mark.parametrize(("what", "mutate", "path", "rule"), BAD_PROBLEMS,
                         ids=[case[0] for case in BAD_PROBLEMS])
def test_bad_problem_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                            what: str, mutate: Callable[[dict], Any],
                                            path: str, rule: str) -> None:
    document = _problem(tmp_path)
    mutate(document)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    capsys.readouterr()
    code, out, err = run(capsys, "bound", str(bad))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{bad}: {path}: {rule}: " in err, err


def test_malformed_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "npu-problem/1", ')
    code, _, err = run(capsys, "bound", str(bad))
    assert code == 2 and err.count("\n") == 1 and f"{bad}: $: JSON: " in err


@pytest.mark.parametrize(("workload", "path", "rule"), [
    ('name = "w"\ntarget = "hexagon-v75"\n[[tasks]]\nname = "r"\nkind = "rmsnorm"\n'
     'rows = 64\ncols = 3000000\n', "$.tasks[0]", "FIT"),
    ('name = "w"\ntarget = "hexagon-v75"\n[[tasks]]\nname = "r"\nkind = "rmsnorm"\n'
     'rows = -64\ncols = 30\n', "$.tasks[0].rows", "FORMAT"),
    ('name = "w"\ntarget = "hexagon-v75"\n[[tasks]]\nname = "r"\nkind = "rmsnorm"\n'
     'cols = 30\n', "$.tasks[0]", "FORMAT"),
    ('name = "w"\ntarget = "tpu"\n[[tasks]]\nname = "r"\nkind = "copy"\nrows = 1\ncols = 1\n',
     "$.target", "TARGET"),
    ('name = "w\n', "$", "TOML"),
])
def test_bad_workload_writes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                     workload: str, path: str, rule: str) -> None:
    source = tmp_path / "w.toml"
    source.write_text(workload)
    output = tmp_path / "out.json"
    code, out, err = run(capsys, "tile", str(source), "-o", str(output))
    assert (code, out) == (2, "") and not output.exists()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f": {path}: {rule}: " in err, err


def test_problem_without_target(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    document = _problem(tmp_path)
    del document["meta"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(document))
    capsys.readouterr()
    code, _, err = run(capsys, "bound", str(bare))
    assert code == 2 and f"{bare}: $.meta: TARGET: " in err
    assert run(capsys, "bound", str(bare), "--target", "hexagon-v75")[0] == 0
