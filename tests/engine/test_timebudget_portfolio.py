"""The list scheduler's work accounting: every pass is charged its setup (per op) beside
its start attempts and the eligible ops its scans pass over, so that a portfolio on
thousands of ops stays near the work it was granted. Counted charges, not timings."""

from __future__ import annotations

import math

import pytest

from models.workload import load_problem_input
from schedsearch.engine import serial
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.modes import lean_split
from schedsearch.engine.plain import plain_list_schedule
from schedsearch.engine.portfolio import CHARGE_PER_OP, list_schedule
from schedsearch.engine.serial import CHARGE_PER_SCAN, CHARGE_PER_TRY
from schedsearch.engine.split_bus import CHARGE_PER_OP as SPLIT_CHARGE_PER_OP
from schedsearch.engine.timebudget import TimeBudget


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The start attempts and scanned ops of each pass run, in order."""
    seen: list[tuple[int, int]] = []
    run = serial.SerialPass.run

    def counted(self, *args, **kwargs):
        result = run(self, *args, **kwargs)
        seen.append((self.tries, self.scanned))
        return result

    monkeypatch.setattr(serial.SerialPass, "run", counted)
    return seen


def test_each_pass_and_the_plain_floor_are_charged_their_setup_attempts_and_scans(
        attempts: list[tuple[int, int]]) -> None:
    problem, target = load_problem_input("gemm-rmsnorm-copy-v75", None)
    inst = build_instance(problem, target)
    dag = build_dag(inst, "tile")
    budget = TimeBudget.start(1000.0)  # reproducible, more than every pass needs
    list_schedule(inst, dag, budget)
    plain = plain_list_schedule(inst, dag)
    setup = CHARGE_PER_OP * inst.n_ops
    split = SPLIT_CHARGE_PER_OP * inst.n_ops if lean_split(inst) is not None else 0.0
    assert len(attempts) > 1
    assert all(scanned >= tries for tries, scanned in attempts)  # each try was scanned
    assert math.isclose(budget.spent, (len(attempts) + 1) * setup + split
                        + CHARGE_PER_TRY * (sum(t for t, _ in attempts) + plain.tries)
                        + CHARGE_PER_SCAN * sum(s for _, s in attempts))


def test_a_pass_whose_share_cannot_pay_its_setup_makes_no_attempt_beyond_the_first(
        attempts: list[tuple[int, int]]) -> None:
    """With work left for one more setup after the plain floor and the first pass, the
    next pass's share (half of it) is below its setup: it is cut after its first event,
    not run on credit for the attempts its share would buy without the setup."""
    problem, target = load_problem_input("gemm-rmsnorm-copy-v75", None)
    inst = build_instance(problem, target)
    dag = build_dag(inst, "tile")
    setup = CHARGE_PER_OP * inst.n_ops
    list_schedule(inst, dag, TimeBudget.start(1000.0))
    first = attempts[0]
    attempts.clear()
    plain = plain_list_schedule(inst, dag)
    first_work = CHARGE_PER_TRY * first[0] + CHARGE_PER_SCAN * first[1]
    budget = TimeBudget.start(3 * setup + CHARGE_PER_TRY * plain.tries + first_work,
                              wall=1e6)
    list_schedule(inst, dag, budget)
    assert attempts[0] == first and len(attempts) >= 2
    share = 0.5 * setup  # the work left after the first pass, halved
    tries, scanned = attempts[1]
    assert tries > 0 and CHARGE_PER_TRY * tries + CHARGE_PER_SCAN * scanned < share / 4


def test_the_list_passes_take_at_most_their_share_of_the_budget(
        attempts: list[tuple[int, int]]) -> None:
    """The constructive stage hands the list scheduler ``list_share`` of its budget:
    with none, only the first pass runs (it always runs to its end); with all of it,
    more."""
    import dataclasses

    from schedsearch.engine.params import DEFAULT
    from schedsearch.engine.stages import Constructive, SearchState
    from tests.engine.test_search import context

    problem, target = load_problem_input("gemm-rmsnorm-copy-v75", None)
    passes = {}
    for share in (0.0, 1.0):
        attempts.clear()
        ctx = context(problem, target, params=dataclasses.replace(DEFAULT, list_share=share))
        budget = TimeBudget.start(5.0, wall=120)
        Constructive().run(ctx, SearchState(0), budget)
        passes[share] = len(attempts)
        assert budget.spent > 0  # what the passes did is charged to the solve
    assert passes[0.0] == 1 < passes[1.0]
