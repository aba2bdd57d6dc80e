"""The plain list schedule (:mod:`schedsearch.engine.plain`) and the floor it puts under
the search: no answer of ``solve`` is longer than it, whatever the budget."""

from __future__ import annotations

import bisect
import heapq

import pytest
from hypothesis import given, settings

from benchmarks.bench_memory import tight_problem
from models.formats import Problem, Target, problem_from_dict, target_from_dict
from schedsearch.engine.hazards import Dag, build_dag
from schedsearch.engine.instance import Instance, build_instance
from schedsearch.engine.placement.greedy import lowest_fit
from schedsearch.engine.plain import plain_list_schedule
from schedsearch.engine.search import solve_report
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import feasible_problems, verify
from tests.fuzz._budget import examples


def _naive(inst: Instance, dag: Dag) -> Solution | None:
    """The plain list schedule as first written: every ready op tried at every event."""
    n = inst.n_ops
    missing = [len(p) for p in dag.preds]
    est = [0] * n
    ready = [v for v in range(n) if not missing[v]]
    lane_free = dict(inst.target.lanes)
    used = dict.fromkeys(inst.target.budgets, 0)
    blocks: dict[str, list[tuple[int, int]]] = {m: [] for m in inst.target.memories}
    offset, allocated = [0] * inst.n_buffers, [False] * inst.n_buffers
    unended = [len(ops) for ops in inst.buffer_ops]
    modes, starts, running = [0] * n, [0] * n, []
    now = done = 0
    while done < n:
        while running and running[0][0] <= now:
            end, op = heapq.heappop(running)
            mode = inst.modes[op][modes[op]]
            for lane, k in mode.lanes:
                lane_free[lane] += k
            for budget, k in mode.budgets:
                used[budget] -= k
            for b in inst.op_buffers[op]:
                unended[b] -= 1
                if not unended[b]:
                    blocks[inst.buffer_memory[b]].remove(
                        (offset[b], offset[b] + inst.buffer_size[b]))
            for s, lag in dag.succs[op]:
                est[s] = max(est[s], end + lag)
                missing[s] -= 1
                if not missing[s]:
                    bisect.insort(ready, s)
        for op in list(ready):
            k = next((k for k, m in enumerate(inst.modes[op])
                      if all(lane_free[lane] >= u for lane, u in m.lanes)
                      and all(used[b] + u <= inst.target.budgets[b] for b, u in m.budgets)),
                     None)
            if est[op] > now or k is None:
                continue
            placed = []
            for b in (b for b in inst.op_buffers[op] if not allocated[b]):
                memory = inst.buffer_memory[b]
                at = lowest_fit(blocks[memory], inst.buffer_size[b], inst.buffer_align[b],
                                inst.target.memories[memory].capacity_bytes)
                if at is None:
                    break
                bisect.insort(blocks[memory], (at, at + inst.buffer_size[b]))
                offset[b], allocated[b] = at, True
                placed.append(b)
            else:
                mode = inst.modes[op][k]
                for lane, u in mode.lanes:
                    lane_free[lane] -= u
                for budget, u in mode.budgets:
                    used[budget] += u
                modes[op], starts[op] = k, now
                ready.remove(op)
                heapq.heappush(running, (now + mode.duration, op))
                done += 1
                continue
            for b in placed:
                blocks[inst.buffer_memory[b]].remove((offset[b], offset[b] + inst.buffer_size[b]))
                allocated[b] = False
        upcoming = ([running[0][0]] if running else []) + [est[op] for op in ready
                                                           if est[op] > now]
        if not upcoming:
            return None
        now = min(upcoming)
    return Solution(tuple(modes), tuple(starts), tuple(offset))


@settings(max_examples=examples(1.0))
@given(feasible_problems())
def test_the_plain_list_schedule_is_the_naive_one_and_legal(
        case: tuple[Problem, Target]) -> None:
    """Passing over ops whose class already failed at an instant changes nothing."""
    problem, target = case
    inst = build_instance(problem, target)
    dag = build_dag(inst)
    found = plain_list_schedule(inst, dag).solution
    assert found == _naive(inst, dag)
    if found is not None:
        assert verify(to_schedule(inst, found, {})) == []


def test_an_op_moved_to_a_class_of_its_own_while_still_queued() -> None:
    # Regression (the long fuzzing profile): op1 allocates b0, which makes op0 and op2
    # (ready, in a shared class) ops of their own while an entry of op0's old class was
    # still queued: the two entries of one op compared their classes' keys, a tuple
    # with an int, and the list schedule raised TypeError.
    target = target_from_dict({
        "format": "npu-target/1", "name": "fuzz", "time_unit": "ns", "lanes": {"DMA": 1},
        "budgets": {"DDR_BW": 1, "PWR": 1},
        "memories": {"VTCM": {"capacity_bytes": 2, "alignment_bytes": 1}}, "costs": {}})
    problem = problem_from_dict({
        "format": "npu-problem/1", "name": "fuzz", "tensors": {},
        "tasks": {"t0": {"kind": "gemm"}},
        "buffers": {"b0": {"memory": "VTCM", "size": 2, "align": 1}},
        "ops": {"op0": {"task": "t0", "modes": [{"duration": 1}],
                        "writes": [{"buffer": "b0", "bytes": [0, 1], "value": "lo"}]},
                "op1": {"task": "t0", "modes": [{"duration": 1, "budgets": {"DDR_BW": 1}}],
                        "writes": [{"buffer": "b0", "bytes": [1, 2], "value": "hi"}]},
                "op2": {"task": "t0", "modes": [{"duration": 1}] * 3}},
        "after": []}, target=target)
    inst = build_instance(problem, target)
    dag = build_dag(inst)
    found = plain_list_schedule(inst, dag).solution
    assert found is not None and found == _naive(inst, dag)
    assert verify(to_schedule(inst, found, {})) == []


@pytest.mark.parametrize("name", ["pair", "pair-wide", "triple", "chain", "ascend"])
def test_the_plain_list_schedule_is_the_naive_one_on_the_tight_problems(name: str) -> None:
    problem, target = tight_problem(name, 150)
    inst = build_instance(problem, target)
    dag = build_dag(inst)
    assert plain_list_schedule(inst, dag).solution == _naive(inst, dag)


@pytest.mark.parametrize("limit", [1e-4, 0.05])
@pytest.mark.parametrize("name", ["pair", "triple", "ascend"])
def test_no_answer_is_longer_than_the_plain_list_schedule(
        name: str, limit: float, wall_never_binds: None) -> None:
    problem, target = tight_problem(name, 150)
    inst = build_instance(problem, target)
    plain = plain_list_schedule(inst, build_dag(inst)).solution
    assert plain is not None
    report = solve_report(problem, target, time_limit=limit, workers=1)
    assert report.schedule.makespan <= plain.makespan(inst)
    assert verify(report.schedule) == []


@settings(max_examples=examples(0.3))
@given(feasible_problems())
def test_no_answer_at_a_tiny_budget_is_longer_than_the_plain_list_schedule(
        case: tuple[Problem, Target]) -> None:
    problem, target = case
    inst = build_instance(problem, target)
    plain = plain_list_schedule(inst, build_dag(inst)).solution
    report = solve_report(problem, target, time_limit=1e-4, workers=1, wall_limit=1000.0)
    if plain is not None:
        assert report.schedule.makespan <= plain.makespan(inst)
