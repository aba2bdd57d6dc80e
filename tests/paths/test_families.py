"""Configuration families: the issue's worked example and the choice of specialisations."""

from __future__ import annotations

import pytest

from tests.paths.families import (
    ShapeCosts,
    break_even_calls,
    choose_specialisations,
    expected_specialised_cost,
)

EXAMPLE = ShapeCosts(key="m256", frequency=1.0, preparation=200.0, specialised=30.0,
                     generic=50.0)


def test_worked_example_breaks_even_after_ten_calls() -> None:
    assert break_even_calls(EXAMPLE) == 10
    # After 10 calls both ways have cost exactly 500 us; after 9 the plan is still behind.
    assert 200 + 10 * 30 == 10 * 50
    assert 200 + 9 * 30 > 9 * 50


def test_worked_example_with_eviction_and_selection_is_worse_than_generic() -> None:
    assert expected_specialised_cost(EXAMPLE, eviction=0.1, selection=2.0) == pytest.approx(52.0)
    assert break_even_calls(EXAMPLE, eviction=0.1, selection=2.0) is None
    choice = choose_specialisations([EXAMPLE], eviction=0.1, selection=2.0)
    assert choice.prepared == ()
    assert choice.expected_per_call == pytest.approx(50.0)


def test_worked_example_without_eviction_prepares_the_plan() -> None:
    choice = choose_specialisations([EXAMPLE])
    assert choice.prepared == ("m256",)
    assert choice.expected_per_call == pytest.approx(30.0)
    assert choice.break_even == {"m256": 10}


def test_break_even_rounds_up_a_fractional_count() -> None:
    shape = ShapeCosts("s", 1.0, preparation=100.0, specialised=30.0, generic=50.0)
    assert break_even_calls(shape) == 5
    shape = ShapeCosts("s", 1.0, preparation=101.0, specialised=30.0, generic=50.0)
    assert break_even_calls(shape) == 6


def test_rare_shapes_are_not_worth_the_selection_overhead() -> None:
    common = ShapeCosts("common", 9.0, preparation=200.0, specialised=30.0, generic=50.0)
    rare = ShapeCosts("rare", 1.0, preparation=200.0, specialised=45.0, generic=50.0)
    # Savings per call: common 0.9 * 20 = 18, rare 0.1 * 5 = 0.5; selection 1.
    choice = choose_specialisations([common, rare], selection=1.0)
    assert choice.prepared == ("common", "rare")
    assert choice.expected_per_call == pytest.approx(50.0 - 18.5 + 1.0)
    # Selection 20 exceeds every saving together: prepare nothing.
    assert choose_specialisations([common, rare], selection=20.0).prepared == ()


def test_a_short_horizon_cannot_amortise_preparation() -> None:
    # 5 calls: preparation 200 / 5 = 40 per call outweighs the 20 saved per call.
    assert choose_specialisations([EXAMPLE], calls=5).prepared == ()
    assert choose_specialisations([EXAMPLE], calls=20).prepared == ("m256",)


def test_shapes_that_lose_money_are_left_out_even_when_others_pay() -> None:
    good = ShapeCosts("good", 1.0, preparation=10.0, specialised=10.0, generic=50.0)
    bad = ShapeCosts("bad", 1.0, preparation=10.0, specialised=60.0, generic=50.0)
    choice = choose_specialisations([good, bad])
    assert choice.prepared == ("good",)
    assert choice.expected_per_call == pytest.approx(0.5 * 10 + 0.5 * 50)


@pytest.mark.parametrize("kwargs", [{"eviction": 1.5}, {"eviction": -0.1}, {"calls": 0}])
def test_invalid_parameters_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        choose_specialisations([EXAMPLE], **kwargs)


def test_negative_costs_are_refused() -> None:
    with pytest.raises(ValueError, match="generic"):
        ShapeCosts("x", 1.0, preparation=1.0, specialised=1.0, generic=-1.0)
