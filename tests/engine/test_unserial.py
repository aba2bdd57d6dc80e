"""Where the problem's own order cannot run one op at a time: the frugal order, the
banker's rule, and a search that always finds a schedule there.

The shape of Mistral-7B's prefill MLP in 8 MiB of VTCM, shrunk to 264 ops in 2 MiB: the
operator library emits all seven K steps' operand loads of the down projection before
its first multiply (2.75 MiB run one op at a time), and the down projection's weight
loads are ready at time 0 while the gate-times-up product needs three blocks of
448 KiB. Before the frugal passes every pass of the portfolio stalled there.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings

from models.formats import Problem, Target
from models.targets import load_target
from models.workload import tile, workload_from_dict
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import frugal_order, problem_order, serial_peaks, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import list_schedule
from schedsearch.engine.search import solve_report
from schedsearch.engine.serial import SerialPass, Stall
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import feasible_problems, verify
from tests.fuzz._budget import examples

#: VTCM of the shrunk MLP: the product's three blocks (1.31 MiB) fit, the down
#: projection's loads issued as written (2.75 MiB) do not.
MINI_VTCM = 2 * 1024 * 1024


def _gemm(name: str, n: int, k: int, a: str, b: str, out: str) -> dict[str, object]:
    return {"name": name, "kind": "gemm", "M": 128, "N": n, "K": k, "dtype": "f16", "a": a,
            "b": b, "out": out, "bm": 128, "bn": 256, "bk": 512}


def mini_mlp(hidden: int = 1024, intermediate: int = 3584) -> tuple[Problem, Target]:
    """An RMSNorm, the gate and up projections, SiLU, their product and the down
    projection, as in a decoder layer's MLP, on Hexagon v75 with :data:`MINI_VTCM`."""
    rows = {"rows": 128, "block_rows": 64}
    workload = workload_from_dict({
        "format": "npu-workload/1", "name": "mini-mlp", "target": "hexagon-v75",
        "tasks": [{"name": "norm", "kind": "rmsnorm", "cols": hidden, "x": "x", "out": "h",
                   "weight": "w", **rows},
                  _gemm("gate", intermediate, hidden, "h", "wg", "g"),
                  {"name": "silu", "kind": "elementwise", "cols": intermediate, "x": "g",
                   "out": "s", "fn": "silu", "dtype": "f16", **rows},
                  _gemm("up", intermediate, hidden, "h", "wu", "u"),
                  {"name": "mul", "kind": "binary", "cols": intermediate, "x": "s", "y": "u",
                   "out": "m", "fn": "mul", "dtype": "f16", **rows},
                  _gemm("down", hidden, intermediate, "m", "wd", "y")]}, "mini-mlp")
    target = load_target("hexagon-v75")
    vtcm = dataclasses.replace(target.memories["VTCM"], capacity_bytes=MINI_VTCM)
    target = dataclasses.replace(target, memories={**target.memories, "VTCM": vtcm})
    return tile(workload, target), target


def test_the_frugal_order_runs_one_op_at_a_time_where_the_problems_order_cannot() -> None:
    problem, target = mini_mlp()
    inst = build_instance(problem, target)
    dag = build_dag(inst)
    frugal = frugal_order(inst, dag, tails(inst, dag))
    position = {op: k for k, op in enumerate(frugal)}
    assert sorted(frugal) == list(range(inst.n_ops))
    assert all(position[p] < position[s] for p, s, _ in dag.edges)
    assert serial_peaks(inst, problem_order(dag))["VTCM"] > MINI_VTCM
    assert serial_peaks(inst, frugal)["VTCM"] <= MINI_VTCM
    # each weight load of the down projection comes right before its multiply
    for k, op in enumerate(frugal):
        if inst.op_names[op].startswith("down.ldB"):
            assert inst.op_names[frugal[k + 1]].startswith("down.mm")


def test_the_list_scheduler_finds_a_legal_schedule_where_the_problems_order_overflows(
        ) -> None:
    problem, target = mini_mlp()
    inst = build_instance(problem, target)
    found = list_schedule(inst, build_dag(inst))
    assert isinstance(found, Solution)
    assert verify(to_schedule(inst, found, {})) == []


def test_solve_finds_a_schedule_where_the_problems_order_overflows(
        wall_never_binds: None) -> None:
    problem, target = mini_mlp()
    report = solve_report(problem, target, time_limit=0.5, workers=1)
    assert verify(report.schedule) == []
    assert report.ratio < 1.3  # in-order issue alone gives 1.96


@settings(max_examples=examples(0.5))
@given(feasible_problems())
def test_a_safe_pass_stalls_only_for_an_address_never_for_bytes(
        case: tuple[Problem, Target]) -> None:
    """The banker's rule: wherever the sequence run one op at a time fits, a safe pass
    with any window stalls only when the free bytes are not in one piece."""
    problem, target = case
    inst = build_instance(problem, target)
    dag = build_dag(inst)
    tail = tails(inst, dag)
    order = frugal_order(inst, dag, tail)
    assert serial_peaks(inst, order)["M"] <= target.memories["M"].capacity_bytes
    for window in (0, 3, 64):
        run = SerialPass(inst, dag, order, tail,
                         PassSpec(ModePolicy.ALL, OpOrder.FRUGAL, window, safe=True))
        result = run.run()
        if isinstance(result, Solution):
            assert verify(to_schedule(inst, result, {})) == []
            continue
        assert isinstance(result, Stall)
        head = order[run.head]
        need = sum(inst.buffer_size[b] for b in inst.op_buffers[head] if not run.allocated[b])
        memory = run.memories["M"]
        assert memory.used + need <= memory.capacity, (window, result)
