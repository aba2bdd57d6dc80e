"""The sequence built around the busiest lane kind (:func:`~.orders.bottleneck_order`): its
ops in the problem's order, the chain that feeds a later phase as soon as its inputs
exist, weights just before the op they feed."""

from __future__ import annotations

from models.formats import Buffer, Problem, Task, Tensor
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import bottleneck_order, problem_order, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO, _Sequences
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import compute, load, store, target, verify


def _mlp() -> Problem:
    """A gate GEMM and an up GEMM of three tiles on MX (the busiest lane: 200 of work
    against DMA's 170) from one activation ``A``, and a down GEMM that needs the gate's
    output after a vector op and a DDR round trip (``stG``, ``ldG``, ``act``, ``stH``,
    ``ldH``), like the SiLU of a Llama MLP. In the problem's order that chain comes after
    every op of ``up``, which does not feed it."""
    ops = {"ldA": load("t", "A", "In", "a"),
           "ldWg": load("t", "Wg", "Wgin", "wg"),
           "gate": compute("t", [("A", "a"), ("Wg", "wg")], [("G", "g")], duration=40),
           "stG": store("t", "G", "g", "Gd", 0),
           **{f"ldWu{k}": load("t", f"Wu{k}", "Wuin", f"wu{k}", duration=30) for k in range(3)},
           **{f"up{k}": compute("t", [("A", "a"), (f"Wu{k}", f"wu{k}")], [(f"U{k}", f"u{k}")],
                                duration=40) for k in range(3)},
           "ldG": load("t", "G2", "Gd", "g2"),
           "act": compute("t", [("G2", "g2")], [("H", "h")], lane="VX"),
           "stH": store("t", "H", "h", "Hd", 0),
           "ldH": load("t", "H2", "Hd", "h2"),
           "ldWd": load("t", "Wd", "Wdin", "wd"),
           "down": compute("t", [("H2", "h2"), ("U0", "u0"), ("U1", "u1"), ("U2", "u2"),
                                  ("Wd", "wd")], [("D", "d")],
                           duration=40),
           "st": store("t", "D", "d", "Out", 0)}
    tensors = {name: Tensor((1,), "i8", "input") for name in ("In", "Wgin", "Wuin", "Wdin")}
    tensors |= {"Gd": Tensor((1,), "i8", "temp"), "Hd": Tensor((1,), "i8", "temp"),
                "Out": Tensor((1,), "i8", "output")}
    buffers = {name: Buffer("M", 256)
               for name in ("A", "Wg", "G", "Wu0", "Wu1", "Wu2", "U0", "U1", "U2", "G2",
                             "H", "H2", "Wd", "D")}
    return Problem("mlp", tensors, {"t": Task("k")}, buffers, ops)


def _orders() -> tuple[list[str], list[str]]:
    inst = build_instance(_mlp(), target(dma=1))
    dag = build_dag(inst)
    names = inst.op_names
    return ([names[v] for v in bottleneck_order(inst, dag, tails(inst, dag))],
            [names[v] for v in problem_order(dag)])


def test_the_chain_to_a_later_phase_goes_before_the_phase_between() -> None:
    order, problem = _orders()
    assert problem.index("up2") < problem.index("act")
    assert order.index("ldH") < order.index("ldWu0") < order.index("up0")


def test_the_engine_ops_keep_the_problems_order_and_weights_come_just_before() -> None:
    order, _ = _orders()
    engine = [op for op in order if op in ("gate", "up0", "up1", "up2", "down")]
    assert engine == ["gate", "up0", "up1", "up2", "down"]
    assert all(order.index(f"ldWu{k}") == order.index(f"up{k}") - 1 for k in range(3))
    assert order.index("ldWd") == order.index("down") - 1


def test_on_one_queue_a_pass_on_it_moves_the_chain_before_the_later_weights() -> None:
    inst = build_instance(_mlp(), target(dma=1))
    dag = build_dag(inst)
    sequences = _Sequences(inst, dag)
    first = {}
    for sequence in (OpOrder.BOTTLENECK, OpOrder.PROBLEM):
        result = sequences.make_pass(PassSpec(ModePolicy.ALL, sequence, 64,
                                              in_sequence=True)).run()
        assert isinstance(result, Solution)
        assert verify(to_schedule(inst, result, {})) == []
        first[sequence] = min(("ldG", "ldWu2"), key=lambda op: result.starts[inst.op_index[op]])
    assert first == {OpOrder.BOTTLENECK: "ldG", OpOrder.PROBLEM: "ldWu2"}


def test_the_portfolio_runs_it_only_where_some_op_uses_a_lane() -> None:
    assert any(spec.sequence is OpOrder.BOTTLENECK for spec in PORTFOLIO)
    spec = next(spec for spec in PORTFOLIO if spec.sequence is OpOrder.BOTTLENECK)
    inst = build_instance(_mlp(), target(dma=1))
    assert _Sequences(inst, build_dag(inst)).applies(spec)
