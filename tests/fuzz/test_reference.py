"""The fuzzing tools judged against each other, before they judge the real checker.

Why: the generator, the mutation operators and the reference checker are written from
FORMATS.md independently of checker/; if they disagree among themselves, every property
built on them is noise. So: legal schedules are legal to the reference, each operator's
mutant breaks its rule according to the reference, the generated documents are readable
by the project's format reader, and shrinking gives small examples.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, find, given, note, settings
from hypothesis import strategies as st

from models.formats import schedule_from_dict, schedule_to_dict

from .mutations import MUTATIONS, mutate
from .reference_checker import CODES, reference_codes
from .strategies import legal_schedules


def test_one_operator_per_code() -> None:
    assert set(MUTATIONS) == set(CODES) and len(CODES) == 18


@given(legal_schedules())
def test_generated_schedules_are_legal_to_the_reference(doc: dict[str, Any]) -> None:
    assert reference_codes(doc) == set(), json.dumps(doc)


@given(legal_schedules())
def test_generated_schedules_round_trip_through_the_format_reader(doc: dict[str, Any]) -> None:
    """The documents are valid npu-schedule/1 to models/formats.py, and survive a round trip."""
    again = schedule_to_dict(schedule_from_dict(copy.deepcopy(doc)))
    assert reference_codes(again) == set()
    assert again["ops"] == doc["ops"] and again["buffers"] == doc["buffers"]


@pytest.mark.parametrize("code", CODES)
@given(doc=legal_schedules(), data=st.data())
def test_each_mutation_breaks_its_rule_for_the_reference(code: str, doc: dict[str, Any],
                                                          data: st.DataObject) -> None:
    before = json.dumps(doc, sort_keys=True)
    mutant = mutate(code, doc, data.draw)
    assert json.dumps(doc, sort_keys=True) == before, "operators must not edit their input"
    assume(mutant is not None)
    note(json.dumps(mutant))
    assert code in reference_codes(mutant)


@pytest.mark.parametrize("code", CODES)
def test_each_mutation_is_usually_applicable(code: str) -> None:
    """An operator that rarely applies would make its property vacuous; demand >= 1 in 3."""
    hits = []

    @settings(max_examples=30, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(doc=legal_schedules(), data=st.data())
    def probe(doc: dict[str, Any], data: st.DataObject) -> None:
        hits.append(mutate(code, doc, data.draw) is not None)

    probe()
    assert sum(hits) * 3 >= len(hits), f"{code}: applicable in {sum(hits)}/{len(hits)}"


def test_shrinking_gives_small_examples() -> None:
    """A counterexample needing a buffer with a reader shrinks to a handful of 1-tick ops."""
    def has_read(doc: dict[str, Any]) -> bool:
        return any("buffer" in a for o in doc["problem"]["ops"].values()
                   for a in o.get("reads", []))

    smallest = find(legal_schedules(), has_read,
                    settings=settings(database=None, derandomize=True, max_examples=500))
    assert len(smallest["problem"]["ops"]) <= 4
    assert len(smallest["problem"]["buffers"]) == 1
    assert smallest["problem"]["tensors"] == {}
    assert smallest["makespan"] <= 3
    assert len(json.dumps(smallest)) < 1600
