"""``schedcheck verify-program`` (exit codes and report shape of ``verify``) and
``schedsearch trace`` on a program (one simulated run, waits as flow arrows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.cli import main as schedcheck
from schedsearch.cli import main as schedsearch
from schedsearch.program import program_to_dict

from .examples import searched
from .programs import lowered
from .test_rules import ORDER_CASES


def write(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "p.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


def test_legal_program_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert schedcheck(["verify-program", write(tmp_path, lowered(ORDER_CASES["ORDER_RAW"]))]) \
        == 0
    assert capsys.readouterr().out.startswith("LEGAL: ")


def test_missing_order_exits_1_with_the_report_shape(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    doc = lowered(ORDER_CASES["ORDER_RAW"])
    doc["waits"] = {}
    assert schedcheck(["verify-program", "--json", write(tmp_path, doc)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"legal", "violations", "stats"} and report["legal"] is False
    (violation,) = report["violations"]
    assert violation["code"] == "ORDER_RAW" and violation["ops"] == ["a", "b"]
    assert report["stats"]["by_code"] == {"ORDER_RAW": 1}
    assert schedcheck(["verify-program", "--max-violations", "0", write(tmp_path, doc)]) == 1
    assert "1 more not listed" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["{", "[]", '{"format": "npu-schedule/1"}',
                                  '{"format": "npu-program/1", "schedule": 3}'])
def test_unusable_input_exits_2_with_one_line(tmp_path: Path, text: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert schedcheck(["verify-program", write(tmp_path, text)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedcheck: error: ") and err.count("\n") == 1


def test_trace_of_a_program_draws_its_waits(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    program = searched("rmsnorm-gemm-chain-v75")[1].program
    out = tmp_path / "t.json"
    assert schedsearch(["trace", write(tmp_path, program_to_dict(program)), "-o", str(out),
                        "--jitter", "0.3", "--seed", "4"]) == 0
    trace = json.loads(out.read_text())
    starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "f"}
    assert len(starts) == len(ends) == program.wait_count
    slices = {e["name"]: e for e in trace["traceEvents"] if e.get("cat") == "op"}
    for k, (before, after) in enumerate(program.wait_edges()):
        assert starts[k]["ts"] == slices[before]["ts"]
        assert ends[k]["ts"] == slices[after]["ts"] >= \
            slices[before]["ts"] + slices[before]["dur"]
    assert trace["otherData"]["simulated_run"] is True
