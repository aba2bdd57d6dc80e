"""The library entry points, and the checker's independence from the search."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import checker

from .schedules import legal

ROOT = Path(__file__).resolve().parents[2]


def test_verify_returns_a_report_with_stats() -> None:
    report = checker.verify(legal())
    assert report.legal and report.violations == []
    assert report.stats["ops"] == 4 and report.stats["buffers"] == 2
    assert report.stats["violations"] == 0 and report.stats["by_code"] == {}
    assert report.stats["elapsed_s"] >= 0


def test_verify_file_names_the_file_in_errors(tmp_path: Path) -> None:
    file = tmp_path / "wrong.json"
    file.write_text(json.dumps({"format": "npu-problem/1"}))
    with pytest.raises(checker.UnusableInput) as caught:
        checker.verify_file(file)
    assert str(caught.value).startswith(f"{file}: $.format: FORMAT: ")


def test_a_file_is_parsed_and_judged_with_the_collector_paused(tmp_path: Path) -> None:
    """Its first pass after waking would scan every object of the document: the
    collector sleeps from reading to judging, and wakes afterwards (also on errors)."""
    import gc

    from checker.verify import judge_file

    file = tmp_path / "s.json"
    file.write_text(json.dumps(legal()))
    seen = []

    def judge(document: dict) -> checker.Report:
        seen.append(gc.isenabled())
        return checker.verify(document)

    assert gc.isenabled()
    assert judge_file(file, judge).legal
    assert seen == [False] and gc.isenabled()
    file.write_text(json.dumps({"format": "npu-problem/1"}))
    with pytest.raises(checker.UnusableInput):
        judge_file(file, judge)
    assert gc.isenabled()


def test_violations_are_sorted_by_code_in_table_order() -> None:
    doc = legal()
    doc["makespan"] = 1
    doc["ops"]["mm0"]["end"] = 29
    codes = [v.code for v in checker.verify(doc).violations]
    assert codes == sorted(codes, key=checker.CODES.index) == ["DURATION", "MAKESPAN"]


def test_checker_loads_nothing_from_the_search() -> None:
    """Fresh interpreter: import checker, verify, and no schedsearch/models module is there,
    nor jsonschema: the checker's reader is independent of the schemas models/ uses."""
    program = (
        "import json, sys\n"
        "import checker\n"
        f"doc = json.loads({json.dumps(json.dumps(legal()))})\n"
        "assert checker.verify(doc).legal\n"
        "bad = [m for m in sys.modules\n"
        "       if m.split('.')[0] in ('schedsearch', 'models', 'jsonschema')]\n"
        "print(json.dumps(bad))\n")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []


def test_no_source_file_of_the_checker_mentions_the_search() -> None:
    for source in (ROOT / "checker").rglob("*.py"):
        text = source.read_text()
        assert "import schedsearch" not in text and "from schedsearch" not in text, source
        assert "import models" not in text and "from models" not in text, source
        assert "jsonschema" not in text, source
