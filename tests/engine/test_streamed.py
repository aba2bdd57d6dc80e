"""Streamed due times (:func:`~.orders.streamed_dues`) and the ``streamed`` sequence: the
weights of a phase come earlier where the DMA queues and the DDR bandwidth could not
carry them just in time."""

from __future__ import annotations

from models.formats import Buffer, Op, Problem, Task, Tensor
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import streamed_dues
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO, _Sequences
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import compute, load, target, verify
from tests.engine.test_bottleneck_order import _mlp


def _three_loads() -> Problem:
    ops = {name: load("t", name.upper(), "In", name) for name in ("a", "b", "c")}
    return Problem("loads", {"In": Tensor((1,), "i8", "input")}, {"t": Task("k")},
                   {name.upper(): Buffer("M", 64) for name in ops}, ops)


def test_two_loads_due_together_on_one_queue_one_comes_a_load_earlier() -> None:
    # One queue: a load holds it 10 ticks at least (its DDR work, 400 of 60 per tick,
    # takes less), so of b and c, both due at 20, one must start by 10, and a by 0.
    inst = build_instance(_three_loads(), target(dma=1))
    assert streamed_dues(inst, [0, 20, 20], "MX") == [0, 10, 20]
    # On two queues the DDR decides: c ends at 30, b by 30 - 400 / 60.
    inst = build_instance(_three_loads(), target(dma=2))
    assert streamed_dues(inst, [0, 20, 20], "MX") == [0, 13, 20]


def test_the_busiest_lane_is_not_a_fluid_machine() -> None:
    ops = {"a": compute("t", [], [("X", "x")], duration=30),
           "b": compute("t", [], [("Y", "y")], duration=30)}
    problem = Problem("mx", {}, {"t": Task("k")}, {"X": Buffer("M", 64), "Y": Buffer("M", 64)},
                      ops)
    assert streamed_dues(build_instance(problem, target()), [0, 0], "MX") == [0, 0]


def test_the_streamed_pass_is_legal_and_runs_only_where_there_are_loads() -> None:
    inst = build_instance(_mlp(), target(dma=1))
    dag = build_dag(inst)
    sequences = _Sequences(inst, dag)
    specs = [spec for spec in PORTFOLIO if spec.sequence is OpOrder.STREAMED]
    assert specs and all(sequences.applies(spec) for spec in specs)
    result = sequences.make_pass(PassSpec(ModePolicy.ALL, OpOrder.STREAMED, 48)).run()
    assert isinstance(result, Solution)
    assert verify(to_schedule(inst, result, {})) == []
    bare = Problem("bare", {}, {"t": Task("k")}, {},
                   {name: Op(task="t", modes=op.modes) for name, op in _mlp().ops.items()})
    without = build_instance(bare, target(dma=1))
    assert not any(_Sequences(without, build_dag(without)).applies(spec) for spec in specs)
