"""Separate kernels solved once per content: the kernel policies' fixed cost.

The ``sequential`` and ``chunked`` policies run each task of each request as a kernel of
its own: 126 kernels on a Qwen mix of one prefill and four decodes, each search paying
its lower bound and list-scheduling portfolio (about 0.35-0.9 s on a loaded machine)
however small its share of the limit. Most of them are the same problem under other
names: every decode of one family and past length is the same layer, a prefill's
chunks share their norm, projections and MLP, and a decode's projections do not depend
on its past. So a kernel is keyed by its content (:func:`kernel_key`: the problem's
``repr`` with its part's name prefix replaced, hashed), solved once per key, and the
schedule found is renamed for every other kernel of that key: the same content always
gets the same schedule.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from models.formats import Buffer, Op, Problem, Schedule, Target, Tensor
from models.requests import MixProblem
from schedsearch.engine.slicing import restrict

__all__ = ["kernel_key", "kernel_problems", "renamed", "MixKernels", "KernelCache"]

#: What the cache calls to solve a kernel it has not seen: ``(problem, target, weight,
#: key) -> schedule``, the weight being the kernel's ops (its part of the kernels' time),
#: the key its content's (:func:`kernel_key`).
KernelSearch = Callable[[Problem, Target, float, str], Schedule]


def _prefix(problem: Problem, prefixes: dict[str, str]) -> str:
    (task,) = problem.tasks
    return prefixes[task]


def kernel_key(kernel: Problem, prefix: str) -> str:
    """A hash of ``kernel``'s content with its names' part prefix (``prefix-``) taken
    out, and without its problem name: kernels with one key are the same problem up to
    that prefix. The content is the problem's ``repr`` (its dataclasses field by field,
    three times faster than its JSON document, which a mix's 150 kernels paid 0.2 s
    for); a name appears in it as a whole quoted string, so only strings that start
    with the prefix are rewritten. Two kernels whose content differs only in the order
    of a mapping get two keys: a search more, never a wrong schedule (:func:`renamed`
    checks the names)."""
    text = repr(replace(kernel, name=""))
    canonical = text.replace(f"'{prefix}-", "'\x00-")
    return hashlib.sha256(canonical.encode()).hexdigest()


def kernel_problems(mp: MixProblem) -> dict[str, Problem]:
    """Each task's separate kernel, by task: :func:`restrict` of the whole problem, but
    on the task's part of it (its ops, the tensors and buffers they touch, the ``after``
    edges between them), gathered for every task in one pass over the problem: each
    restriction of the whole reads all of it (a 3,078-op mix has 70 tasks)."""
    problem = mp.problem
    ops: dict[str, dict[str, Op]] = {task: {} for task in problem.tasks}
    tensors_of: dict[str, set[str]] = {}
    buffers_of: dict[str, set[str]] = {}
    for name, op in problem.ops.items():
        ops[op.task][name] = op
        for access in (*op.reads, *op.writes):
            tensors_of.setdefault(access.tensor, set()).add(op.task)
            buffers_of.setdefault(access.buffer, set()).add(op.task)
    tensors: dict[str, dict[str, Tensor]] = {task: {} for task in problem.tasks}
    for name, tensor in problem.tensors.items():
        for task in tensors_of.get(name, ()):
            tensors[task][name] = tensor
    buffers: dict[str, dict[str, Buffer]] = {task: {} for task in problem.tasks}
    for name, buffer in problem.buffers.items():
        for task in buffers_of.get(name, ()):
            buffers[task][name] = buffer
    after: dict[str, list[tuple[str, str]]] = {task: [] for task in problem.tasks}
    for a, b in problem.after:
        task = problem.ops[a].task
        if problem.ops[b].task == task:
            after[task].append((a, b))
    return {task: restrict(replace(problem, ops=ops[task], tensors=tensors[task],
                                   buffers=buffers[task], after=tuple(after[task])),
                           task)[0]
            for task in problem.tasks}


def _identity_modes(kernel: Problem) -> dict[str, list[int]]:
    """The mode index map of a kernel that keeps every mode (:func:`restrict` without
    lanes)."""
    return {name: list(range(len(op.modes))) for name, op in kernel.ops.items()}


def renamed(schedule: Schedule, kernel: Problem, old: str, new: str) -> Schedule:
    """``schedule`` (of a kernel named with prefix ``old``) as a schedule of ``kernel``,
    the same problem with prefix ``new``: every op and buffer renamed."""
    def name(n: str) -> str:
        return new + n[len(old):] if n.startswith(f"{old}-") else n

    ops = {name(n): p for n, p in schedule.ops.items()}
    buffers = {name(n): b for n, b in schedule.buffers.items()}
    if ops.keys() != kernel.ops.keys() or buffers.keys() != kernel.buffers.keys():
        raise ValueError(f"kernel {kernel.name} is not {schedule.problem.name} renamed")
    return replace(schedule, problem=kernel, ops=ops, buffers=buffers)


@dataclass(frozen=True, slots=True)
class MixKernels:
    """One mix problem's separate kernels by task, each with its content key and its
    part's name prefix: computed once, for the weights of the kernels' searches and for
    both policies' runs."""

    kernels: dict[str, Problem]
    keys: dict[str, str]
    prefixes: dict[str, str]

    @staticmethod
    def of(mp: MixProblem, known: MixKernels | None = None) -> MixKernels:
        """``mp``'s kernels and keys. A kernel equal to ``known``'s kernel of the same
        task under the same prefix takes its key, the key being a function of those two:
        a mix's decodes are the same kernels in every chunking (56 of the bench mix's 84
        chunked kernels), and comparing two kernels costs a fifth of keying one."""
        kernels = kernel_problems(mp)
        prefixes = {task: mp.part_of[task].prefix for task in kernels}
        keys = {}
        for task, kernel in kernels.items():
            same = (known is not None and known.prefixes.get(task) == prefixes[task]
                    and known.kernels[task] == kernel)
            keys[task] = known.keys[task] if same else kernel_key(kernel, prefixes[task])
        return MixKernels(kernels, keys, prefixes)

    def restricted(self, task: str) -> tuple[Problem, dict[str, list[int]]]:
        """``task``'s kernel and mode map, as :func:`restrict` gives them
        (:data:`schedsearch.engine.sequence.Restricted`)."""
        kernel = self.kernels[task]
        return kernel, _identity_modes(kernel)

    def distinct_ops(self) -> dict[str, int]:
        """The ops of each distinct kernel, by key."""
        return {self.keys[task]: len(kernel.ops) for task, kernel in self.kernels.items()}


@dataclass(slots=True)
class KernelCache:
    """The kernel policies' solver: each kernel's content key (by the task, from its
    problem's :class:`MixKernels`), the search run once per key (``solves`` counts them),
    every later kernel of the key given the first one's schedule renamed."""

    search: KernelSearch
    prefixes: dict[str, str]
    solved: dict[str, tuple[str, Schedule]] = field(default_factory=dict)
    solves: int = 0

    @staticmethod
    def of(problems: Iterable[MixProblem], search: KernelSearch) -> KernelCache:
        prefixes = {task: part.prefix for mp in problems for task, part in mp.part_of.items()}
        return KernelCache(search, prefixes)

    def key(self, kernel: Problem) -> str:
        return kernel_key(kernel, _prefix(kernel, self.prefixes))

    def __call__(self, kernel: Problem, target: Target, **_options: object) -> Schedule:
        return self.solve(kernel, target, self.key(kernel))

    def solver(self, kernels: MixKernels) -> Callable[..., Schedule]:
        """The :data:`schedsearch.paths.Solver` of ``kernels``' problem: the key read from
        ``kernels``, not computed again."""
        def solve_kernel(kernel: Problem, target: Target, **_options: object) -> Schedule:
            (task,) = kernel.tasks
            return self.solve(kernel, target, kernels.keys[task])

        return solve_kernel

    def solve(self, kernel: Problem, target: Target, key: str) -> Schedule:
        """``kernel``'s schedule: searched if its ``key`` is new, else renamed."""
        prefix = _prefix(kernel, self.prefixes)
        known = self.solved.get(key)
        if known is not None:
            return renamed(known[1], kernel, known[0], prefix)
        self.solves += 1
        schedule = self.search(kernel, target, float(len(kernel.ops)), key)
        self.solved[key] = (prefix, schedule)
        return schedule
