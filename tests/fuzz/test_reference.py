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

from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from models.formats import schedule_from_dict, schedule_to_dict

from ._budget import examples
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


def test_each_mutation_is_usually_applicable() -> None:
    """An operator that rarely applies would make its property vacuous; demand >= 1 in 6
    over the drawn schedules, 60 in the ci profile (a bar that holds whatever examples a
    Hypothesis version draws: STALE_READ applied to 6 of 30 under one version, 10 of 30
    under another).

    Each operator must also leave its input untouched and, when it applies, break its
    rule according to the reference (test_checker_mutations.py asks the real checker)."""
    hits: dict[str, list[bool]] = {code: [] for code in CODES}

    @settings(max_examples=examples(2.4), derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(doc=legal_schedules(), data=st.data())
    def probe(doc: dict[str, Any], data: st.DataObject) -> None:
        before = json.dumps(doc, sort_keys=True)
        for code in CODES:
            mutant = mutate(code, doc, data.draw)
            hits[code].append(mutant is not None)
            assert mutant is None or code in reference_codes(mutant), (code, mutant)
        assert json.dumps(doc, sort_keys=True) == before, "operators must not edit their input"

    probe()
    rare = {code: f"{sum(h)}/{len(h)}" for code, h in hits.items() if sum(h) * 6 < len(h)}
    assert not rare, f"rarely applicable: {rare}"


def test_shrinking_gives_small_examples() -> None:
    """A counterexample that needs a buffer and a DDR tensor shrinks to one op using both."""
    def uses_both(doc: dict[str, Any]) -> bool:
        return bool(doc["problem"]["buffers"]) and bool(doc["problem"]["tensors"])

    smallest = find(legal_schedules(), uses_both,
                    settings=settings(database=None, derandomize=True, max_examples=200))
    assert len(smallest["problem"]["ops"]) == 1
    assert len(smallest["problem"]["buffers"]) == 1
    assert len(smallest["problem"]["tensors"]) == 1
    assert smallest["makespan"] == 1
    assert len(json.dumps(smallest)) < 1000
