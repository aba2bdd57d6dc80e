"""The placement engine inside the search: addresses for fixed times, or a refusal."""

from __future__ import annotations

import pytest

import schedsearch.engine.offsets as offsets
from schedsearch.engine.cpsat.model import build, solve_built, whole_problem
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import Instance, build_instance
from schedsearch.engine.lns import improve
from schedsearch.engine.offsets import place_offsets
from schedsearch.engine.placement import PlacementResult
from schedsearch.engine.result import SolveStatus
from schedsearch.engine.solution import Solution, to_schedule
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import gemm_problem, target, verify


def test_a_relaxed_answer_placed_by_the_engine_is_legal() -> None:
    inst = build_instance(gemm_problem(blocks=3, k_steps=2, tile=1024), target(capacity=6144))
    dag = build_dag(inst)
    warm = construct(inst, dag)
    inc = Incumbent.of(inst, dag, warm)
    built = build(inst, dag, inc, whole_problem(dag, inc), 0, inc.makespan, offsets=False)
    outcome = solve_built(built, TimeBudget.start(30), work=0.5, seed=0, workers=1)
    assert outcome.solution is not None
    placed = place_offsets(inst, outcome.solution, warm, TimeBudget.start(30), seed=0)
    assert placed is not None
    assert placed.starts == outcome.solution.starts
    assert verify(to_schedule(inst, placed, {})) == []


def test_times_whose_buffers_cannot_fit_are_refused() -> None:
    """Start every op at once: all 15 tiles live together in room for 4."""
    inst = build_instance(gemm_problem(blocks=3, k_steps=2, tile=1024), target(capacity=4096))
    warm = construct(inst, build_dag(inst))
    crowded = Solution(warm.modes, (0,) * inst.n_ops, warm.offsets)
    assert place_offsets(inst, crowded, warm, TimeBudget.start(30), seed=0) is None


def test_a_placement_out_of_nodes_tries_afresh_and_does_not_mark_the_budget_cut(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each placement gets a node budget (not the clock: the same stop on every machine).
    Out of nodes with the unmoved buffers pinned, the buffers are placed afresh; out of
    nodes again, the candidate is refused, and the run stays reproducible."""
    calls: list[tuple[bool, int | None]] = []

    def out_of_nodes(items, capacity, **kwargs):  # type: ignore[no-untyped-def]
        calls.append((any(b.offset is not None for b in items), kwargs.get("max_nodes")))
        return PlacementResult(SolveStatus.NO_SOLUTION_FOUND, {}, 0, 0, 0.0, "exact", {"nodes": 7})

    monkeypatch.setattr(offsets, "place", out_of_nodes)
    inst = build_instance(gemm_problem(blocks=3, k_steps=2, tile=1024), target(capacity=4096))
    warm = construct(inst, build_dag(inst))
    budget = TimeBudget.start(30)
    assert place_offsets(inst, _one_clash(inst, warm), warm, budget, seed=0) is None
    assert calls[0][0] and not calls[-1][0] and len(calls) >= 2
    assert all(nodes is not None and nodes > 0 for _, nodes in calls)
    assert not budget.cut and budget.spent > 0


def _one_clash(inst: Instance, legal: Solution) -> Solution:
    """``legal`` with one op moved later, into the lifetime of a buffer at the same
    address as one it allocates (the incumbent's addresses no longer fit)."""
    ends = legal.ends(inst)
    for op in sorted(range(inst.n_ops), key=lambda op: -legal.starts[op]):
        for b in inst.op_buffers[op]:
            for other in range(inst.n_buffers):
                if other != b and legal.offsets[other] == legal.offsets[b]:
                    users = inst.buffer_ops[other]
                    start = max(legal.starts[u] for u in users)
                    if start > legal.starts[op] and max(ends[u] for u in users) > start:
                        starts = list(legal.starts)
                        starts[op] = start
                        return Solution(legal.modes, tuple(starts), legal.offsets)
    raise AssertionError("no op can be moved into a clash")


def test_lns_with_the_engine_is_legal_and_reproducible() -> None:
    inst = build_instance(gemm_problem(blocks=6, k_steps=2, tile=1024), target(capacity=6144))
    dag = build_dag(inst)
    warm = construct(inst, dag)
    runs = [improve(inst, dag, warm, TimeBudget.start(0.5, wall=60), seed=2, workers=2, lower=0,
                    placement=True) for _ in range(2)]
    assert runs[0].solution == runs[1].solution
    assert runs[0].solution.makespan(inst) <= warm.makespan(inst)
    assert verify(to_schedule(inst, runs[0].solution, {})) == []


def test_buffers_moved_earlier_as_one_block_keep_their_addresses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every op 7 ticks earlier than in the incumbent: each buffer's lifetime moved as
    one block, so no buffer meets another at its address and the engine is not called."""
    calls: list[int] = []
    real_place = offsets.place

    def counting(items, capacity, **kwargs):  # type: ignore[no-untyped-def]
        items = list(items)
        calls.append(sum(b.offset is None for b in items))
        return real_place(items, capacity, **kwargs)

    monkeypatch.setattr(offsets, "place", counting)
    inst = build_instance(gemm_problem(blocks=3, k_steps=2, tile=1024), target(capacity=4096))
    warm = construct(inst, build_dag(inst))
    later = Solution(warm.modes, tuple(s + 7 for s in warm.starts), warm.offsets)
    placed = place_offsets(inst, warm, later, TimeBudget.start(30), seed=0)
    assert placed is not None and placed.offsets == warm.offsets
    assert calls == []
    assert verify(to_schedule(inst, placed, {})) == []


def test_a_block_buffer_that_now_meets_another_at_its_address_is_not_pinned() -> None:
    windows = [(0, 10), (5, 15), (20, 30)]
    # 0 and 1 overlap in time and share bytes 64-127; 2 shares 1's bytes later on.
    clash = offsets._clashing({0, 1, 2}, windows, [0, 64, 64], (128, 128, 128))
    assert clash == {0, 1}


def test_the_engine_sees_the_free_buffers_and_only_the_pinned_ones_live_beside_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[tuple[int, int, bool]]] = []
    real_place = offsets.place

    def recording(items, capacity, **kwargs):  # type: ignore[no-untyped-def]
        items = list(items)
        seen.append([(b.lower, b.upper, b.offset is None) for b in items])
        return real_place(items, capacity, **kwargs)

    monkeypatch.setattr(offsets, "place", recording)
    problem = gemm_problem(blocks=8, k_steps=2, tile=1024)
    tight = build_instance(problem, target(capacity=4096))
    warm = construct(tight, build_dag(tight))  # its addresses, in twice the room
    inst = build_instance(problem, target(capacity=8192))
    placed = place_offsets(inst, _one_clash(inst, warm), warm, TimeBudget.start(30), seed=0)
    assert placed is not None and seen
    items = seen[0]
    free = [(lo, hi) for lo, hi, unpinned in items if unpinned]
    assert free and len(items) < inst.n_buffers
    assert all(any(lo < f_hi and f_lo < hi for f_lo, f_hi in free)
               for lo, hi, unpinned in items if not unpinned)


def test_a_long_lived_moved_buffer_is_freed_only_after_the_local_ones() -> None:
    """Buffer 3 lives through everything (a weight whose last reader moved); freeing it
    at once would make the engine see every buffer of its lifetime."""
    windows = [(100, 120), (110, 130), (90, 125), (0, 10_000), (5_000, 5_100)]
    levels = offsets._pin_levels({0, 1}, {0, 1, 2, 3, 4}, {4}, list(range(5)), windows)
    assert levels == [{0, 1}, {0, 1, 2}, {0, 1, 2, 3}, {0, 1, 2, 3, 4}]


def test_attempts_that_would_free_too_many_buffers_are_skipped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offsets, "MAX_FREED", 3)
    windows = [(100, 120), (110, 130), (90, 125), (0, 10_000), (5_000, 5_100)]
    levels = offsets._pin_levels({0, 1}, {0, 1, 2, 3, 4}, {4}, list(range(5)), windows)
    assert levels == [{0, 1}, {0, 1, 2}]
