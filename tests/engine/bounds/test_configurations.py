"""The configuration part of the bound: modes that cannot run side by side."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from models.formats import Mode, Problem, Target
from schedsearch.engine.bounds import configurations
from schedsearch.engine.bounds.configurations import configuration_bound
from schedsearch.engine.bounds.lower import lower_bound
from tests.engine.bounds.test_lower import optimum, problem_of, small_problems
from tests.fuzz._budget import examples

TARGET = Target("t", lanes={"DMA": 2, "HVX": 1}, budgets={"BW": 60}, memories={})


def loads_and_copies(n: int) -> Problem:
    """``n`` DMA loads drawing 40 and ``n`` HVX copies drawing 30 of a 60 budget: no two
    of them fit together, although each resource alone is far from full."""
    ops = {f"ld{i}": (Mode(100, {"DMA": 1}, {"BW": 40}),) for i in range(n)}
    ops |= {f"cp{i}": (Mode(100, {"HVX": 1}, {"BW": 30}),) for i in range(n)}
    return problem_of(ops)


def test_ops_that_fit_no_configuration_together_add_up() -> None:
    bound = lower_bound(loads_and_copies(3), TARGET)
    assert bound.parts["energy"] == 350  # (3 * 100 * 40 + 3 * 100 * 30) / 60
    assert bound.parts["disjunctive:BW"] == 300  # the copies draw exactly half
    assert bound.parts["configuration"] == 600
    assert bound.value == 600 == optimum(loads_and_copies(3), TARGET)


def test_a_copy_mode_that_only_fits_beside_slow_loads() -> None:
    # Loads: fast (100, BW 40) or slow (180, BW 20); one copy on HVX draws 8. The bus is
    # full with fast + slow, which leaves no room for the copy; energy ignores that.
    ops = {f"ld{i}": (Mode(100, {"DMA": 1}, {"BW": 40}), Mode(180, {"DMA": 1}, {"BW": 20}))
           for i in range(4)}
    ops["cp"] = (Mode(300, {"HVX": 1}, {"BW": 30}),)
    problem = problem_of(ops)
    bound = lower_bound(problem, TARGET)
    assert bound.parts["energy"] < bound.parts["configuration"] <= optimum(problem, TARGET)


def test_ops_needing_no_slot_cost_nothing() -> None:
    free = problem_of({"barrier": (Mode(0),), "idle": (Mode(50),),
                       "either": (Mode(80, {"DMA": 1}), Mode(90))})
    assert configuration_bound(free, TARGET) == 0


def test_a_capped_column_generation_still_gives_a_bound(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    problem = loads_and_copies(3)
    full = configuration_bound(problem, TARGET)
    monkeypatch.setattr(configurations, "MAX_ROUNDS", 1)
    assert 0 < configuration_bound(problem, TARGET) <= full


def test_it_is_left_out_when_it_cannot_beat_the_other_parts() -> None:
    problem = loads_and_copies(3)
    assert configuration_bound(problem, TARGET, known=600) is None
    assert configuration_bound(problem, TARGET, known=599) == 600
    chained = problem_of({"a": (Mode(500),), "b": (Mode(10, {"DMA": 1}),)}, (("a", "b"),))
    assert "configuration" not in lower_bound(chained, TARGET).parts  # critical path: 510


@pytest.mark.slow
@settings(max_examples=examples(2.4))
@given(small_problems())
def test_configuration_is_between_energy_and_the_optimum(problem: Problem) -> None:
    target = Target("t", lanes={"DMA": 2, "HMX": 1}, budgets={"BW": 60}, memories={})
    configuration = configuration_bound(problem, target)
    assert configuration is not None
    assert lower_bound(problem, target).parts["energy"] <= configuration + 1  # two LPs' rounding
    assert configuration <= optimum(problem, target)
