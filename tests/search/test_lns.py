"""Large-neighbourhood search: windows partition the nodes; steps keep legality."""

from __future__ import annotations

from schedsearch.budget import Budget
from schedsearch.constructive import construct
from schedsearch.cpsat.variables import Incumbent, Status
from schedsearch.hazards import build_dag
from schedsearch.instance import build_instance
from schedsearch.lns import improve, window
from schedsearch.solution import to_schedule
from tests.search.problems import gemm_problem, target, verify


def _setup():
    inst = build_instance(gemm_problem(blocks=6, k_steps=2, tile=1024),
                          target(capacity=6144))
    dag = build_dag(inst)
    return inst, dag, construct(inst, dag)


def test_window_frees_ranks_in_its_time_range_and_pins_what_came_before() -> None:
    inst, dag, solution = _setup()
    inc = Incumbent.of(inst, dag, solution)
    hood, region_end = window(inst, dag, inc, 10, 12)
    for v, status in enumerate(hood.status):
        if status == Status.FIXED:
            assert inc.starts[v] < hood.t0
        elif status == Status.FREE:
            assert hood.t0 <= inc.starts[v] and inc.ends[v] <= hood.t_end
        else:
            assert inc.starts[v] >= hood.t0
    assert hood.status.count(Status.FREE) >= 12
    assert region_end > hood.t_end


def test_improve_is_never_worse_legal_and_reproducible() -> None:
    inst, dag, solution = _setup()
    first = improve(inst, dag, solution, Budget.start(0.5, wall=60), seed=1, workers=2,
                    lower=0)
    again = improve(inst, dag, solution, Budget.start(0.5, wall=60), seed=1, workers=2,
                    lower=0)
    assert first.solution.makespan(inst) <= solution.makespan(inst)
    assert first.windows >= 1
    assert first.solution == again.solution
    assert verify(to_schedule(inst, first.solution, {})) == []
