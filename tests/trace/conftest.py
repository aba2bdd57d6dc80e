"""Fixtures over the hand-made schedule of :mod:`trace_fixture`."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from models.formats import Schedule, schedule_from_dict
from tests.trace.trace_fixture import SCHEDULE


@pytest.fixture
def schedule_doc() -> dict[str, Any]:
    """A fresh copy of the document, for tests that mutate or write it."""
    return copy.deepcopy(SCHEDULE)


@pytest.fixture
def schedule(schedule_doc: dict[str, Any]) -> Schedule:
    return schedule_from_dict(schedule_doc, "tiny.json")
