"""The schedcheck contract: exit codes 0/1/2, the human and JSON reports, stdin, and one
line (never a traceback) for unusable input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checker.cli import main

from .cases import CASES
from .schedules import legal

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, doc: Any, name: str = "s.json") -> str:
    file = tmp_path / name
    file.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(file)


def illegal() -> dict[str, Any]:
    doc = legal()
    doc["ops"]["mm1"].update(start=29, end=49)   # LANE_OVERLAP with mm0
    doc["makespan"] = 61                          # MAKESPAN
    return doc


def test_legal_file_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", write(tmp_path, legal())]) == 0
    out = capsys.readouterr().out
    assert out.startswith("LEGAL: ") and "4 ops, 2 buffers" in out


def test_violations_exit_1_grouped_by_code(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", write(tmp_path, illegal())]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("ILLEGAL: ") and "2 violations of 2 rules" in lines[0]
    assert lines[1] == "LANE_OVERLAP (1)"
    assert lines[2].startswith("  t=29: ops 'mm0' and 'mm1' both hold HMX unit 0")
    assert lines[2].endswith("[ops: mm0, mm1]")
    assert lines[3] == "MAKESPAN (1)"


def test_json_report_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--json", write(tmp_path, illegal())]) == 1
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"legal", "violations", "stats"}
    assert report["legal"] is False
    assert [v["code"] for v in report["violations"]] == ["LANE_OVERLAP", "MAKESPAN"]
    first = report["violations"][0]
    assert set(first) == {"code", "message", "ops", "buffers", "tensors", "time"}
    assert first["ops"] == ["mm0", "mm1"] and first["time"] == 29
    assert report["stats"]["by_code"] == {"LANE_OVERLAP": 1, "MAKESPAN": 1}
    assert report["stats"]["ops"] == 4 and report["stats"]["buffers"] == 2


def test_max_violations_caps_the_listing_not_the_counts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = write(tmp_path, illegal())
    assert main(["verify", "--json", "--max-violations", "1", file]) == 1
    report = json.loads(capsys.readouterr().out)
    assert len(report["violations"]) == 1 and report["stats"]["violations"] == 2
    assert main(["verify", "--max-violations", "1", file]) == 1
    out = capsys.readouterr().out
    assert "MAKESPAN" not in out and "1 more not listed" in out


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_every_negative_example_exits_1_and_its_twin_0(tmp_path: Path, case,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    assert main(["verify", "--json", write(tmp_path, case.negative())]) == 1
    codes = {v["code"] for v in json.loads(capsys.readouterr().out)["violations"]}
    assert codes == case.codes
    assert main(["verify", write(tmp_path, case.twin(), "twin.json")]) == 0


@pytest.mark.parametrize("content, fragment", [
    ("", "JSON: the input is empty"),
    ("{not json", "JSON: not valid JSON"),
    ('{"format": "npu-schedule/1", "x": NaN}', "NaN is not a JSON number"),
    ('{"format": "npu-schedule/2"}', "$.format: FORMAT: expected format 'npu-schedule/1'"),
    ("[]", "$: FORMAT: expected an object, got an array"),
    ("[" * 50_000, "JSON: "),
])
def test_unusable_input_exits_2_with_one_line(tmp_path: Path, content: str, fragment: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    file = write(tmp_path, content)
    assert main(["verify", file]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith(f"schedcheck: error: {file}: ") and fragment in line


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(tmp_path / "nope.json")]) == 2
    assert "FILE: cannot read" in capsys.readouterr().err


def test_oversized_file_exits_2_at_once(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as stream:
        stream.truncate(200 * 1024 * 1024)
    assert main(["verify", str(big)]) == 2
    assert "SIZE: larger than the limit" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["verify"]) == 2
    assert main(["verify", "x.json", "--max-violations", "-1"]) == 2
    assert "usage: schedcheck" in capsys.readouterr().err


def test_stdin_and_the_module_entry_point() -> None:
    """``-`` reads standard input; run as a real process, as the console script is."""
    run = subprocess.run([sys.executable, "-m", "checker", "verify", "--json", "-"],
                         input=json.dumps(illegal()), capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert run.returncode == 1, run.stderr
    assert json.loads(run.stdout)["stats"]["violations"] == 2
    run = subprocess.run([sys.executable, "-m", "checker", "verify", "-"], input="nope",
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 2
    assert run.stderr.startswith("schedcheck: error: <stdin>: $: JSON: not valid JSON")
    assert "Traceback" not in run.stderr


def test_version_prints_the_installed_version_and_exits_0() -> None:
    from importlib import metadata

    result = subprocess.run([sys.executable, "-m", "checker", "--version"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.split()[:2] == ["schedcheck", metadata.version("npu-schedsearch")]
