"""The lead-first priority of the list scheduler (:func:`~.orders.bottleneck_leads`): among
ready transfers, the one on the path to the next op of the busiest lane goes first."""

from __future__ import annotations

from models.formats import Buffer, Problem, Task, Tensor
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import bottleneck_lane, bottleneck_leads, problem_order, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO
from schedsearch.engine.serial import SerialPass
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import compute, load, store, target, verify


def _phases() -> Problem:
    """Two GEMM-like phases on MX with one DMA queue. ``ldW`` (first in problem order)
    loads the second phase's weight, which also feeds a long vector op, so its tail is the
    longest; ``ldA`` loads the first phase's activation, on the path to the first MX op."""
    ops = {"ldW": load("t", "W", "Win", "w"),
           "ldA": load("t", "A", "Ain", "a"),
           "mm1": compute("t", [("A", "a")], [("X", "x")]),
           "mm2": compute("t", [("X", "x"), ("W", "w")], [("Y", "y")]),
           "vx": compute("t", [("W", "w")], [("V", "v")], duration=60, lane="VX"),
           "st": store("t", "Y", "y", "Out", 0)}
    tensors = {"Win": Tensor((1,), "i8", "input"), "Ain": Tensor((1,), "i8", "input"),
               "Out": Tensor((1,), "i8", "output")}
    buffers = {name: Buffer("M", 256) for name in ("W", "A", "X", "Y", "V")}
    return Problem("phases", tensors, {"t": Task("k")}, buffers, ops)


def test_the_busiest_lane_and_the_engine_op_each_op_leads_to() -> None:
    inst = build_instance(_phases(), target(dma=1))
    dag = build_dag(inst)
    lead = bottleneck_leads(inst, dag, tails(inst, dag))
    at = inst.op_index
    # Work per unit: MX 40 (two ops of 20, one unit), DMA 30, VX 60 over 2 units.
    assert bottleneck_lane(inst) == "MX"
    assert [lead[at[op]] for op in ("ldA", "mm1", "ldW", "mm2", "vx", "st")] == \
        [0, 0, 1, 1, 2, 2]


def _first_load(spec: PassSpec) -> str:
    inst = build_instance(_phases(), target(dma=1))
    dag = build_dag(inst)
    tail = tails(inst, dag)
    result = SerialPass(inst, dag, problem_order(dag), tail, spec).run()
    assert isinstance(result, Solution)
    assert verify(to_schedule(inst, result, {})) == []
    return min(("ldA", "ldW"), key=lambda op: result.starts[inst.op_index[op]])


def test_lead_first_loads_the_next_engine_ops_operand_first() -> None:
    assert _first_load(PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 64, lead_first=True)) == "ldA"
    # Longest tail first, or the problem's order, load the later phase's weight first.
    assert _first_load(PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 64)) == "ldW"
    assert _first_load(PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 64, in_sequence=True)) == "ldW"


def test_the_portfolio_has_a_lead_first_pass() -> None:
    assert any(spec.lead_first for spec in PORTFOLIO)
