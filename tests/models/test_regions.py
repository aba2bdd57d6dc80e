"""BoxIndex finds exactly the writes a read box meets, in the order they were given."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from models.formats import Box
from models.regions import BoxIndex, boxes_intersect
from tests.fuzz._budget import examples


@st.composite
def boxes(draw: st.DrawFn) -> Box:
    dims = []
    for _ in range(2):
        lo = draw(st.integers(0, 20))
        dims.append((lo, lo + draw(st.integers(1, 8))))
    return tuple(dims)


@settings(max_examples=examples(1.0))
@given(st.lists(st.one_of(boxes(), st.just(())), max_size=12), st.one_of(boxes(), st.just(())))
def test_the_index_agrees_with_trying_every_write(writes: list[Box], read: Box) -> None:
    index = BoxIndex(list(enumerate(writes)))
    expected = [k for k, box in enumerate(writes)
                if not box or not read or boxes_intersect(box, read)]
    assert index.intersecting(read) == expected


def test_a_write_that_spans_early_rows_is_found_past_later_ones() -> None:
    writes = [("long", ((0, 100), (0, 4))), ("a", ((10, 20), (0, 4))), ("b", ((30, 40), (0, 4)))]
    assert BoxIndex(writes).intersecting(((50, 60), (0, 4))) == ["long"]
    assert BoxIndex(writes).intersecting(((35, 60), (2, 3))) == ["long", "b"]
