"""The plain CP-SAT RCPSP model beside PyJobShop in the PSPLIB benchmark."""

from __future__ import annotations

import checker
from benchmarks.peer_pyjobshop import peer_instance, peer_schedule
from benchmarks.psplib_bench import solve_plain_cpsat
from models.formats import Mode, Op, Problem, Target, Task


def test_the_plain_model_finds_the_optimum_and_a_legal_schedule() -> None:
    # Capacity 4; a draws 3, so b (2, or 1 at half speed) runs beside it only slowly;
    # c (2) must follow a. b slow over [0, 8), a over [0, 5), c over [5, 8): makespan 8,
    # and a then c alone already take 8, so 8 is the optimum.
    ops = {"a": Op("p", (Mode(5, {}, {"R": 3}),)),
           "b": Op("p", (Mode(4, {}, {"R": 2}), Mode(8, {}, {"R": 1}))),
           "c": Op("p", (Mode(3, {}, {"R": 2}),))}
    problem = Problem("p", {}, {"p": Task("rcpsp")}, {}, ops, (("a", "c"),))
    target = Target("t", lanes={}, budgets={"R": 4}, memories={})
    result = solve_plain_cpsat(peer_instance(problem, target), time_limit=5.0, workers=1,
                               seed=0)
    assert (result.makespan, result.status) == (8, "OPTIMAL")
    assert checker.verify(peer_schedule(problem, target, result)).legal
