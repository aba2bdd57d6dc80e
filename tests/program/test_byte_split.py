"""The byte-split family (issue 29): lowered programs are legal, and ``verify-program``
agrees with the naive reference on them and on their mutations."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from checker import verify
from tests.fuzz._budget import examples

from .byte_split import byte_split_schedule, byte_split_schedules
from .programs import lowered, mutated, program_codes
from .reference import reference_codes


def test_two_writers_and_two_readers_of_byte_halves_lower_to_a_legal_program() -> None:
    """The reported false rejection: w0 writes [0, 8), r1 reads [8, 16); no order between
    them is needed, and the lowered program has none."""
    schedule = byte_split_schedule(units=["DMA.0", "DMA.1", "HMX.0", None])
    assert verify(schedule).legal
    doc = lowered(schedule)
    assert program_codes(doc) == set() == reference_codes(doc)


def test_many_epochs_of_split_buffers_lower_to_a_legal_program() -> None:
    schedule = byte_split_schedule(buffers=3, epochs=3, cut=5, joint_reader=True,
                                   units=["DMA.0", None, "HMX.0", "DMA.1", None],
                                   durations=[2, 0, 1, 3])
    assert verify(schedule).legal
    doc = lowered(schedule)
    assert program_codes(doc) == set() == reference_codes(doc)


@settings(max_examples=examples(1))
@given(byte_split_schedules())
def test_lowered_byte_split_schedules_are_legal_programs(schedule: dict) -> None:
    assert verify(schedule).legal, verify(schedule).violations[:2]
    doc = lowered(schedule)
    found, expected = program_codes(doc), reference_codes(doc)
    assert found == set() == expected, (found, expected, doc)


@settings(max_examples=examples(2))
@given(st.data(), byte_split_schedules())
def test_checker_agrees_with_reference_on_byte_split_mutations(data: st.DataObject,
                                                               schedule: dict) -> None:
    """Drop a wait, swap queue entries, close a cycle or add a wait: the checker and the
    reference (every pair, reachability by graph search) find the same program codes."""
    doc, kind = data.draw(mutated(lowered(schedule)))
    found, expected = program_codes(doc), reference_codes(doc)
    assert found == expected, (kind, found, expected, doc)
