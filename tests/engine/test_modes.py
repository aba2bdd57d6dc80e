"""Mode prices from the energy LP: a mode that wastes the binding resource costs more."""

from __future__ import annotations

from models.formats import Mode, Op, Problem, Task
from schedsearch.engine.bounds.lower import energy_relaxation
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.modes import mode_prices
from schedsearch.engine.portfolio import priced_modes
from tests.engine.problems import gemm_problem, target


def _copies(n: int) -> Problem:
    """Independent copies with two equally fast modes on three DMA queues; the first
    draws the whole bandwidth, the second half of it. Only the bandwidth binds, so the
    LP prices the first mode dearer."""
    ops = {f"c{i}": Op("t", (Mode(10, {"DMA": 1}, {"BW": 60}), Mode(10, {"DMA": 1}, {"BW": 30})))
           for i in range(n)}
    return Problem("copies", {}, {"t": Task("copy")}, {}, ops)


def test_the_mode_wasting_the_binding_budget_is_priced_dearer() -> None:
    inst = build_instance(_copies(8), target(dma=3))
    relaxation = energy_relaxation(inst.problem, inst.target)
    for hungry, frugal in mode_prices(inst, relaxation):
        assert frugal < hungry
    assert priced_modes(inst, relaxation) == [[1]] * 8


def test_the_portfolio_is_never_worse_than_the_shortest_mode_rule() -> None:
    # Shortest-first (ties to the first mode) runs the copies one at a time (80 ticks);
    # the priced policy runs two frugal copies side by side (40 ticks).
    inst = build_instance(_copies(8), target(dma=3))
    assert construct(inst, build_dag(inst)).makespan(inst) == 40


def test_every_op_keeps_at_least_one_mode() -> None:
    inst = build_instance(gemm_problem(blocks=2, k_steps=2), target(capacity=1 << 16))
    relaxation = energy_relaxation(inst.problem, inst.target)
    assert all(modes for modes in priced_modes(inst, relaxation))
