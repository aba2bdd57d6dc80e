"""Fluid sharing of DDR bandwidth between concurrent kernels, on hand-computed cases."""

from __future__ import annotations

import pytest

from schedsearch.contention import Activity, overloaded, simulate

CAPACITY = {"DDR_BW": 60}


def test_hand_computed_two_kernels_sharing_the_bus() -> None:
    # See the module docstring: A alone until 50, then both at 60/80 = 0.75.
    a = Activity("A", "k1", 0, 100, {"DDR_BW": 40})
    b = Activity("B", "k2", 50, 150, {"DDR_BW": 40})
    result = simulate([a, b], CAPACITY)
    assert result.windows == {"A": (0, 117), "B": (50, 167)}
    assert result.uncontended_makespan == 150
    assert result.makespan == 167
    assert result.cost == 17


def test_equal_starts_share_evenly() -> None:
    # Demand 80 over capacity 60: both progress at 0.75 and end at 133.33 -> 134.
    result = simulate([Activity("A", "k1", 0, 100, {"DDR_BW": 40}),
                       Activity("B", "k2", 0, 100, {"DDR_BW": 40})], CAPACITY)
    assert result.windows == {"A": (0, 134), "B": (0, 134)}


def test_a_delay_propagates_to_later_ops_of_the_same_kernel_only() -> None:
    a1 = Activity("A1", "k1", 0, 100, {"DDR_BW": 40})
    a2 = Activity("A2", "k1", 100, 150)            # after A1 in kernel k1: shifted
    b1 = Activity("B1", "k2", 0, 100, {"DDR_BW": 40})
    b2 = Activity("B2", "k2", 120, 130)            # gap of 20 after B1 kept
    c = Activity("C", "k3", 0, 300)                # no draw, never slowed
    result = simulate([a1, a2, b1, b2, c], CAPACITY)
    assert result.windows["A1"] == (0, 134)
    assert result.windows["A2"] == (134, 184)
    assert result.windows["B2"] == (154, 164)
    assert result.windows["C"] == (0, 300)
    assert result.makespan == 300 and result.cost == 0
    assert result.shift("k1", 100) == 134 and result.shift("k1", 99) == 99
    assert result.shift("k3", 250) == 250


def test_no_overload_means_no_change() -> None:
    acts = [Activity("A", "k1", 0, 100, {"DDR_BW": 30}),
            Activity("B", "k2", 10, 90, {"DDR_BW": 30}),
            Activity("Z", "k2", 90, 90)]
    assert not overloaded(acts, CAPACITY)
    result = simulate(acts, CAPACITY)
    assert result.windows == {a.name: (a.start, a.end) for a in acts}
    assert result.cost == 0


def test_overloaded_sees_only_simultaneous_draws() -> None:
    back_to_back = [Activity("A", "k1", 0, 100, {"DDR_BW": 40}),
                    Activity("B", "k2", 100, 200, {"DDR_BW": 40})]
    assert not overloaded(back_to_back, CAPACITY)
    assert overloaded([back_to_back[0], Activity("B", "k2", 99, 200, {"DDR_BW": 40})],
                      CAPACITY)


def test_zero_length_ops_at_one_instant_do_not_deadlock() -> None:
    acts = [Activity("X", "k", 5, 5), Activity("Y", "k", 5, 5), Activity("W", "k", 0, 5)]
    assert simulate(acts, CAPACITY).windows == {"X": (5, 5), "Y": (5, 5), "W": (0, 5)}


def test_draw_on_a_budget_without_capacity_is_refused() -> None:
    with pytest.raises(ValueError, match="no capacity"):
        simulate([Activity("A", "k", 0, 10, {"L2_BW": 1})], CAPACITY)


def test_a_light_stream_keeps_its_rate_beside_a_heavy_one() -> None:
    """Max-min fair, not proportional: on a bus of 40, A asks 10 and B 50; A gets its 10
    (never slowed: 100 ticks), B the other 30 (rate 0.6) while A runs, then the whole bus
    (its draw 50 > 40: rate 0.8). B's 100 units: 60 by 100, the last 40 at 0.8 -> 150.
    Proportional sharing would have slowed A too (to 40/60)."""
    result = simulate([Activity("A", "k1", 0, 100, {"DDR_BW": 10}),
                       Activity("B", "k2", 0, 100, {"DDR_BW": 50})], {"DDR_BW": 40})
    assert result.windows["A"] == (0, 100)
    assert result.windows["B"] == (0, 150)
