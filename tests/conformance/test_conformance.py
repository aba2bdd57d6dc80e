"""The conformance corpus: every reader of the formats accepts and refuses the same documents.

Why: the format is read four times (``checker/``'s own reader, the reference checker of
tests/fuzz, the JSON Schemas in models/schemas, ``models.formats``), and readers that
disagree at the edges let a file pass ``schedcheck verify`` and then fail
``schedsearch trace``. ``base.json`` is a small legal schedule that exercises every
feature; each line of ``cases.jsonl`` turns it into one case by a few edits and states
the codes FORMATS.md demands: for every rule, every minimum and every boundary, a
document that passes and one that fails.

- ``checker.verify`` and the reference checker report exactly the stated codes (when a
  case is FORMAT, FORMAT alone is compared: what a checker says beside a malformed
  document is not specified; ``UnusableInput`` counts as FORMAT);
- ``models.formats.schedule_from_dict`` refuses exactly the FORMAT cases, and so does
  ``schedsearch trace`` (exit 2), end to end;
- the schedule schema alone refuses exactly the FORMAT cases marked ``"schema": true``
  (the others are cross-references, ``lo < hi``, boxes inside shapes and byte ranges inside
  buffers, which no JSON Schema can state; ``models.formats`` checks them by hand).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import checker
from models.errors import InputError
from models.formats import schedule_from_dict, schedule_to_dict
from models.schema import SCHEDULE_FORMAT, validator
from schedsearch.cli import main as schedsearch

from ..fuzz.reference_checker import CODES, reference_codes

HERE = Path(__file__).parent
BASE: dict[str, Any] = json.loads((HERE / "base.json").read_text("utf-8"))


@dataclass(frozen=True)
class Case:
    """One document of the corpus: ``base.json`` with ``edits`` applied."""

    name: str
    codes: frozenset[str]
    schema: bool
    edits: tuple[tuple[Any, ...], ...]

    def document(self) -> dict[str, Any]:
        doc = copy.deepcopy(BASE)
        for op, path, *value in self.edits:
            parent = doc
            for key in path[:-1]:
                parent = parent[key]
            if op == "set":
                parent[path[-1]] = copy.deepcopy(value[0])
            elif op == "del":
                del parent[path[-1]]
            elif op == "append":
                parent[path[-1]].append(copy.deepcopy(value[0]))
            else:
                raise ValueError(f"{self.name}: unknown edit {op!r}")
        return doc


def _cases() -> list[Case]:
    lines = (HERE / "cases.jsonl").read_text("utf-8").splitlines()
    return [Case(c["name"], frozenset(c["codes"]), c["schema"],
                 tuple(tuple(edit) for edit in c["edits"]))
            for c in map(json.loads, lines)]


CASES = _cases()


def _comparable(codes: set[str]) -> set[str]:
    return {"FORMAT"} if "FORMAT" in codes else codes


def _checker_codes(doc: dict[str, Any]) -> set[str]:
    try:
        return checker.verify(doc).codes()
    except checker.UnusableInput:
        return {"FORMAT"}


def test_the_corpus_covers_every_code_and_passes_and_fails() -> None:
    """Every code of FORMATS.md has a failing case; every kind of edit has a passing one."""
    assert {code for case in CASES for code in case.codes} == set(CODES)
    assert len({case.name for case in CASES}) == len(CASES), "case names are unique"
    assert sum(not case.codes for case in CASES) >= 40
    assert all(not case.schema or case.codes == {"FORMAT"} for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_checker(case: Case) -> None:
    doc = case.document()
    assert _comparable(_checker_codes(doc)) == case.codes, \
        [v.message for v in checker.verify(doc).violations] if "FORMAT" not in case.codes \
        else case.name


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_reference_checker(case: Case) -> None:
    assert reference_codes(case.document()) == case.codes


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_schema(case: Case) -> None:
    errors = [e.message for e in validator(SCHEDULE_FORMAT).iter_errors(case.document())]
    assert bool(errors) == case.schema, errors


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_format_reader(case: Case) -> None:
    doc = case.document()
    if "FORMAT" in case.codes:
        with pytest.raises(InputError) as caught:
            schedule_from_dict(doc, "case.json")
        assert str(caught.value).startswith("case.json: $")
        assert ": FORMAT: " in str(caught.value)
    else:
        schedule_from_dict(doc, "case.json")


@pytest.mark.parametrize("case", [case for case in CASES if "FORMAT" not in case.codes],
                         ids=lambda case: case.name)
def test_what_the_format_reader_accepts_survives_a_round_trip(case: Case) -> None:
    """Writing back loses nothing a reader accepted, ``meta`` on any object included."""
    schedule = schedule_from_dict(case.document())
    assert schedule_from_dict(schedule_to_dict(schedule)) == schedule


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_schedsearch_command_refuses_exactly_the_format_cases(
        case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """End to end: ``schedsearch trace`` exits 2 on a file iff ``schedcheck`` says FORMAT
    (before the Boundaries, it refused a file ``verify`` had passed)."""
    path = tmp_path / "schedule.json"
    path.write_text(json.dumps(case.document()), "utf-8")
    code = schedsearch(["trace", str(path), "-o", str(tmp_path / "trace.json")])
    assert (code == 2) == ("FORMAT" in case.codes), capsys.readouterr().err
