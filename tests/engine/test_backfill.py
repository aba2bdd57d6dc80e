"""Loads without predecessors past the window fill a queue the window leaves idle
(``backfill``, :meth:`~.serial.SerialPass._backfill`), but never take its last free unit."""

from __future__ import annotations

from models.formats import Buffer, Problem, Task, Tensor
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import problem_order, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO
from schedsearch.engine.serial import SerialPass
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import compute, load, store, target, verify


def _prefetch() -> Problem:
    """``mm1`` (50 ticks on MX) then its store; ``ldW``, the weights of ``mm2``, comes
    after the store in the problem's order, so a window of 0 keeps it out until the
    store starts at 60, while both DMA queues idle from 10 to 60 (a load and the store
draw 40 of the 60 bandwidth units each at full speed, so beside the store it loads at
half speed)."""
    ops = {"ldA": load("t", "A", "Ain", "a"),
           "mm1": compute("t", [("A", "a")], [("X", "x")], duration=50),
           "stX": store("t", "X", "x", "Out", 0),
           "ldW": load("t", "W", "Win", "w"),
           "mm2": compute("t", [("W", "w")], [("Y", "y")], duration=20),
           "stY": store("t", "Y", "y", "Out", 1)}
    tensors = {"Ain": Tensor((1,), "i8", "input"), "Win": Tensor((1,), "i8", "input"),
               "Out": Tensor((2,), "i8", "output")}
    buffers = {name: Buffer("M", 256) for name in ("A", "X", "W", "Y")}
    return Problem("prefetch", tensors, {"t": Task("k")}, buffers, ops)


def _run(backfill: bool, dma: int) -> tuple[dict[str, int], int]:
    inst = build_instance(_prefetch(), target(dma=dma))
    dag = build_dag(inst)
    spec = PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 0, in_sequence=True, backfill=backfill)
    result = SerialPass(inst, dag, problem_order(dag), tails(inst, dag), spec).run()
    assert isinstance(result, Solution)
    assert verify(to_schedule(inst, result, {})) == []
    return {op: result.starts[inst.op_index[op]] for op in inst.op_names}, result.makespan(inst)


def test_a_weight_past_the_window_loads_while_the_queues_idle() -> None:
    plain, plain_end = _run(backfill=False, dma=2)
    filled, filled_end = _run(backfill=True, dma=2)
    # Without it ldW starts beside the store, at half bandwidth (20 ticks).
    assert plain["ldW"] == 60 and plain["mm2"] == 80
    # At 0 ldA holds one queue of two: the last one is kept. At 10 both are free.
    assert filled["ldW"] == 10 and filled["mm2"] == 60
    assert filled_end < plain_end


def test_the_last_free_unit_is_left_to_the_window() -> None:
    plain, _ = _run(backfill=False, dma=1)
    filled, _ = _run(backfill=True, dma=1)
    assert filled == plain


def test_the_portfolio_has_backfilling_passes_around_the_engine() -> None:
    specs = [spec for spec in PORTFOLIO if spec.backfill]
    assert specs and all(spec.sequence is OpOrder.BOTTLENECK for spec in specs)
