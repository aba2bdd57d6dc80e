"""Per-group objectives: when each group of tasks (a request of a serving mix) completes,
deadlines on those completions, and weighted completion time.

A group's completion is the largest end of its ops. Three parts, each usable alone:

- :func:`unmeetable`: a proof, before any search, that some deadlines cannot all be met.
  A small CP-SAT model over the groups alone: ``C_g`` at least the longest chain of
  precedences ending in the group (each op at its shortest mode, predecessors of other
  groups included); on every lane kind and budget, the work of every group that completes
  no later than ``g`` (each op at its cheapest mode there) fits in ``capacity * C_g``. It
  relaxes the schedule, so an infeasible model proves the deadlines infeasible. Each
  deadline ``C_g <= D_g`` is enforced by an assumption literal of its own, and CP-SAT's
  ``sufficient_assumptions_for_infeasibility`` names the requests; the core is then made
  minimal by dropping each member in turn (each solve takes milliseconds).
- :func:`deadline_pass`: the list scheduler (:class:`~.serial.SerialPass`, ready ops
  tried in sequence order within a window) on a sequence that takes the groups by latest
  start (``D_g`` minus the group's longest chain: earliest deadline first, by the
  remaining chain), groups without a deadline after those with one (with ``weighted``,
  by their work over their weight: Smith's rule), each group's ops in problem order. By
  op instead (``D_g - tail(op)``) every request's loads came first and filled VTCM: every
  pass stalled on a prefill with two decodes. A legal schedule, the search's start when
  it meets deadlines another start misses.
- :func:`improve`: large-neighbourhood search over time windows with :mod:`.lns`'s
  accept loop (:func:`.lns.search_windows`: the same windows and work budget) whose
  models carry the group completions (:mod:`.cpsat.objective`): while the incumbent is
  late, a window minimises the total lateness, then the makespan; once it is on time,
  every window holds the deadlines as hard constraints and minimises the makespan, or
  ``sum w_g C_g``. A step is accepted when it improves :meth:`GroupView.score`,
  (lateness, objective, makespan, sum of starts), so a schedule meeting its deadlines
  never loses one.

:func:`search_objectives` runs the three from the caller's starting schedules. The whole
CP-SAT model (problems of at most a few hundred ops) is not used: serving mixes have
thousands (a decoder layer of Qwen2.5-0.5B at 16 tokens is 530 ops).

Buffers: a buffer lives from the first start to the last end of the ops that access it
(:func:`.solution.buffer_windows`), so a group's buffers are all released by the time it
completes; groups that share no buffer (the requests of a mix) need nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from models.errors import InputError
from models.formats import Problem, Schedule, Target
from schedsearch.engine.hazards import Dag, build_dag
from schedsearch.engine.instance import Instance, Resource, build_instance
from schedsearch.engine.orders import keyed_order, tails
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.result import NoSchedule, SolveStatus
from schedsearch.engine.serial import SerialPass
from schedsearch.engine.solution import Solution, to_schedule
from schedsearch.engine.timebudget import TimeBudget

if TYPE_CHECKING:  # CP-SAT is imported where it is used: it imports pandas (0.2 s that
    # the mix pays at any limit for the names of this module, searched or not)
    from ortools.sat.python import cp_model

    from schedsearch.engine.cpsat.model import Built
    from schedsearch.engine.cpsat.variables import Incumbent, Neighbourhood

__all__ = ["OBJECTIVES", "Group", "Objectives", "GroupView", "DeadlinesMissed",
           "ObjectiveAnswer", "unmeetable", "unmeetable_groups", "deadline_pass", "improve",
           "search_objectives", "PROOF_SECONDS", "PASS_WINDOWS", "PROVED"]

OBJECTIVES = ("makespan", "weighted")
#: Wall seconds one solve of the group model may take (it has a few variables per pair of
#: groups; a mix of 17 requests is settled in milliseconds).
PROOF_SECONDS = 2.0
#: Why proved deadlines cannot be met (the message of :class:`DeadlinesMissed`).
PROVED = "their chains and their work on the engines exceed them"
#: The windows of the deadline passes (:func:`deadline_pass`). On the Qwen2.5-0.5B mix of
#: ``benchmarks/bench_mix.py`` (4,174 ops): 16 gives 4,660,595 ns in 2.4 s, 64 gives
#: 4,490,048 in 2.6 s; 256 and 1,024 stall on VTCM after 4.1 and 12.4 s.
PASS_WINDOWS = (16, 64)


@dataclass(frozen=True, slots=True)
class Group:
    """One group of tasks (a request): its name, its tasks, an optional deadline (device
    ticks from 0) and a weight for weighted completion time."""

    name: str
    tasks: frozenset[str]
    deadline: int | None = None
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Objectives:
    """The groups, the objective after the deadlines (``makespan`` or ``weighted``:
    ``sum weight * completion``), and whether deadlines are soft (least total lateness)
    rather than hard."""

    groups: tuple[Group, ...]
    objective: str = "makespan"
    soft_deadlines: bool = False

    @property
    def active(self) -> bool:
        """Whether anything differs from a plain makespan search."""
        return self.objective != "makespan" or any(g.deadline is not None
                                                   for g in self.groups)


class DeadlinesMissed(NoSchedule):
    """Hard deadlines that were not met: ``proved`` (INFEASIBLE) when no schedule can meet
    them all, else none was found (NO_SOLUTION_FOUND). ``requests`` names them."""

    def __init__(self, requests: Sequence[str], proved: bool, detail: str,
                 source: str = "<problem>") -> None:
        names = ", ".join(requests)
        message = (f"the deadlines of {names} cannot all be met ({detail})"
                   if proved else
                   f"no schedule found that meets the deadlines of {names} ({detail})")
        super().__init__(SolveStatus.INFEASIBLE if proved else SolveStatus.NO_SOLUTION_FOUND,
                         InputError(message, source=source, rule="DEADLINE"))
        self.requests = tuple(requests)
        self.proved = proved


@dataclass(frozen=True, slots=True)
class GroupView:
    """The groups on one instance: each op's group (-1: none), deadlines, weights."""

    names: tuple[str, ...]
    op_group: tuple[int, ...]
    deadlines: tuple[int | None, ...]
    weights: tuple[float, ...]
    objective: str

    @staticmethod
    def of(inst: Instance, objectives: Objectives) -> GroupView:
        if objectives.objective not in OBJECTIVES:
            raise ValueError(f"objective is one of {', '.join(OBJECTIVES)}")
        of_task = {task: g for g, group in enumerate(objectives.groups) for task in group.tasks}
        groups = objectives.groups
        return GroupView(tuple(g.name for g in groups),
                         tuple(of_task.get(task, -1) for task in inst.op_task),
                         tuple(g.deadline for g in groups), tuple(g.weight for g in groups),
                         objectives.objective)

    def completions(self, inst: Instance, solution: Solution) -> list[int]:
        """Each group's completion (0 for a group without ops)."""
        done = [0] * len(self.names)
        for v, end in enumerate(solution.ends(inst)):
            g = self.op_group[v]
            if g >= 0:
                done[g] = max(done[g], end)
        return done

    def score(self, inst: Instance, solution: Solution) -> tuple[int, float, int, int]:
        """(total lateness, objective, makespan, sum of starts): smaller is better."""
        done = self.completions(inst, solution)
        late = sum(max(0, c - d) for c, d in zip(done, self.deadlines, strict=True)
                   if d is not None)
        makespan = solution.makespan(inst)
        objective = (makespan if self.objective == "makespan" else
                     sum(w * c for w, c in zip(self.weights, done, strict=True)))
        return late, objective, makespan, sum(solution.starts)


# ------------------------------------------------------------------------------ proof
def _chains(inst: Instance, dag: Dag) -> list[int]:
    """Per node, the earliest end of its longest chain of predecessors (shortest modes)."""
    head = [0] * dag.n_nodes
    end = [0] * dag.n_nodes
    for v in dag.topo:
        end[v] = head[v] + (inst.min_duration(v) if v < dag.n_ops else 0)
        for s, lag in dag.succs[v]:
            head[s] = max(head[s], end[v] + lag)
    return end


def _work(inst: Instance, view: GroupView) -> tuple[list[dict[Resource, int]],
                                                     dict[Resource, int]]:
    """Per group, its least work on each lane kind and budget; and their capacities."""
    work: list[dict[Resource, int]] = [{} for _ in view.names]
    for v, g in enumerate(view.op_group):
        if g < 0:
            continue
        for key, cost in inst.least_work(v).items():
            work[g][key] = work[g].get(key, 0) + cost
    return work, inst.capacities()


def _infeasible(model: cp_model.CpModel, literals: Sequence[cp_model.IntVar]
                ) -> list[int] | None:
    """The indices of a sufficient set of ``literals`` for infeasibility, or None."""
    from ortools.sat.python import cp_model

    model.clear_assumptions()
    model.add_assumptions(literals)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = PROOF_SECONDS
    solver.parameters.catch_sigint_signal = False
    if solver.solve(model) != cp_model.INFEASIBLE:
        return None
    core = set(solver.sufficient_assumptions_for_infeasibility())
    return [i for i, lit in enumerate(literals) if lit.index in core]


def unmeetable(inst: Instance, dag: Dag, view: GroupView) -> tuple[str, ...]:
    """Requests whose deadlines provably cannot all be met (module docstring), a minimal
    such set in group order; empty when the relaxation proves nothing."""
    if all(d is None for d in view.deadlines):
        return ()
    chain = _chains(inst, dag)
    work, capacity = _work(inst, view)
    n = len(view.names)
    least = [0] * n
    for v, g in enumerate(view.op_group):
        if g >= 0:
            least[g] = max(least[g], chain[v])
    horizon = max([*least, *(d for d in view.deadlines if d is not None)]) + sum(
        inst.min_duration(v) for v in range(inst.n_ops)) + 1
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    done = [model.new_int_var(least[g], horizon, f"C{g}") for g in range(n)]
    before = {(h, g): model.new_bool_var(f"b{h}_{g}")
              for g in range(n) for h in range(n) if h != g}
    for (h, g), b in before.items():  # b false only if h completes after g
        model.add(done[h] >= done[g] + 1).only_enforce_if(~b)
    for key, cap in capacity.items():
        if not cap:
            continue
        for g in range(n):
            load = work[g].get(key, 0) + sum(work[h].get(key, 0) * before[h, g]
                                             for h in range(n) if h != g)
            model.add(load <= cap * done[g])
    literals, groups = [], []
    for g, deadline in enumerate(view.deadlines):
        if deadline is not None:
            lit = model.new_bool_var(f"deadline{g}")
            model.add(done[g] <= deadline).only_enforce_if(lit)
            literals.append(lit)
            groups.append(g)
    core = _infeasible(model, literals)
    if core is None:
        return ()
    for i in list(core):  # drop each member the others prove infeasible without
        rest = [j for j in core if j != i]
        if rest and _infeasible(model, [literals[j] for j in rest]) is not None:
            core = rest
    return tuple(view.names[groups[i]] for i in sorted(core))


def unmeetable_groups(problem: Problem, target: Target, objectives: Objectives
                      ) -> tuple[str, ...]:
    """:func:`unmeetable` of ``problem``'s groups: for a caller with a problem only."""
    inst = build_instance(problem, target)
    return unmeetable(inst, build_dag(inst), GroupView.of(inst, objectives))


# ------------------------------------------------------------------------- list pass
def deadline_pass(inst: Instance, dag: Dag, view: GroupView,
                  budget: TimeBudget | None = None) -> Solution | None:
    """The best (:meth:`GroupView.score`) of the list scheduler's passes on the sequence
    by latest start (module docstring), or None if every pass stalls; each pass runs to
    its end and is charged to ``budget`` as the portfolio's are (by start attempts). Once a
    pass has a schedule, ``budget``'s wall-clock deadline, if past, ends the passes (not
    its work: the passes are few, and a reproducible run always runs them all)."""
    chain = _chains(inst, dag)
    n = len(view.names)
    longest, length = [0] * n, [0] * n
    for v, g in enumerate(view.op_group):
        if g >= 0:
            longest[g] = max(longest[g], chain[v])
            length[g] += inst.min_duration(v)
    rank: list[tuple[float, float]] = []
    for g in range(n):
        deadline = view.deadlines[g]
        if deadline is not None:
            rank.append((float(deadline - longest[g]), float(g)))
        elif view.objective == "weighted":
            rank.append((float("inf"), length[g] / view.weights[g]))
        else:
            rank.append((float("inf"), float(g)))
    last = (float("inf"), float("inf"))
    keys = [(float("-inf"), 0.0, v) if v >= dag.n_ops else
            (*(rank[view.op_group[v]] if view.op_group[v] >= 0 else last), v)
            for v in range(dag.n_nodes)]
    order = keyed_order(dag, keys)
    tail = tails(inst, dag)
    best: Solution | None = None
    for width in PASS_WINDOWS:
        if best is not None and budget is not None and budget.wall_left() <= 0:
            budget.cut = True  # the wall limit is past: keep the best pass so far
            break
        run = SerialPass(inst, dag, order, tail,
                         PassSpec(ModePolicy.ALL, OpOrder.DEADLINE, width, in_sequence=True))
        result = run.run()
        if budget is not None:
            budget.charge(run.work)
        if isinstance(result, Solution) and (
                best is None or view.score(inst, result) < view.score(inst, best)):
            best = result
    return best


# ------------------------------------------------------------------------------ LNS
def _window_model(inst: Instance, dag: Dag, view: GroupView, inc: Incumbent,
                  hood: Neighbourhood, region_end: int, late: bool, placement: bool) -> Built:
    from schedsearch.engine.cpsat.model import build
    from schedsearch.engine.cpsat.objective import (
        group_completions,
        hold_deadlines,
        minimise_lateness,
        minimise_weighted_completion,
    )

    built = build(inst, dag, inc, hood, 0, region_end, offsets=not placement)
    done = group_completions(built.model, built.nodes, inc, hood, built.delta,
                             list(view.op_group), len(view.names))
    if late:
        minimise_lateness(built.model, done, list(view.deadlines), built.makespan,
                          max(inc.makespan, hood.t_end))
    else:
        hold_deadlines(built.model, done, list(view.deadlines))
        if view.objective == "weighted":
            minimise_weighted_completion(built.model, done, list(view.weights))
    return built


def improve(inst: Instance, dag: Dag, view: GroupView, solution: Solution,
            budget: TimeBudget, *, seed: int, workers: int, placement: bool = True
            ) -> tuple[Solution, int, int]:
    """Improve ``solution`` by window re-solves (module docstring; the accept loop is
    :func:`.lns.search_windows`) until ``budget`` is spent; the answer, the windows
    solved and the steps accepted."""
    from schedsearch.engine.lns import search_windows

    def model(inc: Incumbent, hood: Neighbourhood, region_end: int,
              best: tuple[int, float, int, int]) -> Built:
        return _window_model(inst, dag, view, inc, hood, region_end, best[0] > 0, placement)

    found = search_windows(inst, dag, solution, budget, seed=seed, workers=workers,
                           score=lambda candidate: view.score(inst, candidate), model=model,
                           placement=placement)
    return found.solution, found.windows, found.accepted


# ----------------------------------------------------------------------------- solve
@dataclass(frozen=True, slots=True)
class ObjectiveAnswer:
    """The schedule, each group's completion (device ticks), the total lateness, and a
    note (which start won, windows solved and accepted)."""

    schedule: Schedule
    completions: dict[str, int]
    lateness: int
    note: str


def _solution(inst: Instance, dag: Dag, schedule: Schedule) -> Solution | None:
    """``schedule`` (of the same problem) as a solution, if it keeps every edge of
    ``dag`` (a schedule found on another precedence graph may order writers otherwise)."""
    if schedule.problem is not inst.problem and schedule.problem != inst.problem:
        return None
    ops = schedule.ops
    solution = Solution(tuple(ops[n].mode for n in inst.op_names),
                        tuple(ops[n].start for n in inst.op_names),
                        tuple(schedule.buffers[n].offset for n in inst.buffer_names))
    ends = solution.ends(inst)
    if all(solution.starts[s] >= ends[p] + lag for p, s, lag in dag.edges
           if p < dag.n_ops and s < dag.n_ops):
        return solution
    return None


def search_objectives(problem: Problem, target: Target, objectives: Objectives, *,
                      starts: Mapping[str, Schedule] | None = None,
                      time_limit: float = 10.0,
                      seed: int = 0, workers: int = 2, reproducible: bool = True,
                      wall_limit: float | None = None) -> ObjectiveAnswer:
    """The schedule of ``problem`` best by (lateness, objective, makespan) found from
    ``starts`` (legal schedules of it, by name) and the deadline passes, improved by :func:`improve`
    within ``time_limit``. Raises :class:`DeadlinesMissed` (proved) when hard deadlines
    cannot all be met (:func:`unmeetable`); hard deadlines the answer still misses are the
    caller's to refuse (the answer's ``lateness``). ``wall_limit`` is the hard wall-clock
    limit, as in :func:`schedsearch.engine.search.solve_report`: by default ``time_limit``
    when the search uses the time, a far safety net when ``reproducible`` (the work budget
    ends it); a search cut by it says so (``meta.reproducible`` false)."""
    budget = TimeBudget.start(time_limit, wall=wall_limit, reproducible=reproducible)
    inst = build_instance(problem, target)
    dag = build_dag(inst)
    view = GroupView.of(inst, objectives)
    core = unmeetable(inst, dag, view)
    if core and not objectives.soft_deadlines:
        raise DeadlinesMissed(core, True, PROVED)
    found = [(label, _solution(inst, dag, s)) for label, s in (starts or {}).items()]
    found.append(("deadline pass", deadline_pass(inst, dag, view, budget)))
    labelled = [(view.score(inst, s), i, label, s)
                for i, (label, s) in enumerate(found) if s is not None]
    if not labelled:
        raise DeadlinesMissed(view.names, False, "no start and every deadline pass stalled")
    _, _, label, solution = min(labelled)
    solution, windows, accepted = improve(inst, dag, view, solution, budget, seed=seed,
                                          workers=workers)
    late, *_ = view.score(inst, solution)
    meta = {"solver": "deadlines", "status": "FEASIBLE", "start": label, "lns_windows": windows,
            "lns_accepted": accepted, "reproducible": not budget.cut, "seed": seed,
            "workers": workers}
    done = view.completions(inst, solution)
    return ObjectiveAnswer(to_schedule(inst, solution, meta),
                           dict(zip(view.names, done, strict=True)), late,
                           f"from the {label}, {accepted} of {windows} windows accepted")
