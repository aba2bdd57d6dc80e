"""The valley order: a hog task's computes (:func:`schedsearch.engine.orders.hog_tasks`)
where the other tasks, in their own order, hold the least memory
(:func:`schedsearch.engine.orders.valley_order`), and the pass on it."""

from __future__ import annotations

import pytest

from benchmarks.bench_memory import tight_problem
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import hog_tasks, problem_order, valley_order
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO, _Sequences
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import block_of, verify

VALLEY = PassSpec(ModePolicy.ALL, OpOrder.VALLEY, 8, in_sequence=True, guarded=False,
                  safe=True, split=True, last_if_best=True)


def _instance(name: str, ops: int):
    problem, tgt = tight_problem(name, ops)
    inst = build_instance(problem, tgt)
    return inst, build_dag(inst)


def test_a_hog_is_a_task_with_a_large_buffer_beside_one_without() -> None:
    assert hog_tasks(_instance("pair-wide", 150)[0]) == {"r0"}  # 64 KiB blocks of 192
    assert hog_tasks(_instance("triple", 150)[0]) == set()  # no large buffer
    assert hog_tasks(_instance("chain", 150)[0]) == set()  # every task has one


def test_without_a_hog_it_is_the_problem_order() -> None:
    inst, dag = _instance("triple", 150)
    assert valley_order(inst, dag) == problem_order(dag)


@pytest.mark.parametrize("ops", [150, 600])
def test_each_norm_compute_falls_where_the_gemm_holds_at_most_its_a_tiles(ops: int) -> None:
    """Run one op at a time in the valley order, the GEMM holds at most its two 16 KiB A
    tiles wherever a norm compute comes (never an accumulator between the two K steps
    of a column; a C tile whose store comes next is on its way out); the norm's loads
    come before their compute, its stores after."""
    inst, dag = _instance("pair-wide", ops)
    order = valley_order(inst, dag)
    names = [inst.op_names[v] for v in order]
    assert sorted(names) == sorted(inst.op_names)
    position = {v: k for k, v in enumerate(order)}
    gemm = [b for b, users in enumerate(inst.buffer_ops)
            if all(inst.op_task[v] == "g0" for v in users)]
    for k, name in enumerate(names):
        if ".norm." not in name:
            continue
        held = sum(inst.buffer_size[b] for b in gemm
                   if min(position[v] for v in inst.buffer_ops[b]) < k
                   < max(position[v] for v in inst.buffer_ops[b]
                         if not inst.op_names[v].startswith("g0.st.")))
        assert held <= 2 * 16 * 1024, (name, held)
        block = block_of(name)
        assert names.index(f"r0.ldX.b{block}") < k < names.index(f"r0.st.b{block}")


def test_the_pass_beats_the_others_on_the_tight_wide_pair_and_verifies() -> None:
    inst, dag = _instance("pair-wide", 600)
    sequences = _Sequences(inst, dag)
    assert VALLEY in PORTFOLIO and sequences.applies(VALLEY)
    ours = sequences.make_pass(VALLEY).run()
    assert isinstance(ours, Solution)
    assert verify(to_schedule(inst, ours, {})) == []
    others = [sequences.make_pass(spec).run() for spec in PORTFOLIO
              if spec != VALLEY and sequences.applies(spec)]
    best = min(result.makespan(inst) for result in others if isinstance(result, Solution))
    assert ours.makespan(inst) < best


def test_the_pass_needs_a_hog() -> None:
    inst, dag = _instance("triple", 150)
    assert not _Sequences(inst, dag).applies(VALLEY)


def _passes_made(name: str, ops: int, monkeypatch: pytest.MonkeyPatch) -> list[PassSpec]:
    from schedsearch.engine.portfolio import list_schedule

    made: list[PassSpec] = []
    real = _Sequences.make_pass

    def make_pass(self, spec: PassSpec):
        made.append(spec)
        return real(self, spec)

    monkeypatch.setattr(_Sequences, "make_pass", make_pass)
    inst, dag = _instance(name, ops)
    assert isinstance(list_schedule(inst, dag), Solution)
    return made


def test_the_portfolio_ends_with_the_valley_pass_where_it_is_the_best(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On the tight wide pair the valley pass is the shortest so far, so LNS gets the
    later passes' time; on the Ascend pair (a hog too) it is not, and they run."""
    made = _passes_made("pair-wide", 600, monkeypatch)
    assert made[-1].sequence is OpOrder.VALLEY and made[-1].last_if_best
    monkeypatch.undo()
    made = _passes_made("ascend", 600, monkeypatch)
    valley = [k for k, spec in enumerate(made) if spec.sequence is OpOrder.VALLEY]
    assert valley and valley[0] < len(made) - 1
