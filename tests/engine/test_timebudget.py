"""The two clocks: work shares add up, and only the deadline marks a run as cut."""

from __future__ import annotations

import time

from schedsearch.engine.timebudget import TimeBudget


def test_work_running_out_is_not_a_cut() -> None:
    budget = TimeBudget.start(1.0, wall=60)
    budget.charge(1.0)
    assert budget.exhausted()
    assert not budget.cut


def test_a_passed_deadline_is_a_cut() -> None:
    budget = TimeBudget.start(100.0, wall=0.0)
    time.sleep(0.001)
    assert budget.exhausted()
    assert budget.cut


def test_a_share_gets_its_fraction_and_gives_back_what_it_spent() -> None:
    parent = TimeBudget.start(10.0, wall=60)
    parent.charge(2.0)
    child = parent.share(0.5)
    assert child.work == 4.0
    assert child.deadline <= parent.deadline
    child.charge(3.0)
    child.cut = True
    parent.absorb(child)
    assert parent.left == 5.0
    assert parent.cut
