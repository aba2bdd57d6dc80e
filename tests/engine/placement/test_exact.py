import random
import time

import pytest

from schedsearch.engine.placement import PlacementBuffer, validate_placement
from schedsearch.engine.placement.exact import search
from schedsearch.engine.result import SolveStatus
from tests.engine.placement.helpers import guillotine
from tests.engine.placement.oracle import smallest_capacity


def run(buffers, capacity, seconds=10.0, seed=0, max_nodes=None):
    return search([b.lower for b in buffers], [b.upper for b in buffers],
                  [b.size for b in buffers], [b.align for b in buffers],
                  [-1 if b.offset is None else b.offset for b in buffers], capacity,
                  deadline=time.perf_counter() + seconds, seed=seed, max_nodes=max_nodes)


def test_tight_instances_with_twins_and_stacks_are_solved():
    # Identical buffers and same-lifetime stacks exercise the symmetry breaking.
    buffers = guillotine(seed=1, cuts=45) + [PlacementBuffer(f"t{i}", 64, 70, 16)
                                             for i in range(4)]
    outcome = run(buffers, 64)
    assert outcome.status == SolveStatus.FEASIBLE
    offsets = {buffers[i].id: x for i, x in outcome.offsets.items()}
    assert validate_placement(buffers, offsets, 64) == []


def test_infeasible_is_proved_not_timed_out():
    # Three aligned buffers live together need offsets 0, 2, 4: capacity 5, not 4.
    buffers = [PlacementBuffer(n, 0, 1, 1, align=2) for n in "abc"]
    assert run(buffers, 4).status == "INFEASIBLE"
    assert run(buffers, 5).status == SolveStatus.FEASIBLE


def test_an_expired_deadline_is_a_timeout():
    # This instance needs about 600 nodes; the clock is read every 256 nodes.
    buffers = guillotine(seed=5, cuts=120, capacity=256, horizon=256)
    assert run(buffers, 256).status == SolveStatus.FEASIBLE
    outcome = run(buffers, 256, seconds=-1.0)
    assert (outcome.status, outcome.offsets) == (SolveStatus.NO_SOLUTION_IN_TIME, {})


def test_a_node_budget_stops_at_the_same_node_every_time():
    # The instance of the test above needs about 600 nodes.
    buffers = guillotine(seed=5, cuts=120, capacity=256, horizon=256)
    full = run(buffers, 256)
    assert full.status == SolveStatus.FEASIBLE and full.nodes > 100
    capped = [run(buffers, 256, max_nodes=100) for _ in range(2)]
    assert [(o.status, o.offsets) for o in capped] == [(SolveStatus.NO_SOLUTION_FOUND, {})] * 2
    assert capped[0].nodes == capped[1].nodes <= 101
    assert run(buffers, 256, max_nodes=full.nodes).status == SolveStatus.FEASIBLE


@pytest.mark.parametrize("seed", [0, 3])
def test_parts_ranked_afresh_stay_exact(seed):
    # Staggered lifetimes split into independent parts as buffers are placed; every part
    # is ranked afresh (and, with a seed, ties broken by noise). The brute-force oracle
    # says which capacity fits, the search must agree both ways.
    rnd = random.Random(seed)
    for _ in range(25):
        buffers = []
        for i in range(rnd.randrange(4, 8)):
            lower = rnd.randrange(0, 10)
            buffers.append(PlacementBuffer(f"b{i}", lower, lower + rnd.randrange(1, 6),
                                           rnd.randrange(1, 7), rnd.choice([1, 1, 2])))
        smallest = smallest_capacity(buffers)
        found = run(buffers, smallest, seed=seed)
        assert found.status == SolveStatus.FEASIBLE, buffers
        offsets = {buffers[i].id: x for i, x in found.offsets.items()}
        assert validate_placement(buffers, offsets, smallest) == []
        assert run(buffers, smallest - 1, seed=seed).status == "INFEASIBLE", buffers


@pytest.mark.parametrize("seed", [2, 9])
def test_perfect_packings_over_a_long_horizon_are_found(seed):
    # A long horizon gives many narrow parts, each searched with its own ranks.
    buffers = guillotine(seed=seed, cuts=60, horizon=256)
    outcome = run(buffers, 64, seed=seed)
    assert outcome.status == SolveStatus.FEASIBLE
    offsets = {buffers[i].id: x for i, x in outcome.offsets.items()}
    assert validate_placement(buffers, offsets, 64) == []
