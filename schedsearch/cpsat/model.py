"""Compose variables, constraints and an objective; hint, solve, and read the answer back.

Every model starts from a legal incumbent and is given a complete hint from it (every
variable, the shift at zero), so CP-SAT begins from a feasible point: without one, the
NoOverlap2D of a memory that binds leaves it with no solution at all for minutes.

Reproducibility: CP-SAT with several workers under a wall-clock limit is not
deterministic, and measured on these models (OR-Tools 9.15) neither is a run stopped by
``max_deterministic_time``: the same model gave different solutions, even with one
worker. What did repeat: a cap on the number of conflicts (a pure counter) with one
worker in plain sequential search. Several workers under ``interleave_search`` repeated
too but ran 5-8 times slower per conflict, so the wall-clock safety net cut them at
machine-dependent points. So every solve runs one sequential worker, seeded with
``seed`` and the requested worker count (different counts explore differently, the same
count repeats), and stops on ``max_number_of_conflicts`` derived from the work granted
(in calibrated seconds). A wall-clock limit is set too, far beyond, only as a safety
net; :class:`Outcome` reports whether it was hit (then the run may not repeat exactly).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ortools.sat.python import cp_model

from schedsearch.cpsat.constraints import add_memory, add_precedences, add_resources
from schedsearch.cpsat.objective import makespan_var, minimise_makespan, minimise_peak_memory
from schedsearch.cpsat.variables import (
    BufferVars,
    Incumbent,
    Neighbourhood,
    NodeVars,
    Status,
    new_buffers,
    new_delta,
    new_nodes,
)
from schedsearch.hazards import Dag
from schedsearch.instance import Instance
from schedsearch.solution import Solution

__all__ = ["Built", "Outcome", "build", "solve_built", "whole_problem",
           "CONFLICTS_PER_SECOND"]

#: Calibration: conflicts CP-SAT works through per wall second on these models (measured
#: on a 2-core machine; 3000 conflicts took 1.3-1.9 s with one worker).
CONFLICTS_PER_SECOND = 2000
#: The wall-clock safety net is this many times the calibrated time, plus a second.
WALL_SAFETY_FACTOR = 4.0


@dataclass(slots=True)
class Built:
    model: cp_model.CpModel
    inst: Instance
    inc: Incumbent
    hood: Neighbourhood
    nodes: list[NodeVars]
    buffers: dict[int, BufferVars]
    delta: cp_model.IntVar | int
    makespan: cp_model.IntVar


@dataclass(frozen=True, slots=True)
class Outcome:
    status: str
    solution: Solution | None
    objective: int | None
    bound: int | None
    wall_s: float
    wall_limit_hit: bool


def whole_problem(dag: Dag, inc: Incumbent) -> Neighbourhood:
    """Everything free, inside ``[0, incumbent makespan]``: the plain model."""
    return Neighbourhood(status=tuple([Status.FREE] * dag.n_nodes), t0=0,
                         t_end=inc.makespan, max_shift=0)


def build(inst: Instance, dag: Dag, inc: Incumbent, hood: Neighbourhood, lower: int,
          region_end: int, peak_memory_at: int | None = None) -> Built:
    """The model of ``hood``; with ``peak_memory_at``, makespan is capped there and the
    objective is peak memory instead."""
    model = cp_model.CpModel()
    delta = new_delta(model, hood)
    nodes = new_nodes(model, inst, dag, inc, hood, delta)
    buffers = new_buffers(model, inst, inc, hood, nodes, delta, region_end)
    add_precedences(model, dag, nodes)
    add_resources(model, inst, nodes, hood)
    add_memory(model, inst, buffers)
    makespan = makespan_var(model, nodes, inc, hood, delta, lower)
    if peak_memory_at is None:
        minimise_makespan(model, makespan, delta, hood)
    else:
        model.add(makespan <= peak_memory_at)
        minimise_peak_memory(model, inst, buffers)
    built = Built(model, inst, inc, hood, nodes, buffers, delta, makespan)
    _hint(built)
    return built


def _hint(built: Built) -> None:
    model, inc = built.model, built.inc

    def hint(expr: cp_model.LinearExprT, value: int) -> None:
        if isinstance(expr, cp_model.IntVar):
            model.add_hint(expr, value)

    for v, node in enumerate(built.nodes):
        if node.status != Status.FREE:
            continue
        hint(node.start, inc.starts[v])
        hint(node.end, inc.ends[v])
        for k, present, _ in node.choices:
            if present is not None:
                model.add_hint(present, k == inc.solution.modes[v])
    for b, buffer in built.buffers.items():
        alloc, free = inc.windows[b]
        if buffer.k is not None:
            model.add_hint(buffer.k, inc.solution.offsets[b] // built.inst.buffer_align[b])
        hint(buffer.alloc, alloc)
        hint(buffer.free, free)
        model.add_hint(buffer.length, free - alloc)
    hint(built.delta, 0)
    model.add_hint(built.makespan, inc.makespan)


def _extract(built: Built, solver: cp_model.CpSolver) -> Solution:
    inst, inc = built.inst, built.inc
    delta = solver.value(built.delta) if isinstance(built.delta, cp_model.IntVar) else 0
    modes = list(inc.solution.modes)
    starts = list(inc.solution.starts)
    for v in range(inst.n_ops):
        node = built.nodes[v]
        if node.status == Status.FREE:
            starts[v] = solver.value(node.start)
            modes[v] = next(k for k, present, _ in node.choices
                            if present is None or solver.boolean_value(present))
        elif node.status in (Status.SHIFTED, Status.ABSENT):
            starts[v] -= delta
    offsets = list(inc.solution.offsets)
    for b, buffer in built.buffers.items():
        if buffer.k is not None:
            offsets[b] = solver.value(buffer.k) * inst.buffer_align[b]
    return Solution(tuple(modes), tuple(starts), tuple(offsets))


class _Watcher(cp_model.CpSolverSolutionCallback):
    def __init__(self, report: Callable[[int], None]) -> None:
        super().__init__()
        self.report = report

    def on_solution_callback(self) -> None:
        self.report(round(self.objective_value))


def solve_built(built: Built, *, work: float, seed: int, workers: int,
                on_objective: Callable[[int], None] | None = None) -> Outcome:
    """Solve with reproducible parameters (see the module docstring); ``work`` is in
    calibrated seconds."""
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.num_workers = 1
    params.random_seed = seed + 1000 * (workers - 1)
    params.max_number_of_conflicts = max(1, round(work * CONFLICTS_PER_SECOND))
    wall_limit = WALL_SAFETY_FACTOR * work + 1.0
    params.max_time_in_seconds = wall_limit
    begin = time.perf_counter()
    watcher = _Watcher(on_objective) if on_objective else None
    status = solver.solve(built.model, watcher)
    wall = time.perf_counter() - begin
    name = solver.status_name(status)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    return Outcome(
        status=name, solution=_extract(built, solver) if found else None,
        objective=round(solver.objective_value) if found else None,
        bound=int(-(-solver.best_objective_bound // 1)) if found else None,
        wall_s=wall,
        wall_limit_hit=wall >= wall_limit * 0.99)
