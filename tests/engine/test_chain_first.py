"""Weights give way to the chain into the busiest lane (``chain_first``,
:meth:`~.serial.SerialPass._in_the_way`): a load without predecessors does not take the
DMA queue when an op on the path to the matrix engine becomes ready before it ends."""

from __future__ import annotations

from dataclasses import replace

from models.formats import Buffer, Op, Problem, Task, Tensor
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import problem_order, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO, _Sequences
from schedsearch.engine.serial import SerialPass
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import compute, load, store, target, verify


def _boundary() -> Problem:
    """Two GEMM phases on MX, one DMA queue. Between them the first phase's result goes
    to DDR and back (``stX``, ``ldX``: the chain); ``ldW`` and ``ldV`` load the weights of
    the second and third MX op (20 ticks each, so ``ldV`` started when the queue frees
    at 30 would still run when ``stX`` becomes ready at 40). MX is the busiest lane (90
    ticks of work, DMA 80)."""
    ops = {"ldA": load("t", "A", "Ain", "a"),
           "ldW": load("t", "W", "Win", "w", duration=20),
           "ldV": load("t", "V", "Vin", "v", duration=20),
           "mm1": compute("t", [("A", "a")], [("X", "x")], duration=30),
           "stX": store("t", "X", "x", "T", 0),
           "ldX": load("t", "X2", "T", "x2"),
           "mm2": compute("t", [("X2", "x2"), ("W", "w")], [("Y", "y")], duration=30),
           "mm3": compute("t", [("Y", "y"), ("V", "v")], [("Z", "z")], duration=30),
           "stZ": store("t", "Z", "z", "Out", 0)}
    tensors = {name: Tensor((1,), "i8", "input") for name in ("Ain", "Win", "Vin")}
    tensors |= {"T": Tensor((1,), "i8", "temp"), "Out": Tensor((1,), "i8", "output")}
    buffers = {name: Buffer("M", 256) for name in ("A", "W", "V", "X", "X2", "Y", "Z")}
    return Problem("boundary", tensors, {"t": Task("k")}, buffers, ops)


def _run(spec: PassSpec) -> tuple[dict[str, int], int]:
    inst = build_instance(_boundary(), target(dma=1))
    dag = build_dag(inst)
    result = SerialPass(inst, dag, problem_order(dag), tails(inst, dag), spec).run()
    assert isinstance(result, Solution)
    assert verify(to_schedule(inst, result, {})) == []
    return {op: result.starts[inst.op_index[op]] for op in inst.op_names}, result.makespan(inst)


def test_a_weight_waits_for_the_chain_into_the_engine() -> None:
    plain, plain_end = _run(PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 64, lead_first=True))
    chain, chain_end = _run(PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 64, lead_first=True,
                                     chain_first=True))
    # Without it the queue takes ldV at 30 and stX waits until 50.
    assert plain["ldV"] == 30 and plain["stX"] == 50
    # With it stX starts when mm1 ends, ldV after the chain, and the engine waits less.
    assert chain["stX"] == 40 and chain["ldV"] > chain["ldX"]
    assert chain_end < plain_end


def test_chain_first_passes_run_only_where_there_are_loads() -> None:
    specs = [spec for spec in PORTFOLIO if spec.chain_first]
    assert specs
    with_loads = build_instance(_boundary(), target(dma=1))
    assert all(_Sequences(with_loads, build_dag(with_loads)).applies(spec) for spec in specs)
    # The same ops on lanes without buffers (a project schedule, as PSPLIB's): none run.
    bare = Problem("bare", {}, {"t": Task("k")}, {}, {
        name: Op(task="t", modes=op.modes) for name, op in _boundary().ops.items()})
    without = build_instance(bare, target(dma=1))
    assert not any(_Sequences(without, build_dag(without)).applies(spec) for spec in specs)


def test_the_engine_passes_do_not_run_where_a_transfer_queue_is_busiest() -> None:
    """The boundary's MX is busiest (90 ticks against DMA's 80): every pass built around
    it runs. With the MX ops ten times shorter the DMA queue binds, and none of them
    runs (their engine would be a transfer queue, whose chains they rank by itself)."""
    specs = [spec for spec in PORTFOLIO if spec.lead_first or spec.chain_first
             or spec.sequence in (OpOrder.BOTTLENECK, OpOrder.STREAMED)]
    assert specs
    engine = build_instance(_boundary(), target(dma=1))
    assert all(_Sequences(engine, build_dag(engine)).applies(spec) for spec in specs)
    quick = _boundary()
    ops = {name: Op(op.task, tuple(replace(m, duration=m.duration // 10) if "MX" in m.lanes
                                   else m for m in op.modes), op.reads, op.writes)
           for name, op in quick.ops.items()}
    transfers = build_instance(replace(quick, ops=ops), target(dma=1))
    assert not any(_Sequences(transfers, build_dag(transfers)).applies(spec)
                   for spec in specs)
    assert any(_Sequences(transfers, build_dag(transfers)).applies(spec)
               for spec in PORTFOLIO)


def test_the_lead_first_passes_still_run_where_there_are_no_lanes() -> None:
    """A project schedule (PSPLIB's: budgets only) keeps its lead-first passes, as
    before the transfer rule; the passes that need a busiest lane do not run."""
    from models.formats import Mode, Target

    lanes_free = Target("rcpsp", lanes={}, budgets={"R1": 4}, memories={})
    ops = {f"j{i}": Op(task="p", modes=(Mode(3 + i, {}, {"R1": 2}),)) for i in range(4)}
    project = build_instance(Problem("p", {}, {"p": Task("rcpsp")}, {}, ops,
                                     (("j0", "j2"), ("j1", "j3"))), lanes_free)
    sequences = _Sequences(project, build_dag(project))
    lead = [spec for spec in PORTFOLIO if spec.lead_first and not spec.chain_first]
    assert lead and all(sequences.applies(spec) for spec in lead)
    assert not any(sequences.applies(spec) for spec in PORTFOLIO
                   if spec.sequence in (OpOrder.BOTTLENECK, OpOrder.STREAMED))
