"""The priced interleaved pass with a window per task, guard (1) off and the banker's
rule on: on the tight triple it runs the copy's blocks on HVX beside the GEMM, the way
the ``configuration`` LP does, where the other passes run the tasks one after another."""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks.bench_memory import tight_problem
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO, _Sequences
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import verify

PRICED_TASK_WINDOWS = PassSpec(ModePolicy.PRICED, OpOrder.INTERLEAVED, 16, in_sequence=True,
                               guarded=False, safe=True, task_windows=True)


def _triple(ops: int):
    problem, tgt = tight_problem("triple", ops)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    return inst, dag, _Sequences(inst, dag)


def test_the_portfolio_has_the_pass() -> None:
    assert PRICED_TASK_WINDOWS in PORTFOLIO


@pytest.mark.parametrize("ops", [150, 600])
def test_the_pass_verifies(ops: int) -> None:
    inst, _, sequences = _triple(ops)
    result = sequences.make_pass(PRICED_TASK_WINDOWS).run()
    assert isinstance(result, Solution)
    assert verify(to_schedule(inst, result, {})) == []


def test_each_switch_is_needed_on_the_tight_triple() -> None:
    """At about 600 ops the pass beats every other pass of the portfolio, and each of
    its switches undone (guard (1) back on with no banker's rule; one window over the
    whole sequence) gives a longer schedule."""
    inst, _, sequences = _triple(600)

    def makespan(spec: PassSpec) -> float:
        result = sequences.make_pass(spec).run()
        return result.makespan(inst) if isinstance(result, Solution) else float("inf")

    ours = makespan(PRICED_TASK_WINDOWS)
    others = [makespan(spec) for spec in PORTFOLIO
              if spec != PRICED_TASK_WINDOWS and sequences.applies(spec)]
    assert ours < min(others)
    assert ours < makespan(dataclasses.replace(PRICED_TASK_WINDOWS, guarded=True, safe=False))
    assert ours < makespan(dataclasses.replace(PRICED_TASK_WINDOWS, task_windows=False))


def test_the_copy_runs_beside_the_gemm_on_hvx() -> None:
    """The copy's transfers take their HVX mode (the energy LP's cheapest), and two of
    them run at once beside a GEMM transfer: the LP's configuration, which only fits
    VTCM while the RMSNorm waits."""
    inst, _, sequences = _triple(600)
    result = sequences.make_pass(PRICED_TASK_WINDOWS).run()
    assert isinstance(result, Solution)
    schedule = to_schedule(inst, result, {})
    copies = {name: placed for name, placed in schedule.ops.items() if name.startswith("c0.")}
    assert all("HVX" in placed.units for placed in copies.values())
    gemm = [placed for name, placed in schedule.ops.items()
            if name.startswith("g0.") and "DMA" in placed.units]

    def running(at: int, ops) -> int:
        return sum(placed.start <= at < placed.end for placed in ops)

    assert any(running(placed.start, copies.values()) >= 2 and running(placed.start, gemm)
               for placed in copies.values())
