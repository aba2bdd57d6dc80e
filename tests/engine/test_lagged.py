"""The lagged pass: a consumer's blocks one at a time, each after the producer's next
store (:func:`schedsearch.engine.orders.batched_order` with ``lag``), stores fast and
loads lean (:func:`schedsearch.engine.modes.fast_store_modes`)."""

from __future__ import annotations

import pytest

from benchmarks.bench_memory import tight_problem
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.modes import fast_store_modes
from schedsearch.engine.orders import batched_order, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO, _Sequences
from schedsearch.engine.serial import SerialPass
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import block_of, example_at, verify

LAGGED = PassSpec(ModePolicy.FAST_STORES, OpOrder.LAGGED, 16, in_sequence=True,
                  guarded=False, safe=True)
BATCHED = PassSpec(ModePolicy.ALL, OpOrder.BATCHED, 8)


def _chain(ops: int):
    problem, tgt = tight_problem("chain", ops)
    inst = build_instance(problem, tgt)
    return problem, tgt, inst, build_dag(inst)


def test_each_consumer_block_follows_the_next_producer_store() -> None:
    """On the tight chain copy block ``j`` reads norm block ``j``'s store; with one block
    per batch and a lag of one it comes after the store of block ``j + 1`` (the last
    block after its own) and before the store of the block after that."""
    _, _, inst, dag = _chain(150)
    order = [inst.op_names[v] for v in batched_order(inst, dag, batch=1, lag=1)]
    assert sorted(order) == sorted(inst.op_names)
    position = {name: k for k, name in enumerate(order)}
    stores = {block_of(name): position[name] for name in order if name.startswith("r0.st.")}
    last = max(stores)
    for name in (name for name in order if name.startswith("c0.")):
        anchor = min(block_of(name) + 1, last)
        assert position[name] > stores[anchor]
        if anchor + 1 in stores:
            assert position[name] < stores[anchor + 1]


def test_no_lag_is_the_batched_order() -> None:
    _, _, inst, dag = _chain(150)
    assert batched_order(inst, dag, lag=0) == batched_order(inst, dag)


def test_stores_keep_their_shortest_modes_and_loads_their_leanest() -> None:
    _, _, inst, _ = _chain(150)
    allowed = fast_store_modes(inst)
    for name, modes, keep in zip(inst.op_names, inst.modes, allowed, strict=True):
        if ".st." in name:
            assert [modes[k].duration for k in keep] == [min(m.duration for m in modes)]
        elif ".ld" in name:  # the copy's loads also run on HVX: not a DMA queue's
            fastest = min(modes, key=lambda mode: mode.duration)
            draws = [sum(amount for _, amount in mode.budgets) for mode in modes
                     if mode.lanes == fastest.lanes]
            assert len(keep) == 1 and modes[keep[0]].lanes == fastest.lanes
            assert sum(amount for _, amount in modes[keep[0]].budgets) == min(draws)
        else:  # the norm computes read and write buffers only: every mode stays
            assert keep == list(range(len(modes)))


def test_a_load_stays_on_its_fastest_modes_lane_kind() -> None:
    """The bundled triple's copy loads also run on HVX at a small DDR draw; the lean
    mode is taken among the DMA ones, where the fastest runs."""
    problem, tgt = example_at("gemm-rmsnorm-copy-v75", 120)
    inst = build_instance(problem, tgt)
    for name, modes, keep in zip(inst.op_names, inst.modes, fast_store_modes(inst),
                                 strict=True):
        if name.startswith("c0.ld"):
            assert len(keep) == 1
            assert {lane for lane, _ in modes[keep[0]].lanes} == {"DMA"}


@pytest.mark.parametrize("ops", [150, 600])
def test_the_lagged_pass_beats_the_batched_one_and_verifies(ops: int) -> None:
    problem, tgt, inst, dag = _chain(ops)
    sequences = _Sequences(inst, dag)
    assert sequences.applies(LAGGED)
    makespans = {}
    for spec in (BATCHED, LAGGED):
        result = sequences.make_pass(spec).run()
        assert isinstance(result, Solution)
        makespans[spec.sequence] = result.makespan(inst)
        assert verify(to_schedule(inst, result, {})) == []
    assert makespans[OpOrder.LAGGED] < makespans[OpOrder.BATCHED]
    if ops >= 600:  # the first and last gaps are what is left above the bound
        assert makespans[OpOrder.LAGGED] <= 1.01 * lower_bound(problem, tgt).value


def test_the_modes_are_what_makes_the_lag_work() -> None:
    """The same order and switches with every mode allowed: the norm load takes the
    bandwidth the ended store left and the copy's store runs at half."""
    _, _, inst, dag = _chain(600)
    order = batched_order(inst, dag, batch=1, lag=1)
    makespans = []
    for allowed in (None, fast_store_modes(inst)):
        result = SerialPass(inst, dag, order, tails(inst, dag, allowed), LAGGED, allowed).run()
        assert isinstance(result, Solution)
        makespans.append(result.makespan(inst))
    assert makespans[1] < makespans[0]


def test_the_pass_needs_a_task_that_consumes_another() -> None:
    assert LAGGED in PORTFOLIO
    problem, tgt = example_at("gemm-rmsnorm-copy-v75", 120)
    inst = build_instance(problem, tgt)
    assert not _Sequences(inst, build_dag(inst)).applies(LAGGED)
