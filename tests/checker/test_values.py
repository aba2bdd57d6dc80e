"""STALE_READ and WRITE_RACE, edge by edge, on a single buffer."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import checker
from checker.rules.values import _conflicts, _conflicts_few, _Touch

from .schedules import on_buffer

W = "w"


def codes(ops) -> set[str]:
    return checker.verify(on_buffer(ops)).codes()


def test_read_after_its_write_is_fine() -> None:
    assert codes({"a": (0, 10, [], [(0, 64, W)]), "r": (10, 20, [(0, 64, W)], [])}) == set()


def test_read_with_no_earlier_write_is_stale() -> None:
    assert codes({"r": (0, 5, [(0, 8, W)], [])}) == {"STALE_READ"}


def test_read_overlapping_its_producer_is_stale() -> None:
    assert codes({"a": (0, 10, [], [(0, 64, W)]), "r": (9, 20, [(0, 64, W)], [])}) == \
        {"STALE_READ"}


def test_the_last_write_must_hold_the_value() -> None:
    ops = {"a": (0, 10, [], [(0, 64, W)]), "b": (10, 12, [], [(0, 8, "x")]),
           "r": (20, 30, [(4, 12, W)], [])}
    assert codes(ops) == {"STALE_READ"}
    ops["r"] = (20, 30, [(8, 64, W)], [])  # bytes b did not touch
    assert codes(ops) == set()


def test_the_last_write_must_cover_every_byte_read() -> None:
    ops = {"a": (0, 10, [], [(0, 32, W)]), "b": (0, 10, [], [(32, 64, W)]),
           "r": (10, 20, [(0, 64, W)], [])}
    assert codes(ops) == {"STALE_READ"}  # two writes end together: not a single write
    ops["b"] = (0, 9, [], [(32, 64, W)])
    assert codes(ops) == {"STALE_READ"}  # 'a' is last and covers only half


def test_another_write_during_the_read_is_stale() -> None:
    base = {"a": (0, 10, [], [(0, 64, W)]), "r": (10, 20, [(0, 16, W)], [])}
    assert codes({**base, "x": (15, 30, [], [(8, 9, W)])}) == {"STALE_READ"}
    assert codes({**base, "x": (5, 11, [], [(8, 9, W)])}) == {"STALE_READ", "WRITE_RACE"}
    assert codes({**base, "x": (20, 30, [], [(8, 9, W)])}) == set()  # starts as r ends
    assert codes({**base, "x": (15, 30, [], [(16, 20, W)])}) == set()  # other bytes


def test_an_instant_write_inside_the_read_is_stale() -> None:
    base = {"a": (0, 10, [], [(0, 64, W)]), "r": (10, 20, [(0, 16, W)], [])}
    assert codes({**base, "x": (15, 15, [], [(0, 1, W)])}) == {"STALE_READ"}


def test_an_empty_read_sees_the_value_at_its_instant() -> None:
    base = {"a": (0, 10, [], [(0, 64, W)]), "r": (12, 12, [(0, 16, W)], [])}
    assert codes(base) == set()
    assert codes({**base, "x": (11, 13, [], [(0, 1, "y")])}) == {"STALE_READ"}


def test_the_reader_may_rewrite_what_it_reads() -> None:
    ops = {"a": (0, 10, [], [(0, 64, W)]), "v": (10, 20, [(0, 64, W)], [(0, 64, "v")]),
           "r": (20, 30, [(0, 64, "v")], [])}
    assert codes(ops) == set()


def test_writes_race_only_when_bytes_and_windows_meet() -> None:
    assert codes({"a": (0, 10, [], [(0, 8, W)]), "b": (5, 15, [], [(4, 12, W)])}) == \
        {"WRITE_RACE"}
    assert codes({"a": (0, 10, [], [(0, 8, W)]), "b": (10, 15, [], [(4, 12, W)])}) == set()
    assert codes({"a": (0, 10, [], [(0, 8, W)]), "b": (5, 15, [], [(8, 12, W)])}) == set()
    assert codes({"a": (0, 10, [], [(0, 8, W), (8, 9, "y")])}) == set()  # one op, apart


def test_one_op_writing_the_same_bytes_twice_races() -> None:
    assert codes({"a": (0, 10, [], [(0, 8, W), (4, 8, "y")])}) == {"WRITE_RACE"}
    assert codes({"a": (3, 3, [], [(0, 8, W), (7, 9, "y")])}) == {"WRITE_RACE"}  # empty window


def test_values_are_compared_only_where_both_sides_have_one() -> None:
    """Settled 2026-12-02: ``value`` is optional on every access."""
    doc = on_buffer({"a": (0, 10, [], [(0, 8, W)]), "r": (10, 20, [(0, 8, "other")], [])})
    assert checker.verify(doc).codes() == {"STALE_READ"}
    del doc["problem"]["ops"]["a"]["writes"][0]["value"]
    assert checker.verify(doc).legal
    del doc["problem"]["ops"]["r"]["reads"][0]["value"]
    assert checker.verify(doc).legal
    doc["problem"]["ops"]["a"]["writes"][0]["value"] = W
    assert checker.verify(doc).legal


def test_a_read_without_a_value_still_needs_one_covering_write() -> None:
    doc = on_buffer({"a": (0, 10, [], [(0, 4, W)]), "b": (0, 10, [], [(4, 8, W)]),
                     "r": (10, 20, [(0, 8, W)], [])})
    del doc["problem"]["ops"]["r"]["reads"][0]["value"]
    assert checker.verify(doc).codes() == {"STALE_READ"}


def test_an_ops_reads_never_see_its_own_writes() -> None:
    """Settled 2026-12-02: a zero-length in-place update reads what the bytes held."""
    in_place = {"a": (0, 10, [], [(0, 8, W)]), "u": (10, 10, [(0, 8, W)], [(0, 8, "y")])}
    assert codes(in_place) == set()
    own = {"a": (0, 10, [], [(0, 8, W)]), "u": (10, 10, [(0, 8, "y")], [(0, 8, "y")])}
    assert codes(own) == {"STALE_READ"}
    alone = {"u": (10, 10, [(0, 8, "y")], [(0, 8, "y")])}
    assert codes(alone) == {"STALE_READ"}


def test_an_inverted_read_reads_nothing() -> None:
    """A read in an inverted window (``end < start``, DURATION's fault) is never stale,
    whatever was written before its start; a zero-length read is judged at its instant."""
    ops = {"a": (0, 10, [], [(0, 8, W)]), "b": (20, 25, [], [(0, 8, "y")]),
           "r": (30, 12, [(0, 8, W)], [])}
    assert codes(ops) == {"DURATION"}
    assert codes({**ops, "r": (30, 30, [(0, 8, W)], [])}) == {"STALE_READ"}


def test_an_inverted_write_is_visible_at_its_end() -> None:
    """A write in an inverted window takes no time, but its value becomes visible at
    ``end`` as any write's does (not at ``start``)."""
    read = {"r": (10, 20, [(0, 8, W)], [])}
    assert codes({"a": (15, 10, [], [(0, 8, W)]), **read}) == {"DURATION"}
    assert codes({"a": (15, 11, [], [(0, 8, W)]), **read}) == {"DURATION", "STALE_READ"}


def test_an_inverted_write_occupies_no_time() -> None:
    """Starting inside a read's window, or inside another write's, an inverted write
    writes during neither; a zero-length one at the same start does."""
    base = {"a": (0, 10, [], [(0, 8, W)]), "r": (10, 20, [(0, 8, W)], [])}
    assert codes({**base, "x": (15, 5, [], [(0, 1, "y")])}) == {"DURATION"}
    assert codes({**base, "x": (15, 15, [], [(0, 1, "y")])}) == {"STALE_READ"}
    racing = {"a": (0, 10, [], [(0, 8, W)])}
    assert codes({**racing, "x": (5, 2, [], [(0, 8, "y")])}) == {"DURATION"}
    assert codes({**racing, "x": (5, 6, [], [(0, 8, "y")])}) == {"WRITE_RACE"}


_touch = st.builds(
    _Touch, op=st.sampled_from(["a", "b", "c"]), lo=st.integers(0, 3),
    hi=st.integers(4, 6), start=st.integers(0, 6), end=st.integers(0, 6),
    value=st.just("v"))


@given(st.lists(_touch.filter(lambda t: t.start <= t.end), max_size=4),
       st.lists(_touch, max_size=4))
def test_comparing_every_pair_finds_the_reads_the_sweep_finds(reads, writes) -> None:
    """The two ways of finding another op's write during a read agree on which reads have
    one (inverted reads never reach them; inverted writes take no part)."""
    ordered = sorted(writes, key=lambda w: w.end)
    assert set(_conflicts_few(reads, ordered)) == set(_conflicts(reads, ordered))
