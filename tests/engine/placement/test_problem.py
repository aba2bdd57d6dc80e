import pytest

from models.errors import InputError
from schedsearch.engine.placement import PlacementBuffer, lower_bound, max_load
from schedsearch.engine.placement.problem import check_buffers


@pytest.mark.parametrize("kwargs, fragment", [
    ({"lower": 3, "upper": 2, "size": 1}, "upper"),
    ({"lower": 0, "upper": 2, "size": -1}, "size"),
    ({"lower": -1, "upper": 2, "size": 1}, "lower"),
    ({"lower": 0, "upper": 2, "size": 4, "align": 0}, "alignment"),
    ({"lower": 0, "upper": 2, "size": 4, "align": 8, "offset": 12}, "multiple"),
    ({"lower": 0, "upper": 2, "size": 4, "offset": -8}, "offset"),
    ({"lower": 0, "upper": True, "size": 4}, "integer"),
    ({"lower": 0, "upper": 2.0, "size": 4}, "integer"),
])
def test_unusable_buffers_are_refused(kwargs, fragment):
    with pytest.raises(InputError) as caught:
        PlacementBuffer("x", **kwargs)
    assert fragment in caught.value.message
    assert caught.value.rule == "FORMAT"


def test_duplicate_ids_are_refused():
    with pytest.raises(InputError, match="duplicate"):
        check_buffers([PlacementBuffer("a", 0, 1, 1), PlacementBuffer("a", 2, 3, 1)])


def test_max_load_uses_half_open_lifetimes():
    touching = [PlacementBuffer("a", 0, 2, 5), PlacementBuffer("b", 2, 4, 7)]
    assert max_load(touching) == 7
    overlapping = [PlacementBuffer("a", 0, 3, 5), PlacementBuffer("b", 2, 4, 7)]
    assert max_load(overlapping) == 12


def test_lower_bound_counts_dead_buffers_and_pins():
    buffers = [PlacementBuffer("a", 0, 2, 5), PlacementBuffer("dead", 4, 4, 9),
               PlacementBuffer("pin", 6, 8, 2, offset=20)]
    assert max_load(buffers) == 5
    assert lower_bound(buffers) == 22
