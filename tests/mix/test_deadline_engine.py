"""The per-group search (:mod:`schedsearch.engine.deadlines`) on a two-task toy problem
(tasks ``g`` and ``h``, independent) and on a small mix: the proof names a minimal set of
requests, the deadline pass serves urgent or heavy groups first, the window search
removes lateness and then holds the deadlines."""

from __future__ import annotations

import pytest
from ortools.sat.python import cp_model

from checker import verify
from models.formats import schedule_to_dict
from models.mix import Mix, Request
from models.requests import mix_problem
from models.targets import load_target
from schedsearch.engine.cpsat.model import build, whole_problem
from schedsearch.engine.cpsat.objective import (
    group_completions,
    hold_deadlines,
    minimise_lateness,
    minimise_weighted_completion,
)
from schedsearch.engine.cpsat.variables import Incumbent, Neighbourhood
from schedsearch.engine.deadlines import (
    DeadlinesMissed,
    Group,
    GroupView,
    Objectives,
    deadline_pass,
    improve,
    search_objectives,
    unmeetable,
)
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.orders import problem_order, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.result import SolveStatus
from schedsearch.engine.serial import SerialPass
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import target, two_task_problem

TOY = two_task_problem()
TOY_TARGET = target()


def _toy(deadlines: dict[str, int] | None = None, weights: dict[str, float] | None = None,
         objective: str = "makespan", soft: bool = False) -> Objectives:
    deadlines, weights = deadlines or {}, weights or {}
    return Objectives(tuple(Group(t, frozenset({t}), deadlines.get(t), weights.get(t, 1.0))
                            for t in ("g", "h")), objective, soft)


@pytest.fixture(scope="module")
def toy():
    inst = build_instance(TOY, TOY_TARGET)
    return inst, build_dag(inst)


def _done(inst, view: GroupView, solution: Solution) -> dict[str, int]:
    return dict(zip(view.names, view.completions(inst, solution), strict=True))


def test_the_deadline_pass_serves_the_urgent_or_the_heavy_group_first(toy) -> None:
    inst, dag = toy
    for first, objectives in (("h", _toy({"h": 10**6})), ("g", _toy({"g": 10**6})),
                              ("h", _toy(weights={"h": 10.0}, objective="weighted")),
                              ("g", _toy(weights={"g": 10.0}, objective="weighted"))):
        view = GroupView.of(inst, objectives)
        solution = deadline_pass(inst, dag, view)
        assert solution is not None
        done = _done(inst, view, solution)
        other = "g" if first == "h" else "h"
        assert done[first] < done[other], objectives


#: The whole-problem models' horizon, in makespans of their start.
HORIZON = 2


def _model_answer(inst, dag, view: GroupView, start: Solution, terms) -> tuple[list[int], int]:
    """Each group's completion and the makespan in the optimum of the whole-problem model
    (horizon :data:`HORIZON` times the start's; no time limit: each is proved in a few
    thousand conflicts) with ``terms(model, completions, makespan)`` added."""
    inc = Incumbent.of(inst, dag, start)
    plain = whole_problem(dag, inc)
    hood = Neighbourhood(plain.status, 0, HORIZON * inc.makespan, 0)
    built = build(inst, dag, inc, hood, 0, hood.t_end)
    done = group_completions(built.model, built.nodes, inc, hood, built.delta,
                             list(view.op_group), len(view.names))
    terms(built.model, done, built.makespan)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(built.model) == cp_model.OPTIMAL
    ends = [max(solver.value(built.nodes[v].end) for v in range(inst.n_ops)
                if view.op_group[v] == g) for g in range(len(view.names))]
    return ends, solver.value(built.makespan)


def test_the_model_terms_meet_the_deadline_or_weigh_the_completions() -> None:
    """On one DMA lane, ``h`` ending at its least completion costs the makespan ten
    ticks (both optima proved): lateness first, or the deadline held, pay them; the
    makespan alone does not."""
    inst = build_instance(TOY, target(dma=1))
    dag = build_dag(inst)
    view = GroupView.of(inst, _toy())
    start = deadline_pass(inst, dag, view)
    assert start is not None
    (_, least), _ = _model_answer(inst, dag, view, start,
                                  lambda model, done, makespan: model.minimize(done[1]))
    _, shortest = _model_answer(inst, dag, view, start, lambda *_: None)
    deadlines = [None, least]
    answers = [_model_answer(inst, dag, view, start, terms) for terms in (
        lambda model, done, makespan: minimise_lateness(
            model, done, deadlines, makespan, HORIZON * start.makespan(inst)),
        lambda model, done, makespan: hold_deadlines(model, done, deadlines))]
    assert answers[0] == answers[1]
    (_, h), makespan = answers[0]
    assert h <= least and makespan > shortest
    (_, h), _ = _model_answer(inst, dag, view, start,
                              lambda model, done, _: minimise_weighted_completion(
                                  model, done, [1.0, 10.0]))
    assert h == least


def test_the_window_search_removes_lateness_then_holds_the_deadline(toy,
                                                                    wall_never_binds) -> None:
    """``h`` by the time it ends when served first: the problem's own order (``g``
    first) is late, the search is not."""
    inst, dag = toy
    urgent = GroupView.of(inst, _toy({"h": 10**6}))
    deadline = _done(inst, urgent, deadline_pass(inst, dag, urgent))["h"]
    view = GroupView.of(inst, _toy({"h": deadline}))
    start = SerialPass(inst, dag, problem_order(dag), tails(inst, dag),
                       PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 16)).run()
    assert isinstance(start, Solution)
    assert view.score(inst, start)[0] > 0  # late from the start
    found, windows, accepted = improve(inst, dag, view, start, TimeBudget.start(0.3),
                                       seed=0, workers=2)
    assert windows >= 2 and accepted >= 1
    assert view.score(inst, found)[0] == 0
    assert _done(inst, view, found)["h"] <= deadline


def test_search_objectives_refuses_proved_deadlines_or_keeps_the_least_lateness(
        toy, wall_never_binds) -> None:
    inst, dag = toy
    assert unmeetable(inst, dag, GroupView.of(inst, _toy({"h": 5}))) == ("h",)
    with pytest.raises(DeadlinesMissed) as refused:
        search_objectives(TOY, TOY_TARGET, _toy({"h": 5}), time_limit=0.2)
    assert refused.value.proved and refused.value.requests == ("h",)
    assert refused.value.status is SolveStatus.INFEASIBLE
    answer = search_objectives(TOY, TOY_TARGET, _toy({"h": 5}, soft=True), time_limit=0.2)
    assert answer.lateness == answer.completions["h"] - 5 > 0
    assert verify(schedule_to_dict(answer.schedule)).legal


def test_the_proof_names_a_minimal_set_of_requests() -> None:
    """Each decode alone ends in about 560 us, both together need more than 800 us of
    DDR; 100 us is below one decode's own chain."""
    tv75 = load_target("hexagon-v75")
    qwen = "qwen2.5-0.5b"
    mix = Mix("m", tv75.name, (Request("p0", qwen, "prefill", 16, 0),
                               Request("d0", qwen, "decode", 1, 16),
                               Request("d1", qwen, "decode", 1, 16)))
    mp = mix_problem(mix, tv75)
    inst = build_instance(mp.problem, tv75)
    dag = build_dag(inst)

    def core(d0: int | None, d1: int | None) -> tuple[str, ...]:
        groups = tuple(Group(r.name, frozenset(t for t, p in mp.part_of.items()
                                               if p.request == r.name), d)
                       for r, d in zip(mix.requests, (None, d0, d1), strict=True))
        return unmeetable(inst, dag, GroupView.of(inst, Objectives(groups)))

    assert core(800_000, None) == ()
    assert core(800_000, 800_000) == ("d0", "d1")
    assert core(800_000, 100_000) == ("d1",)
    assert core(10**9, 10**9) == ()
