"""The list scheduler's work accounting: every pass is charged its setup (per op) beside
its start attempts, so that a portfolio on thousands of ops stays near the work it was
granted. Counted charges, not timings."""

from __future__ import annotations

import math

import pytest

from models.workload import load_problem_input
from schedsearch.engine import serial
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.modes import lean_split
from schedsearch.engine.plain import plain_list_schedule
from schedsearch.engine.portfolio import CHARGE_PER_OP, CHARGE_PER_TRY, list_schedule
from schedsearch.engine.split_bus import CHARGE_PER_OP as SPLIT_CHARGE_PER_OP
from schedsearch.engine.timebudget import TimeBudget


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The start attempts of each pass run, in order."""
    seen: list[int] = []
    run = serial.SerialPass.run

    def counted(self, *args, **kwargs):
        result = run(self, *args, **kwargs)
        seen.append(self.tries)
        return result

    monkeypatch.setattr(serial.SerialPass, "run", counted)
    return seen


def test_each_pass_and_the_plain_floor_are_charged_their_setup_and_attempts(
        attempts: list[int]) -> None:
    problem, target = load_problem_input("gemm-rmsnorm-copy-v75", None)
    inst = build_instance(problem, target)
    dag = build_dag(inst, "tile")
    budget = TimeBudget.start(1000.0)  # reproducible, more than every pass needs
    list_schedule(inst, dag, budget)
    plain = plain_list_schedule(inst, dag)
    setup = CHARGE_PER_OP * inst.n_ops
    split = SPLIT_CHARGE_PER_OP * inst.n_ops if lean_split(inst) is not None else 0.0
    assert len(attempts) > 1
    assert math.isclose(budget.spent, (len(attempts) + 1) * setup + split
                        + CHARGE_PER_TRY * (sum(attempts) + plain.tries))


def test_a_pass_whose_share_cannot_pay_its_setup_makes_no_attempt_beyond_the_first(
        attempts: list[int]) -> None:
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
    budget = TimeBudget.start(3 * setup + CHARGE_PER_TRY * (plain.tries + first), wall=1e6)
    list_schedule(inst, dag, budget)
    assert attempts[0] == first and len(attempts) >= 2
    share = 0.5 * setup  # the work left after the first pass, halved
    assert 0 < attempts[1] < share / CHARGE_PER_TRY / 4  # its first event's attempts only
