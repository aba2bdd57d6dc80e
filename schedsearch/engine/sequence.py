"""The tasks one after another, each searched alone: the candidate ``solve`` must not lose to.

Why. A user compares an overlapped schedule with what runs today: one kernel per task,
one after another (``compare``'s ``separate`` path). The interleaved search explores a
much larger space, so within the same time it can end behind the kernels run in
sequence (on RMSNorm 77x4096 -> GEMM 77x700x4096 -> SiLU on v73 it ended 0.27% behind
separate kernels). Here each task is solved alone by the same search, on a share of the
time proportional to its ops, and the kernels are put end to end; ``solve`` takes the
result as a warm start when it keeps every derived edge, and compares it at the end.

:func:`in_sequence` is the one place kernels are run one after another: ``compare``'s
``separate`` path (:func:`schedsearch.paths.separate_kernels`) uses it too.

Legality. Each task's schedule is legal alone. End to end, nothing of two tasks overlaps
in time (each kernel starts when the previous one has ended every op and freed every
buffer), so lanes, budgets and memory hold; tasks run in dependency order
(:func:`schedsearch.engine.slicing.task_order`), so every ``after`` edge and DDR read-after-write
between tasks holds. Problems whose tasks share an on-chip buffer have no such
candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from models.errors import InputError
from models.formats import Problem, Schedule, Target
from schedsearch.engine import interrupt
from schedsearch.engine.instance import Instance
from schedsearch.engine.slicing import restrict, task_order
from schedsearch.engine.solution import Solution
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["Kernel", "KernelSolver", "Restricted", "in_sequence", "kernels_in_sequence",
           "TaskSolver"]

#: The least time a task alone gets (when that much is left), whatever its share of the
#: ops, and what each task still to come keeps back from the ones before it: on
#: RMSNorm -> GEMM -> SiLU on v73 (7, 428 and 6 ops), the GEMM ran 0.13 s past its share
#: of a 2 s stage in one run of three, the SiLU found the stage spent, and with no
#: tasks-in-sequence candidate the answer was 283,234 ns instead of 272,000. A task
#: solved sooner hands what it did not use to the next.
MIN_TASK_SECONDS = 0.2

#: ``(problem, target, seconds, wall, reproducible) -> schedule``: the search run on one
#: task, with ``seconds`` of work (or wall time, when not ``reproducible``) and ``wall``
#: seconds of wall time at most.
TaskSolver = Callable[[Problem, Target, float, float, bool], Schedule]
#: ``(kernel's problem, kernels still to come after it) -> schedule``, or None to give up.
KernelSolver = Callable[[Problem, int], Schedule | None]
#: ``task -> (its kernel's problem, each op's mode index map)``: what
#: :func:`~schedsearch.engine.slicing.restrict` gives for the task, computed beforehand.
Restricted = Callable[[str], tuple[Problem, dict[str, list[int]]]]


@dataclass(frozen=True, slots=True)
class Kernel:
    """One task solved as its own kernel: its schedule (of the task's problem), each op's
    mode index map back to the whole problem (:func:`~schedsearch.engine.slicing.restrict`)
    and when it starts."""

    task: str
    schedule: Schedule
    modes: dict[str, list[int]]
    start: int

    @property
    def span(self) -> int:
        """How long the kernel holds the engines: its last op end or buffer free."""
        frees = (b.free for b in self.schedule.buffers.values())
        return max(self.schedule.makespan, *frees, 0)


def in_sequence(problem: Problem, order: Sequence[str], solve_kernel: KernelSolver,
                restricted: Restricted | None = None) -> list[Kernel] | None:
    """The tasks of ``order`` (:func:`~schedsearch.engine.slicing.task_order`), each
    restricted to its own kernel and solved by ``solve_kernel``, one after another: each
    starts when the previous one has ended every op and freed every buffer. None when
    ``solve_kernel`` gave up on one. ``restricted`` gives each task's
    :func:`~schedsearch.engine.slicing.restrict` when the caller has it already (each
    restriction reads the whole problem)."""
    kernels: list[Kernel] = []
    now = 0
    for k, task in enumerate(order):
        sub, modes = restrict(problem, task) if restricted is None else restricted(task)
        schedule = solve_kernel(sub, len(order) - 1 - k)
        if schedule is None:
            return None
        kernels.append(Kernel(task, schedule, modes, now))
        now += kernels[-1].span
    return kernels


def kernels_in_sequence(inst: Instance, budget: TimeBudget, solve_task: TaskSolver
                        ) -> Solution | None:
    """Each task of ``inst`` solved alone by ``solve_task`` within ``budget`` (shared in
    proportion to the tasks' ops, at least :data:`MIN_TASK_SECONDS` each and that much
    kept back for each task still to come), end to end in dependency order
    (:func:`in_sequence`); None when there are fewer than two tasks, tasks share a
    buffer, the budget is spent, a stop was asked for, or a task alone got no schedule
    in its share."""
    problem = inst.problem
    if len(set(inst.op_task)) < 2:
        return None
    try:
        order = task_order(problem, inst.target)
    except InputError:
        return None
    if len(order) < 2:
        return None
    ops_left = sum(1 for op in problem.ops.values() if op.task in order)

    def solve_kernel(sub: Problem, after: int) -> Schedule | None:
        nonlocal ops_left
        if budget.exhausted() or interrupt.requested():
            return None
        share = len(sub.ops) / ops_left
        ops_left -= len(sub.ops)
        left = budget.left if budget.reproducible else budget.wall_left()
        kept = MIN_TASK_SECONDS * after  # for the tasks after this one
        seconds = min(left, max(min(left * share, left - kept), MIN_TASK_SECONDS))
        # reproducible: the task stops by its work, with what is left of this budget's
        # wall-clock net as its own (the nominal seconds as a deadline cut it on a
        # loaded machine, where the same work took longer)
        wall = budget.wall_left() if budget.reproducible else seconds
        try:
            schedule = solve_task(sub, inst.target, seconds, wall, budget.reproducible)
        except (InputError, interrupt.Interrupted):  # NoSchedule is an InputError
            return None  # an optional candidate: the caller keeps what it has
        budget.charge(seconds if budget.reproducible else 0.0)
        return schedule

    kernels = in_sequence(problem, order, solve_kernel)
    if kernels is None:
        return None
    modes = [0] * inst.n_ops
    starts = [0] * inst.n_ops
    offsets = [0] * inst.n_buffers
    for kernel in kernels:
        for name, placement in kernel.schedule.ops.items():
            i = inst.op_index[name]
            modes[i] = kernel.modes[name][placement.mode]
            starts[i] = kernel.start + placement.start
        for name, placement in kernel.schedule.buffers.items():
            offsets[inst.buffer_index[name]] = placement.offset
    return Solution(tuple(modes), tuple(starts), tuple(offsets))
