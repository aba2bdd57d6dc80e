"""The batched order: a task that consumes another's output follows it two blocks at a
time (:func:`schedsearch.engine.orders.batched_order`), and the pass on it."""

from __future__ import annotations

import pytest

from benchmarks.bench_memory import tight_problem
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import batched_order, cross_task_preds, problem_order, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO, _Sequences
from schedsearch.engine.serial import SerialPass
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import block_of, example_at, verify

BATCHED = PassSpec(ModePolicy.ALL, OpOrder.BATCHED, 8)


def _chain(ops: int):
    problem, tgt = tight_problem("chain", ops)
    inst = build_instance(problem, tgt)
    return inst, build_dag(inst)


def test_consumer_blocks_follow_the_store_of_the_second_block_of_their_pair() -> None:
    """On the tight chain (RMSNorm -> DDR -> copy) each copy block reads one norm block's
    store; blocks 2k and 2k+1 come together, right after the store of block 2k+1."""
    inst, dag = _chain(150)
    order = [inst.op_names[v] for v in batched_order(inst, dag)]
    assert sorted(order) == sorted(inst.op_names)
    position = {name: k for k, name in enumerate(order)}
    copies = [name for name in order if name.startswith("c0.")]
    stores = {block_of(name): position[name] for name in order if name.startswith("r0.st.")}
    for name in copies:
        block = block_of(name)
        last = min(block | 1, max(stores))  # the pair's second block (or the last one)
        assert position[name] > stores[last]
        later = [b for b in stores if b > last]
        if later:  # before the store of any later block
            assert position[name] < stores[min(later)]
    loads = [block_of(name) for name in copies if ".ldX." in name]
    assert loads == sorted(loads)


def test_tasks_that_consume_nothing_keep_the_problem_order() -> None:
    problem, tgt = example_at("gemm-rmsnorm-copy-v75", 120)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    assert not any(cross_task_preds(inst, dag))
    assert batched_order(inst, dag) == problem_order(dag)
    assert not _Sequences(inst, dag).applies(BATCHED)


def test_the_portfolio_has_the_batched_pass() -> None:
    assert BATCHED in PORTFOLIO


@pytest.mark.parametrize("ops", [150, 600])
def test_two_blocks_a_gap_beat_one_and_verify(ops: int) -> None:
    """The docstring's claim, measured by the pass itself: batches of two give a shorter
    schedule than batches of one or three on the tight chain, and it is legal."""
    inst, dag = _chain(ops)
    tail = tails(inst, dag)
    makespans = {}
    for batch in (1, 2, 3):
        result = SerialPass(inst, dag, batched_order(inst, dag, batch=batch), tail,
                            BATCHED).run()
        assert isinstance(result, Solution)
        makespans[batch] = result.makespan(inst)
        if batch == 2:
            assert verify(to_schedule(inst, result, {})) == []
    assert makespans[2] < min(makespans[1], makespans[3])
