"""``checker/program.py`` against a naive reference (every pair, graph search), on random
legal schedules lowered to programs and then mutated."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.fuzz._budget import examples
from tests.fuzz.strategies import legal_schedules

from .programs import lowered, mutated, program_codes
from .reference import reference_codes


@settings(max_examples=examples(0.4))
@given(legal_schedules())
def test_lowered_random_schedules_are_legal_programs(schedule: dict) -> None:
    doc = lowered(schedule)
    assert program_codes(doc) == set() == reference_codes(doc), doc


@given(st.data(), legal_schedules())
def test_checker_agrees_with_reference_on_mutations(data: st.DataObject,
                                                    schedule: dict) -> None:
    doc, kind = data.draw(mutated(lowered(schedule)))
    found, expected = program_codes(doc), reference_codes(doc)
    assert found == expected, (kind, found, expected, doc)


@settings(max_examples=examples(0.4))
@given(st.data(), legal_schedules())
def test_closing_a_cycle_is_a_deadlock(data: st.DataObject, schedule: dict) -> None:
    doc = lowered(schedule)
    doc_edges = [(q[i], q[i + 1]) for q in doc["queues"].values() for i in range(len(q) - 1)]
    doc_edges += [(p, op) for op, preds in doc["waits"].items() for p in preds]
    assume(doc_edges)
    a, b = data.draw(st.sampled_from(doc_edges))
    doc["waits"].setdefault(a, []).append(b)
    assert "DEADLOCK" in program_codes(doc)
