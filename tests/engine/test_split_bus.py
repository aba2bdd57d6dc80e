"""The split-bus schedule: the energy LP's mode mix on a two-queue bus made whole."""

from __future__ import annotations

import bisect

from models.formats import Mode, Op, Problem, Task
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.modes import lean_split
from schedsearch.engine.portfolio import list_schedule
from schedsearch.engine.solution import to_schedule
from schedsearch.engine.split_bus import split_bus_schedule
from tests.engine.problems import gemm_problem, target, verify


def _loads(n: int) -> Problem:
    """Independent loads: fast (10 ticks, 40 of the bus's 60) or lean (20 ticks, 20).
    Two fast ones overflow the bus, a fast and a lean one fit: the LP's mix runs one
    fast load beside one lean at every instant, 2/3 of the loads fast."""
    ops = {f"l{i}": Op("t", (Mode(10, {"DMA": 1}, {"BW": 40}),
                             Mode(20, {"DMA": 1}, {"BW": 20}))) for i in range(n)}
    return Problem("loads", {}, {"t": Task("copy")}, {}, ops)


def test_the_fast_loads_keep_one_queue_as_busy_as_the_lean_ones_the_other() -> None:
    inst = build_instance(_loads(9), target())
    choice = lean_split(inst)
    assert choice is not None
    fast = [i for i, (m, unit) in enumerate(choice) if m == 0]
    assert len(fast) == 6  # 60 ticks fast beside 3 lean loads' 60
    assert all(unit == (0 if m == 0 else 1) for m, unit in choice)


def test_no_split_where_two_fast_loads_fit_the_bus_or_one_queue_serves_them() -> None:
    assert lean_split(build_instance(_loads(4), target(bw=80))) is None
    assert lean_split(build_instance(_loads(4), target(dma=1))) is None


def test_the_split_reaches_the_bus_bound_on_independent_loads() -> None:
    problem, tgt = _loads(9), target()
    inst = build_instance(problem, tgt)
    found = split_bus_schedule(inst, build_dag(inst), lean_split(inst))
    assert found is not None
    assert verify(to_schedule(inst, found, {})) == []
    assert found.makespan(inst) == lower_bound(problem, tgt).value == 60


def test_the_split_schedule_is_legal_with_buffers_and_dependences() -> None:
    inst = build_instance(gemm_problem(blocks=3, k_steps=2), target(capacity=1 << 16))
    dag = build_dag(inst)
    found = split_bus_schedule(inst, dag, lean_split(inst))
    assert found is not None
    assert verify(to_schedule(inst, found, {})) == []
    best = list_schedule(inst, dag)
    assert best.makespan(inst) <= found.makespan(inst)  # the list schedule keeps it


def test_no_split_schedule_where_memory_cannot_hold_the_longest_tail_order() -> None:
    inst = build_instance(gemm_problem(blocks=3, k_steps=2), target(capacity=3 * 1024))
    assert split_bus_schedule(inst, build_dag(inst), lean_split(inst)) is None


def test_back_to_back_intervals_merge_and_fits_stay_the_same() -> None:
    """A unit's queue keeps touching intervals as one (the fit steps over the run at
    once); an empty interval stays apart, and every fit is the one the separate
    intervals give."""
    from schedsearch.engine.split_bus import _fit, _occupy

    merged: list[tuple[int, int]] = []
    separate: list[tuple[int, int]] = []
    for lo, hi in ((10, 20), (30, 40), (20, 30), (50, 50), (40, 50), (60, 70)):
        _occupy(merged, lo, hi)
        bisect.insort(separate, (lo, hi))
    assert merged == [(10, 50), (50, 50), (60, 70)]
    for edge in range(0, 80, 5):
        for d in (1, 5, 10, 15):
            for forward in (True, False):
                assert _fit(merged, d, edge, forward) == _fit(separate, d, edge, forward)
