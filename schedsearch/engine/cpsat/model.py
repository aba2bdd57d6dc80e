"""Compose variables, constraints and an objective; hint, solve, and read the answer back.

Every model starts from an incumbent and is given a complete hint from it (every
variable, the shift at zero). The incumbent is legal, so CP-SAT begins from a feasible
point (without one, the NoOverlap2D of a memory that binds leaves it with no solution at
all for minutes), except in the constructive's last resort: there no legal schedule is
known, the problem is small
(:attr:`schedsearch.engine.params.SearchParams.whole_model_max_ops`) and any solution is the goal.

Reproducibility and workers: CP-SAT with several workers under a wall-clock limit is
not deterministic, and measured on these models (OR-Tools 9.15) neither is a run stopped
by ``max_deterministic_time``. What repeats: one sequential worker stopped by a cap on
the number of conflicts (a pure counter). Several workers under ``interleave_search``
repeat too but ran 5-8 times slower per conflict. So W workers are used as a portfolio:
W independent single-worker runs (different seeds; all but the first randomise their
search) in W Python threads, which run truly in parallel because ``CpSolver.solve``
releases the GIL; the best answer wins, the lowest member on ties. Each run stops on
``max_number_of_conflicts`` derived from the work granted (calibrated seconds), or at the
:class:`~schedsearch.engine.timebudget.TimeBudget`'s wall-clock deadline, which only a machine much
slower or busier than calibrated reaches; :class:`Outcome` then says the run was cut.
When the budget is not reproducible (it uses the whole time limit, see
:mod:`schedsearch.engine.timebudget`), nothing needs to repeat: one model then gets one run of
CP-SAT's own parallel search with W workers (its portfolio of strategies and LNS
workers), which on PSPLIB J60 ends closer to the best known than W single-worker runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ortools.sat.python import cp_model

from schedsearch.engine import interrupt
from schedsearch.engine.cpsat.constraints import add_memory, add_precedences, add_resources
from schedsearch.engine.cpsat.objective import makespan_var, minimise_makespan, minimise_peak_memory
from schedsearch.engine.cpsat.variables import (
    BufferVars,
    Incumbent,
    Neighbourhood,
    NodeVars,
    Status,
    new_buffers,
    new_delta,
    new_nodes,
)
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["Built", "Outcome", "build", "solve_built", "solve_each", "whole_problem",
           "portfolio_seeds", "conflict_cost", "SECONDS_PER_CONFLICT"]


#: Calibration: wall seconds one conflict costs a single CP-SAT worker on a model of
#: 1,000 constraints; the cost grows as ``constraints ** 1.5``. Measured on a shared
#: 2-core machine (load 2-6) for LNS windows of 30-120 ops and whole models of 130 ops
#: (500-2,400 constraints): 1.1e-8 to 3.6e-8 s x constraints ** 1.5, i.e. 3.5e-4 to
#: 1.1e-3 s here, and up to 2.7 times the low end with two runs side by side while
#: other jobs ran. Set near the middle of that range: on an idle machine the work budget
#: ends a run at about 40% of its limit (2e-3 ended it at about 12%, wasting the time the
#: user gave); on a heavily loaded one the deadline may end it first (then
#: ``meta.reproducible`` is false, and the limit still holds).
SECONDS_PER_CONFLICT = 7e-4
#: Small models do not get proportionally cheaper conflicts (a fixed cost per conflict
#: remains): the cost never falls below this share of the 1,000-constraint figure.
SMALL_MODEL_FLOOR = 0.2
#: Portfolio member ``i`` of seed ``s`` runs with CP-SAT seed ``PORTFOLIO_STRIDE * s + i``.
PORTFOLIO_STRIDE = 1000
#: CP-SAT's ``random_seed`` is a signed 32-bit integer: a run's seed is taken modulo this
#: (unchanged below it, so every seed that worked before gives the same schedule).
CPSAT_SEEDS = 2**31 - 1


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
    cut: bool  # the deadline stopped a run before its conflict cap: it may not repeat
    #: With ``keep``: the winning run's last solutions before ``solution``, oldest first
    #: (:data:`KEPT_SOLUTIONS` at most): fallbacks when ``solution`` cannot be placed.
    earlier: tuple[Solution, ...] = ()


def whole_problem(dag: Dag, inc: Incumbent) -> Neighbourhood:
    """Everything free, inside ``[0, incumbent makespan]``: the plain model."""
    return Neighbourhood(status=tuple([Status.FREE] * dag.n_nodes), t0=0,
                         t_end=inc.makespan, max_shift=0)


def build(inst: Instance, dag: Dag, inc: Incumbent, hood: Neighbourhood, lower: int,
          region_end: int, peak_memory_at: int | None = None,
          offsets: bool = True) -> Built:
    """The model of ``hood``; with ``peak_memory_at``, makespan is capped there and the
    objective is peak memory instead; without ``offsets``, memory is the relaxed
    cumulative only (see :mod:`.constraints`) and every offset is the incumbent's."""
    model = cp_model.CpModel()
    delta = new_delta(model, hood)
    nodes = new_nodes(model, inst, dag, inc, hood, delta)
    buffers = new_buffers(model, inst, inc, hood, nodes, delta, region_end, offsets)
    add_precedences(model, dag, nodes)
    add_resources(model, inst, nodes)
    add_memory(model, inst, buffers, offsets)
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
    hinted: set[int] = set()

    def hint(expr: cp_model.LinearExprT, value: int) -> None:
        # A zero-duration op's end is its start variable, and a barrier uses one variable
        # for both: CP-SAT refuses a hint that names a variable twice (MODEL_INVALID).
        if isinstance(expr, cp_model.IntVar) and expr.index not in hinted:
            hinted.add(expr.index)
            model.add_hint(expr, value)

    for v, node in enumerate(built.nodes):
        if node.status != Status.FREE:
            continue
        hint(node.start, inc.starts[v])
        hint(node.end, inc.ends[v])
        for k, present, _ in node.choices:
            if present is not None:
                hint(present, int(k == inc.solution.modes[v]))
    for b, buffer in built.buffers.items():
        alloc, free = inc.windows[b]
        if buffer.k is not None:
            hint(buffer.k, inc.solution.offsets[b] // built.inst.buffer_align[b])
        hint(buffer.alloc, alloc)
        hint(buffer.free, free)
        hint(buffer.length, free - alloc)
    hint(built.delta, 0)
    hint(built.makespan, inc.makespan)


#: How many solutions before its last one a run keeps when asked to (``keep``).
KEPT_SOLUTIONS = 8


def _extract(built: Built, solver: cp_model.CpSolver | cp_model.CpSolverSolutionCallback
             ) -> Solution:
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
    """Reports each objective found and, with ``built``, keeps the last solutions."""

    def __init__(self, report: Callable[[int], None] | None, built: Built | None = None
                 ) -> None:
        super().__init__()
        self.report, self.built = report, built
        self.kept: list[Solution] = []

    def on_solution_callback(self) -> None:
        if self.report is not None:
            self.report(round(self.objective_value))
        if self.built is not None:
            self.kept = [*self.kept[-KEPT_SOLUTIONS:], _extract(self.built, self)]


@dataclass(frozen=True, slots=True)
class _Run:
    """One single-worker CP-SAT run: what it found and how it stopped."""

    status: str
    solution: Solution | None
    objective: int | None
    bound: int | None
    conflicts: int
    cut: bool
    earlier: tuple[Solution, ...] = ()


def _run(built: Built, seed: int, conflicts: int, wall: float,
         on_objective: Callable[[int], None] | None, first: bool = False,
         solvers: interrupt.Solvers | None = None, threads: int = 1,
         keep: bool = False, linearization: int | None = None) -> _Run:
    """Solve ``built`` with one sequential worker (the reproducible configuration, see the
    module docstring; ``threads`` > 1 runs CP-SAT's own parallel search instead, which
    does not repeat), stopping after ``conflicts`` conflicts or ``wall`` seconds, or at
    the first solution with ``first``, or when ``solvers`` is stopped (SIGINT/SIGTERM:
    CP-SAT's own SIGINT catching stays off, see :mod:`schedsearch.engine.interrupt`).
    ``linearization`` is CP-SAT's ``linearization_level`` (its default if None)."""
    solver = cp_model.CpSolver()
    if solvers is not None:
        solvers.add(solver)
    params = solver.parameters
    params.catch_sigint_signal = False
    params.num_workers = threads
    params.random_seed = seed % CPSAT_SEEDS  # CP-SAT takes an int32; ours go to 2**63 - 1
    params.randomize_search = seed % PORTFOLIO_STRIDE != 0
    params.max_number_of_conflicts = conflicts
    params.max_time_in_seconds = max(wall, 0.001)
    params.stop_after_first_solution = first
    if linearization is not None:
        params.linearization_level = linearization
    watcher = _Watcher(on_objective, built if keep else None) \
        if on_objective or keep else None
    try:
        status = solver.solve(built.model, watcher)
    except (IndexError, RuntimeError):  # an OR-Tools internal error, e.g. absl::btree_map::at
        unhinted = built.model.clone()  # seen with hints on OR-Tools 9.15; same variables
        unhinted.clear_hints()
        try:
            status = solver.solve(unhinted, watcher)
        except (IndexError, RuntimeError):
            return _Run(status="SOLVER_ERROR", solution=None, objective=None, bound=None,
                        conflicts=0, cut=False)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    # Stopped for a reason that repeats: a proof, the first solution asked for, or the cap.
    settled = status in (cp_model.OPTIMAL, cp_model.INFEASIBLE) or (first and found)
    return _Run(
        status=solver.status_name(status),
        solution=_extract(built, solver) if found else None,
        objective=round(solver.objective_value) if found else None,
        bound=int(-(-solver.best_objective_bound // 1)) if found else None,
        conflicts=solver.num_conflicts,
        cut=not settled and solver.num_conflicts < conflicts,
        earlier=tuple(watcher.kept[:-1]) if found and watcher is not None else ())


def conflict_cost(built: Built) -> float:
    """Calibrated seconds one conflict of ``built`` costs (see :data:`SECONDS_PER_CONFLICT`);
    a function of the model alone, so budgets derived from it repeat."""
    size = len(built.model.proto.constraints) / 1000
    return SECONDS_PER_CONFLICT * max(SMALL_MODEL_FLOOR, size ** 1.5)


def _parallel(jobs: list[tuple[Built, int]], budget: TimeBudget, work: float,
              on_objective: Callable[[int], None] | None, first: bool = False,
              threads: int = 1, keep: bool = False,
              linearization: int | None = None) -> list[_Run]:
    """Run each ``(model, seed)`` in a thread of its own, side by side.

    ``CpSolver.solve`` releases the GIL (measured: a Python loop keeps running while a
    solve is in progress), so W runs use W cores. Each run is granted ``work`` calibrated
    seconds of conflicts and stops at the budget's deadline at the latest; the budget is
    charged the largest amount of work one run used, since they ran at the same time.
    """
    granted = min(work, budget.left)
    costs = [conflict_cost(built) for built, _ in jobs]
    caps = [max(1, round(granted / cost)) for cost in costs]
    wall = budget.wall_left()
    # Even one run goes to a thread: the main thread stays free to receive SIGINT/SIGTERM
    # and stop the runs (see schedsearch.engine.interrupt).
    solvers = interrupt.Solvers()
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [pool.submit(_run, built, seed, cap, wall, on_objective, first, solvers,
                               threads, keep, linearization)
                   for (built, seed), cap in zip(jobs, caps, strict=True)]
        runs = solvers.join(futures)
    budget.charge(max(min(run.conflicts, cap) * cost
                      for run, cap, cost in zip(runs, caps, costs, strict=True)))
    if any(run.cut for run in runs):
        budget.cut = True
    return runs


def portfolio_seeds(seed: int, workers: int) -> list[int]:
    """The CP-SAT seeds of a ``workers``-member portfolio: member 0 runs the plain search
    (seed ``PORTFOLIO_STRIDE * seed``), the others a randomised one."""
    return [PORTFOLIO_STRIDE * seed + i for i in range(workers)]


def solve_built(built: Built, budget: TimeBudget, *, work: float, seed: int, workers: int,
                on_objective: Callable[[int], None] | None = None,
                first: bool = False, keep: bool = False) -> Outcome:
    """A portfolio of ``workers`` single-worker runs of one model with different seeds,
    in parallel; the best objective wins, ties going to the lowest member, so the answer
    depends only on the model, ``seed``, ``workers`` and the work granted (unless the
    deadline cut a run: then ``Outcome.cut``). The budget is charged (see :func:`_parallel`).
    With ``first`` each run stops at its first solution (a model hinted with an illegal
    point, where any legal answer is the goal). The status is OPTIMAL or INFEASIBLE when
    any run proved it, else the winning run's. A budget that is not reproducible gets
    one run of CP-SAT's parallel search with ``workers`` workers instead. With ``keep``
    the outcome carries the winning run's earlier solutions too (``Outcome.earlier``)."""
    begin = time.perf_counter()
    cut_before = budget.cut
    if budget.reproducible or workers == 1:
        runs = _parallel([(built, s) for s in portfolio_seeds(seed, workers)], budget, work,
                         on_objective, first, keep=keep)
    else:  # the clock ends the run anyway: CP-SAT's own parallel search is stronger
        runs = _parallel([(built, portfolio_seeds(seed, 1)[0])], budget, work, on_objective,
                         first, threads=workers, keep=keep)
    best = _best(runs)
    bounds = [run.bound for run in runs if run.bound is not None]
    statuses = {run.status for run in runs}
    status = next((s for s in ("OPTIMAL", "INFEASIBLE") if s in statuses), best.status)
    return Outcome(status=status, solution=best.solution, objective=best.objective,
                   bound=max(bounds) if bounds else None,
                   wall_s=time.perf_counter() - begin,
                   cut=budget.cut and not cut_before, earlier=best.earlier)


def solve_each(builts: list[Built], budget: TimeBudget, *, work: float,
               seeds: list[int], on_objective: Callable[[int], None] | None = None,
               linearization: int | None = None) -> list[Outcome]:
    """Several models (LNS windows, say), one single-worker run each, in parallel;
    ``linearization`` is CP-SAT's ``linearization_level`` for each (its default if None)."""
    begin = time.perf_counter()
    runs = _parallel(list(zip(builts, seeds, strict=True)), budget, work, on_objective,
                     linearization=linearization)
    wall = time.perf_counter() - begin
    return [Outcome(status=run.status, solution=run.solution, objective=run.objective,
                    bound=run.bound, wall_s=wall, cut=run.cut) for run in runs]


def _best(runs: list[_Run]) -> _Run:
    """The run with the smallest objective; the lowest index among equals."""
    found = [run for run in runs if run.objective is not None]
    return min(found, key=lambda run: run.objective or 0) if found else runs[0]
