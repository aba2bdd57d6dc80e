"""place(): statuses, optimality against a brute-force oracle, alignment and pins."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.errors import InputError
from schedsearch.engine.placement import PlacementBuffer, place, validate_placement
from schedsearch.engine.result import SolveStatus
from tests.engine.placement.helpers import guillotine
from tests.engine.placement.oracle import smallest_capacity
from tests.fuzz._budget import examples

#: Tiny instances of our own with their smallest capacity (checked by the oracle below).
KNOWN = {
    "chain": ([PlacementBuffer("a", 0, 3, 2), PlacementBuffer("b", 2, 5, 2),
               PlacementBuffer("c", 0, 2, 3), PlacementBuffer("d", 3, 5, 3),
               PlacementBuffer("e", 1, 4, 1)], 6),
    "aligned-trio": ([PlacementBuffer(n, 0, 1, 1, align=2) for n in "abc"], 5),
    "pin-in-the-middle": ([PlacementBuffer("pin", 0, 2, 1, offset=1),
                           PlacementBuffer("wide", 0, 2, 2)], 4),
    "staircase": ([PlacementBuffer("a", 0, 4, 3), PlacementBuffer("b", 1, 2, 2),
                   PlacementBuffer("c", 2, 6, 1), PlacementBuffer("d", 3, 5, 4),
                   PlacementBuffer("e", 5, 7, 6)], 8),
}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_smallest_capacity(name):
    buffers, smallest = KNOWN[name]
    assert smallest_capacity(buffers) == smallest
    fits = place(buffers, smallest, time_limit=5)
    assert fits.status == "OPTIMAL"
    assert fits.peak <= smallest
    assert validate_placement(buffers, fits.offsets, smallest) == []
    short = place(buffers, smallest - 1, time_limit=5)
    assert short.status == "INFEASIBLE" and short.offsets == {}
    best = place(buffers, None, time_limit=5)
    assert (best.status, best.peak) == ("OPTIMAL", smallest)


def test_infeasible_beyond_the_bound_is_proved_by_the_search():
    buffers, smallest = KNOWN["pin-in-the-middle"]
    result = place(buffers, 3, time_limit=5)
    assert result.lower_bound == 3  # the bound alone cannot refute capacity 3
    assert (result.status, result.method) == ("INFEASIBLE", "exact")


def test_alignment_is_honoured():
    buffers = [PlacementBuffer("a", 0, 4, 3), PlacementBuffer("b", 0, 4, 8, align=8),
               PlacementBuffer("c", 2, 6, 5, align=4)]
    result = place(buffers, None, time_limit=5)
    assert result.status == "OPTIMAL"
    assert result.offsets["b"] % 8 == 0 and result.offsets["c"] % 4 == 0
    assert validate_placement(buffers, result.offsets) == []


def test_pinned_buffers_stay_and_clashing_pins_are_infeasible():
    buffers = [PlacementBuffer("pin", 0, 4, 4, offset=4), PlacementBuffer("x", 0, 4, 4),
               PlacementBuffer("y", 2, 6, 4)]
    result = place(buffers, 12, time_limit=5)
    assert result.status == "OPTIMAL" and result.offsets["pin"] == 4
    clash = [PlacementBuffer("p", 0, 4, 4, offset=0), PlacementBuffer("q", 2, 6, 4, offset=2)]
    refused = place(clash, 100, time_limit=5)
    assert refused.status == "INFEASIBLE" and "pinned" in refused.method
    over = place([PlacementBuffer("p", 0, 4, 4, offset=8)], 10, time_limit=5)
    assert over.status == "INFEASIBLE"


def test_dead_and_empty_buffers_still_need_room():
    buffers = [PlacementBuffer("dead", 3, 3, 7), PlacementBuffer("empty", 0, 5, 0),
               PlacementBuffer("a", 0, 5, 2)]
    assert place(buffers, 6, time_limit=5).status == "INFEASIBLE"
    result = place(buffers, 7, time_limit=5)
    assert result.status == "OPTIMAL" and result.peak <= 7


def test_perfect_packing_is_found_at_its_exact_capacity():
    buffers = guillotine(seed=4, cuts=40)
    result = place(buffers, 64, time_limit=10)
    assert result.status == "OPTIMAL"
    assert validate_placement(buffers, result.offsets, 64) == []


def test_same_seed_same_answer():
    buffers = guillotine(seed=9, cuts=30)
    first = place(buffers, 64, time_limit=10, seed=3)
    second = place(buffers, 64, time_limit=10, seed=3)
    assert first.status == "OPTIMAL" and first.offsets == second.offsets


def test_bad_capacity_is_input_error():
    with pytest.raises(InputError):
        place([PlacementBuffer("a", 0, 1, 1)], -1)


@st.composite
def tiny_instances(draw):
    count = draw(st.integers(1, 5))
    buffers = []
    for i in range(count):
        lower = draw(st.integers(0, 5))
        upper = draw(st.integers(lower, lower + 4))
        align = draw(st.sampled_from([1, 1, 2, 4]))
        size = draw(st.integers(0, 6))
        pinned = draw(st.booleans()) and i == 0
        offset = align * draw(st.integers(0, 3)) if pinned else None
        buffers.append(PlacementBuffer(f"b{i}", lower, upper, size, align, offset))
    return buffers


@settings(max_examples=examples(2.4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
def test_minimise_matches_the_oracle_and_capacity_mode_agrees(buffers):
    smallest = smallest_capacity(buffers)
    best = place(buffers, None, time_limit=5)
    assert best.status == "OPTIMAL", (buffers, best)
    assert best.peak == smallest, (buffers, best.offsets)
    assert validate_placement(buffers, best.offsets) == []
    assert place(buffers, smallest, time_limit=5).status == "OPTIMAL"
    if smallest > 0:
        assert place(buffers, smallest - 1, time_limit=5).status == "INFEASIBLE"


def test_a_node_budget_ends_a_hopeless_search_quickly():
    """An instance the exact search does not settle in seconds (greedy fails on it): with
    ``max_nodes`` the engine gives up after that many nodes, as ``NO_SOLUTION_FOUND``, not
    ``NO_SOLUTION_IN_TIME``, and the same way every time; the search inside ``solve`` relies
    on it."""
    buffers = guillotine(seed=2, cuts=120, capacity=256, horizon=256)
    results = [place(buffers, 256, time_limit=30.0, max_nodes=50) for _ in range(2)]
    assert [(r.status, r.offsets) for r in results] == [(SolveStatus.NO_SOLUTION_FOUND, {})] * 2
    assert results[0].stats["nodes"] == results[1].stats["nodes"] <= 51
    assert results[0].wall_s < 5.0
