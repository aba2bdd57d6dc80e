"""Search where memory binds: the problem-order and holders-first passes, the tasks in
sequence (each searched alone) as a floor, and the budget that uses the whole time limit."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings

from benchmarks.bench_memory import tight_problem
from models.formats import Problem, Schedule, Target
from schedsearch.engine.bounds.lower import energy_relaxation
from schedsearch.engine.hazards import Dag, build_dag
from schedsearch.engine.instance import Instance, build_instance
from schedsearch.engine.orders import (
    hungriest_first_order,
    interleaved_order,
    large_buffers,
    problem_order,
    tails,
)
from schedsearch.engine.params import DEFAULT
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import PORTFOLIO, _Sequences, list_schedule, priced_modes
from schedsearch.engine.result import SolveStatus
from schedsearch.engine.search import solve_report
from schedsearch.engine.sequence import kernels_in_sequence
from schedsearch.engine.serial import SerialPass, Stall
from schedsearch.engine.slicing import restrict, task_order
from schedsearch.engine.solution import Solution, to_schedule
from schedsearch.engine.stages import Lns, SearchState, TasksInSequence, WholeModel, run_stages
from schedsearch.engine.timebudget import UNMETERED_WORK, TimeBudget
from schedsearch.engine.whole_model import relaxes_memory
from tests.engine.problems import feasible_problems, gemm_problem, target, two_task_problem, verify
from tests.engine.test_search import context
from tests.fuzz._budget import examples


def test_problem_order_keeps_the_op_order_where_the_edges_allow() -> None:
    inst = build_instance(gemm_problem(blocks=2, k_steps=2), target())
    dag = build_dag(inst)
    order = problem_order(dag)
    assert sorted(order) == list(range(inst.n_ops))
    position = {op: k for k, op in enumerate(order)}
    assert all(position[p] < position[s] for p, s, _ in dag.edges)
    # gemm_like emits each block's loads before its compute, and blocks in turn: the
    # problem's own order is already topological, so it is kept as it is.
    assert order == list(range(inst.n_ops))


@settings(max_examples=examples(0.4))
@given(feasible_problems())
def test_every_pass_of_the_portfolio_is_legal_on_a_tight_memory(
        case: tuple[Problem, Target]) -> None:
    problem, tgt = case
    inst = build_instance(problem, tgt)
    for granularity in ("tile", "task"):
        dag = build_dag(inst, granularity)
        sequences = _Sequences(inst, dag)
        for spec in PORTFOLIO:
            if not sequences.applies(spec):
                continue
            result = _run_spec(inst, dag, sequences, spec)
            if isinstance(result, Solution):
                assert verify(to_schedule(inst, result, {})) == [], (granularity, spec)


def _run_spec(inst: Instance, dag: Dag, sequences: _Sequences,
              spec: PassSpec) -> Solution | Stall | None:
    return sequences.make_pass(spec).run()


def _tight(name: str, ops: int | None = None) -> tuple[Instance, Dag, _Sequences]:
    """Tight-memory benchmark problem ``name`` (scaled to about ``ops``), ready for passes."""
    problem, tgt = tight_problem(name, ops)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    return inst, dag, _Sequences(inst, dag)


def test_a_window_per_task_lets_the_other_task_start_while_the_hungry_one_waits() -> None:
    """Tight wide pair as written, the norm's ops first in the sequence: one window over
    the whole sequence keeps the GEMM out until the norm's head is near its ops (its first
    op starts at 12.8 us with a window of 16); a window per task starts it at once, beside
    the norm, and the schedule is shorter."""
    inst, dag, sequences = _tight("pair-wide")
    runs = {}
    for per_task in (False, True):
        result = _run_spec(inst, dag, sequences, PassSpec(
            ModePolicy.LARGE_FAST, OpOrder.HUNGRY, 16, in_sequence=True, split=True,
            task_windows=per_task))
        assert isinstance(result, Solution)
        assert verify(to_schedule(inst, result, {})) == []
        runs[per_task] = result
    first_gemm = {per_task: min(run.starts[op] for op in range(inst.n_ops)
                                if inst.op_task[op] == "g0") for per_task, run in runs.items()}
    assert first_gemm[True] == 0 < first_gemm[False]
    assert runs[True].makespan(inst) < runs[False].makespan(inst)


def test_the_hungry_head_unguarded_lets_the_other_task_fill_the_norms_transfers() -> None:
    """Tight wide pair at 609 ops: guard (1) kept room for the norm's next op whenever it
    headed the sequence, so while one 64 KiB norm transfer ran (the next could not start
    beside it: the bus was full) the GEMM stayed under the 60 KiB left. Without that
    reservation the GEMM loads into the free half, and the schedule is shorter; the
    passes differ only in that flag."""
    inst, dag, sequences = _tight("pair-wide", 600)
    makespans = {}
    for unguarded in (False, True):
        result = _run_spec(inst, dag, sequences, PassSpec(
            ModePolicy.LARGE_FAST, OpOrder.HUNGRY, 128, in_sequence=True, split=True,
            task_windows=True, hungry_unguarded=unguarded))
        assert isinstance(result, Solution)
        assert verify(to_schedule(inst, result, {})) == []
        makespans[unguarded] = result.makespan(inst)
    assert makespans[True] < makespans[False]


def test_passes_that_need_large_buffers_run_only_where_some_buffer_is_large() -> None:
    """The pass that leads where buffers are large uses the ``all`` policy, which every
    problem has: it is skipped on the tight pair (no buffer a quarter of VTCM), so what
    runs there is unchanged, and runs on the wide pair."""
    runs = {}
    for name in ("pair", "pair-wide"):
        problem, tgt = tight_problem(name)
        inst = build_instance(problem, tgt)
        sequences = _Sequences(inst, build_dag(inst))
        runs[name] = [spec for spec in PORTFOLIO if spec.large_only and
                      sequences.applies(spec)]
    assert not runs["pair"] and runs["pair-wide"]


class _Forgetful(set):  # type: ignore[type-arg]
    """A set that keeps nothing: a pass with it as its rejection caches tries every op."""

    def add(self, item: object) -> None:
        pass


def test_rejecting_what_failed_earlier_at_the_same_instant_changes_no_schedule() -> None:
    """Within one instant resources only shrink as ops start, so a pass may reject an op
    whose lane draws or allocations already failed there: every portfolio pass gives the
    same schedule as when it tries every op, with fewer attempts."""
    inst, dag, sequences = _tight("pair-wide", 150)
    fewer = 0
    for spec in PORTFOLIO:
        if not sequences.applies(spec):
            continue
        cached, plain = sequences.make_pass(spec), sequences.make_pass(spec)
        plain.no_mode, plain.no_room = _Forgetful(), _Forgetful()
        assert cached.run() == plain.run(), spec
        assert cached.tries <= plain.tries
        fewer += cached.tries < plain.tries
    assert fewer


def test_interleaved_order_advances_every_task_at_the_same_pace() -> None:
    """Two independent tasks, one with twice the other's work: task by task, the second
    has not started when half the work is done; interleaved, each has done about half of
    its own, and each keeps its own order."""
    inst = build_instance(two_task_problem(), target(capacity=4096))
    dag = build_dag(inst)
    order = interleaved_order(inst, dag)
    position = {op: k for k, op in enumerate(order)}
    assert sorted(order) == list(range(inst.n_ops))
    assert all(position[p] < position[s] for p, s, _ in dag.edges)
    tasks = sorted(set(inst.op_task))
    for task in tasks:
        own = [op for op in order if inst.op_task[op] == task]
        assert own == sorted(own)
    work = {t: sum(inst.min_duration(i) for i in range(inst.n_ops) if inst.op_task[i] == t)
            for t in tasks}
    done = dict.fromkeys(tasks, 0)
    for op in order:
        if sum(done.values()) * 2 >= sum(work.values()):
            break
        done[inst.op_task[op]] += inst.min_duration(op)
    assert all(0.3 <= done[t] / work[t] <= 0.7 for t in tasks), (done, work)


def test_a_pass_is_not_stalled_by_its_guard_when_fragmentation_blocks_the_head() -> None:
    """On the tight GEMM + RMSNorm of 2,048 columns this pass used to stall: the head
    (a norm) needed 64 KiB that were free in bytes but not in one piece, and guard (1)
    held back the GEMM loads that would have let the GEMM finish and free its tiles."""
    problem, tgt = tight_problem("pair-wide", 150)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    priced = priced_modes(inst, energy_relaxation(problem, tgt))
    result = SerialPass(inst, dag, interleaved_order(inst, dag), tails(inst, dag, priced),
                        PassSpec(ModePolicy.PRICED, OpOrder.INTERLEAVED, 64, in_sequence=True),
                        priced).run()
    assert isinstance(result, Solution), result
    assert verify(to_schedule(inst, result, {})) == []


def test_a_window_does_not_stall_a_pass_whose_head_waits_for_ops_beyond_it() -> None:
    """Interleaved, window 16: the head (a norm) waits for 64 KiB in one piece, and the
    GEMM loads that would let the GEMM finish lie beyond the window: the unblock step
    starts the first ready op beyond it that fits (this pass used to stall)."""
    problem, tgt = tight_problem("pair-wide", 150)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    result = SerialPass(inst, dag, interleaved_order(inst, dag), tails(inst, dag),
                        PassSpec(ModePolicy.ALL, OpOrder.INTERLEAVED, 16)).run()
    assert isinstance(result, Solution), result
    assert verify(to_schedule(inst, result, {})) == []


def test_hungriest_first_order_puts_the_task_with_the_largest_buffer_first() -> None:
    """The GEMM comes first in the problem; the RMSNorm's 64 KiB blocks are the largest
    buffers, so its ops lead, each task in its own order, and the order is topological."""
    problem, tgt = tight_problem("pair-wide")
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    order = hungriest_first_order(inst, dag)
    assert inst.op_task[0] == "g0"
    assert sorted(order) == list(range(inst.n_ops))
    position = {op: k for k, op in enumerate(order)}
    assert all(position[p] < position[s] for p, s, _ in dag.edges if s < inst.n_ops)
    norm_ops = [op for op in range(inst.n_ops) if inst.op_task[op] == "r0"]
    assert order[:len(norm_ops)] == norm_ops


def test_split_placement_puts_large_buffers_at_the_top_and_small_ones_at_the_bottom() -> None:
    problem, tgt = tight_problem("pair-wide")
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    large = large_buffers(inst)
    capacity = tgt.memories["VTCM"].capacity_bytes
    assert any(large) and not all(large)
    runs = {split: SerialPass(inst, dag, problem_order(dag), tails(inst, dag),
                              PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 16, split=split)).run()
            for split in (False, True)}
    for result in runs.values():
        assert isinstance(result, Solution)
        assert verify(to_schedule(inst, result, {})) == []
    split = runs[True]
    assert isinstance(split, Solution)
    first_large = min((b for b in range(inst.n_buffers) if large[b]),
                      key=lambda b: min(split.starts[op] for op in inst.buffer_ops[b]))
    assert split.offsets[first_large] + inst.buffer_size[first_large] == capacity
    first_small = min((b for b in range(inst.n_buffers) if not large[b]),
                      key=lambda b: min(split.starts[op] for op in inst.buffer_ops[b]))
    assert split.offsets[first_small] == 0
    assert runs[False].offsets != split.offsets


def test_the_hungry_task_first_beats_the_problems_order_where_its_blocks_fill_memory() -> None:
    """Tight GEMM + RMSNorm of 2,048 columns: the norm's chain is the long pole, so
    issuing it first (and the GEMM in its gaps) is shorter than task by task."""
    inst, dag, sequences = _tight("pair-wide", 150)
    makespans = []
    fast, hungry = ModePolicy.LARGE_FAST, OpOrder.HUNGRY
    for spec in (PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 16),
                 PassSpec(fast, OpOrder.INTERLEAVED, 64, in_sequence=True, split=True,
                          hungry_first=True),
                 PassSpec(fast, hungry, 1024, in_sequence=True, split=True),
                 PassSpec(fast, hungry, 128, in_sequence=True, split=True, task_windows=True)):
        result = _run_spec(inst, dag, sequences, spec)
        assert isinstance(result, Solution), spec
        assert verify(to_schedule(inst, result, {})) == []
        makespans.append(result.makespan(inst))
    assert all(makespan < makespans[0] for makespan in makespans[1:])
    fast = sequences.policies[ModePolicy.LARGE_FAST]
    for op in range(inst.n_ops):
        modes = inst.modes[op]
        if any(large_buffers(inst)[b] for b in inst.op_buffers[op]):
            assert all(modes[k].duration == inst.min_duration(op) for k in fast[op])
        else:
            assert fast[op] == list(range(len(modes)))


def test_holders_first_starts_what_needs_no_new_memory_before_a_load() -> None:
    """One DMA queue: at time 10 the compute of block 0 (its operands loaded) and the
    loads of block 1 are both eligible; holders-first starts the compute at once."""
    problem = gemm_problem(blocks=2, k_steps=1, tile=64)
    tgt = target(capacity=1 << 16, dma=1)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    order = problem_order(dag)
    tail = tails(inst, dag)
    result = SerialPass(inst, dag, order, tail,
                        PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 64, holders_first=True)).run()
    assert isinstance(result, Solution)
    assert verify(to_schedule(inst, result, {})) == []
    mm0 = inst.op_index["g.mm0.0"]
    loads0 = [inst.op_index[n] for n in ("g.ldA0.0", "g.ldB0.0")]
    ends = result.ends(inst)
    assert result.starts[mm0] == max(ends[op] for op in loads0)


def _kernel_span(schedule: Schedule) -> int:
    return max(schedule.makespan, *(b.free for b in schedule.buffers.values()), 0)


@settings(max_examples=examples(0.2))
@given(feasible_problems())
def test_the_tasks_one_after_another_are_legal_and_apart_in_dependency_order(
        case: tuple[Problem, Target]) -> None:
    problem, tgt = case
    assume(len(problem.tasks) > 1)
    inst = build_instance(problem, tgt)

    def solve_task(sub: Problem, t: Target, seconds: float, wall: float,
                   reproducible: bool) -> Schedule:
        return solve_report(sub, t, time_limit=seconds, workers=1).schedule

    found = kernels_in_sequence(inst, TimeBudget.start(2.0), solve_task)
    assert found is not None
    schedule = to_schedule(inst, found, {})
    assert verify(schedule) == []
    spans = []
    for task in task_order(problem, tgt):
        ops = [p for name, p in schedule.ops.items() if problem.ops[name].task == task]
        spans.append((min(p.start for p in ops), max(p.end for p in ops)))
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:], strict=False))


@settings(max_examples=examples(0.2), deadline=None)
@given(feasible_problems())
def test_solve_is_never_worse_than_its_tasks_one_after_another_each_at_its_optimum(
        case: tuple[Problem, Target]) -> None:
    problem, tgt = case
    assume(len(problem.tasks) > 1)
    serial = 0
    for task in task_order(problem, tgt):
        alone = solve_report(restrict(problem, task)[0], tgt, time_limit=1.0, workers=1)
        assume(alone.status is SolveStatus.OPTIMAL)
        serial += _kernel_span(alone.schedule)
    report = solve_report(problem, tgt, time_limit=2.0, workers=1)
    assert verify(report.schedule) == []
    assert report.schedule.makespan <= serial


def test_two_tasks_solved_legally_when_the_whole_time_is_used() -> None:
    report = solve_report(two_task_problem(), target(capacity=4096), time_limit=1.0,
                          workers=1, reproducible=False)
    assert verify(report.schedule) == []
    assert report.schedule.makespan >= report.bound


def test_a_budget_that_uses_its_time_is_stopped_only_by_the_clock() -> None:
    budget = TimeBudget.start(1.0, wall=60.0, reproducible=False)
    assert budget.left == UNMETERED_WORK
    budget.charge(100.0)  # far more work than the seconds given
    assert not budget.exhausted() and not budget.cut
    assert TimeBudget.start(1.0).left == 1.0


def test_a_step_is_capped_in_wall_time_only_when_the_budget_uses_its_time() -> None:
    timed = TimeBudget.start(1.0, wall=60.0, reproducible=False)
    step = timed.within(2.0)
    assert step.wall_left() <= 2.0 and not step.reproducible
    metered = TimeBudget.start(1.0, wall=60.0)
    assert metered.within(2.0).wall_left() > 2.0  # a wall cap would break repetition


def test_large_buffers_get_the_exact_whole_model() -> None:
    """Large buffers: the whole model decides the addresses itself (a relaxed answer
    there often has none); without large buffers the relaxed model runs and the
    placement engine gives the addresses. The whole-model stage's answer is legal either
    way."""
    problem = gemm_problem(blocks=2, k_steps=2, tile=1024)
    for tgt, relaxed in ((target(capacity=4096), False), (target(capacity=1 << 20), True)):
        ctx = context(problem, tgt, workers=1)
        assert any(large_buffers(ctx.inst)) != relaxed
        assert relaxes_memory(ctx.inst, True) == relaxed
        start = list_schedule(ctx.inst, ctx.dag)
        assert isinstance(start, Solution)
        state = SearchState(0, start, "constructive")
        run_stages((WholeModel(),), ctx, state, TimeBudget.start(1.0))
        assert state.cpsat_status is not None
        assert verify(to_schedule(ctx.inst, state.incumbent, {})) == []


def test_no_pass_starts_an_op_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unblock starts ops that stay in the eligible list until the next filtering;
    the holders-first loop must skip them (it once started one again, moving its start
    and freeing its buffers early)."""
    inst, dag, sequences = _tight("pair-wide", 150)
    commits: list[int] = []
    real = SerialPass._commit

    def commit(self: SerialPass, op: int, *args: Any) -> None:
        commits.append(op)
        real(self, op, *args)

    monkeypatch.setattr(SerialPass, "_commit", commit)
    for spec in PORTFOLIO:
        if not sequences.applies(spec):
            continue
        commits.clear()
        sequences.make_pass(spec).run()
        assert len(commits) == len(set(commits)), spec


def test_the_tasks_in_sequence_are_searched_only_where_they_could_win() -> None:
    """The sum of each task's own lower bound bounds the tasks one after another: on the
    tight wide pair it exceeds the list schedule's makespan, so the stage does not spend
    a quarter of the solve's time searching that candidate (no task is searched alone);
    against a makespan above that sum it does."""
    from schedsearch.engine.bounds.lower import lower_bound
    from schedsearch.engine.stages.constructive import serial_could_win

    problem, tgt = tight_problem("pair-wide")
    searched: list[int] = []

    def solve_task(sub: Problem, sub_target: Target, seconds: float, wall: float,
                   reproducible: bool) -> Schedule:
        searched.append(len(sub.ops))
        return solve_report(sub, sub_target, time_limit=seconds, workers=1,
                            reproducible=reproducible, wall_limit=wall).schedule

    ctx = context(problem, tgt, workers=1, solve_task=solve_task)
    inst = ctx.inst
    alone = sum(lower_bound(restrict(problem, task)[0], tgt).value
                for task in dict.fromkeys(inst.op_task))
    listed = list_schedule(inst, ctx.dag)
    assert isinstance(listed, Solution) and alone > listed.makespan(inst)
    check = DEFAULT.serial_check_max_ops
    assert not serial_could_win(inst, listed.makespan(inst), check)
    assert serial_could_win(inst, alone + 1, check)
    TasksInSequence().run(ctx, SearchState(0, listed, "constructive"), TimeBudget.start(2.0))
    assert not searched
    late = Solution(listed.modes, tuple(s + alone for s in listed.starts), listed.offsets)
    TasksInSequence().run(ctx, SearchState(0, late, "constructive"), TimeBudget.start(2.0))
    assert len(searched) == len(set(inst.op_task))


def test_the_work_bound_of_a_task_is_below_its_schedule_alone() -> None:
    """Each task's lane and budget work over capacity bounds any schedule of it alone:
    on the tight triple, every task's list schedule alone is no shorter, and the bound is
    the largest such work (the GEMM's on its DMA lanes or DDR budget, not zero)."""
    from schedsearch.engine.portfolio import list_schedule
    from schedsearch.engine.stages.constructive import work_bound

    problem, tgt = tight_problem("triple")
    inst = build_instance(problem, tgt)
    for task in dict.fromkeys(inst.op_task):
        sub = build_instance(restrict(problem, task)[0], tgt)
        alone = list_schedule(sub, build_dag(sub))
        assert isinstance(alone, Solution)
        assert 0 < work_bound(inst, task) <= alone.makespan(sub)


def test_lns_runs_from_the_list_schedule_the_tasks_in_sequence_displaced(
        wall_never_binds: None) -> None:
    """Where the tasks one after another beat the list schedule they become the
    incumbent, but LNS from tasks end to end hardly interleaves them: LNS runs from the
    displaced list schedule on the whole budget, and its answer is taken only where it is
    at most as long as the incumbent. Work alone stops the run (``wall_never_binds``), so
    the stage's answer is exactly that."""
    from schedsearch.engine.lns import improve

    ctx = context(two_task_problem(), target(capacity=4096), workers=1)
    inst, dag = ctx.inst, ctx.dag
    listed = list_schedule(inst, dag)
    assert isinstance(listed, Solution)
    # One op at a time in depth-first order: a legal start LNS can shorten.
    displaced = _Sequences(inst, dag).make_pass(
        PassSpec(ModePolicy.ALL, OpOrder.DEPTH, 0, guarded=False)).run()
    assert isinstance(displaced, Solution)
    state = SearchState(0, listed, "tasks-in-sequence", displaced=displaced)
    found = Lns().run(ctx, state, TimeBudget.start(1.0))

    run = improve(inst, dag, displaced, TimeBudget.start(1.0), seed=0, workers=1, lower=0)
    assert run.solution.makespan(inst) < displaced.makespan(inst)  # searched from there
    assert state.lns_windows == run.windows
    answer = listed if found is None else found.solution
    assert answer.makespan(inst) == min(run.solution.makespan(inst), listed.makespan(inst))
    assert found is None or found.solution == run.solution
    assert verify(to_schedule(inst, answer, {})) == []


def test_the_smallest_task_alone_can_rule_the_tasks_in_sequence_out() -> None:
    """Above the ops the check may bound in all, the smallest tasks still get their own
    bound: the tight wide pair's RMSNorm alone (which knows its memory) with the GEMM's
    work exceeds the list schedule, where the two tasks' work alone does not."""
    from schedsearch.engine.stages.constructive import serial_could_win

    problem, tgt = tight_problem("pair-wide")
    ctx = context(problem, tgt, workers=1)
    inst = ctx.inst
    listed = list_schedule(inst, ctx.dag)
    assert isinstance(listed, Solution)
    norm = min(inst.op_task.count(task) for task in set(inst.op_task))
    assert norm < inst.n_ops
    assert serial_could_win(inst, listed.makespan(inst), 0)
    assert serial_could_win(inst, listed.makespan(inst), norm - 1)
    assert not serial_could_win(inst, listed.makespan(inst), norm)
