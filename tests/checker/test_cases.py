"""Every rule code has a minimal negative example that produces it, and a legal twin."""

from __future__ import annotations

import json

import pytest

import checker

from .cases import CASES
from .schedules import legal


def test_the_base_schedule_is_legal() -> None:
    report = checker.verify(legal())
    assert report.legal, report.violations


def test_every_code_has_a_negative_example() -> None:
    assert {code for case in CASES for code in case.codes} == set(checker.CODES)
    assert len(checker.CODES) == 18


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_negative_example_produces_exactly_its_code(case) -> None:
    report = checker.verify(case.negative())
    assert report.codes() == case.codes, [v.message for v in report.violations]
    assert not report.legal


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_legal_twin_produces_nothing(case) -> None:
    report = checker.verify(case.twin())
    assert report.legal, [v.message for v in report.violations]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_cases_survive_a_round_trip_through_json(case) -> None:
    """The cases are plain JSON documents: serialised and parsed strictly, same verdict."""
    text = json.dumps(case.negative())
    assert checker.verify(checker.parse_json(text)).codes() == case.codes
