"""Separate kernels solved once per content: the kernel policies' fixed cost.

The ``sequential`` and ``chunked`` policies run each task of each request as a kernel of
its own: 126 kernels on a Qwen mix of one prefill and four decodes, each search paying
its lower bound and list-scheduling portfolio (about 0.35-0.9 s on a loaded machine)
however small its share of the limit. Most of them are the same problem under other
names: every decode of one family and past length is the same layer, a prefill's
chunks share their norm, projections and MLP, and a decode's projections do not depend
on its past. So a kernel is keyed by its content (:func:`kernel_key`: the problem's
document with its part's name prefix replaced, hashed), solved once per key, and the
schedule found is renamed for every other kernel of that key: the same content always
gets the same schedule.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from models.formats import Problem, Schedule, Target, problem_to_dict
from models.requests import MixProblem
from schedsearch.engine.slicing import restrict

__all__ = ["kernel_key", "kernel_problems", "renamed", "KernelCache"]

#: What the cache calls to solve a kernel it has not seen: ``(problem, target, weight) ->
#: schedule``, the weight being the kernel's ops (its part of the kernels' time).
KernelSearch = Callable[[Problem, Target, float], Schedule]


def _prefix(problem: Problem, prefixes: dict[str, str]) -> str:
    (task,) = problem.tasks
    return prefixes[task]


def kernel_key(kernel: Problem, prefix: str) -> str:
    """A hash of ``kernel``'s content with its names' part prefix (``prefix-``) taken
    out, and without its problem name: kernels with one key are the same problem up to
    that prefix. A name appears in the document as a whole string (a key or a value),
    so only strings that start with the prefix are rewritten."""
    text = json.dumps(problem_to_dict(replace(kernel, name="")), sort_keys=True)
    canonical = text.replace(f'"{prefix}-', '"\x00-')
    return hashlib.sha256(canonical.encode()).hexdigest()


def kernel_problems(mp: MixProblem) -> dict[str, Problem]:
    """Each task's separate kernel (:func:`restrict`), by task: the ops grouped by task
    in one pass, so each restriction reads its own ops only."""
    by_task: dict[str, dict] = {task: {} for task in mp.problem.tasks}
    for name, op in mp.problem.ops.items():
        by_task[op.task][name] = op
    return {task: restrict(replace(mp.problem, ops=ops), task)[0]
            for task, ops in by_task.items()}


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


@dataclass(slots=True)
class KernelCache:
    """The :data:`schedsearch.paths.Solver` the kernel policies call: each kernel's key
    from its part's prefix (``prefixes``: task -> prefix), the search run once per key
    (``solves`` counts them), every later kernel of the key given the first one's
    schedule renamed."""

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
        prefix = _prefix(kernel, self.prefixes)
        key = kernel_key(kernel, prefix)
        known = self.solved.get(key)
        if known is not None:
            return renamed(known[1], kernel, known[0], prefix)
        self.solves += 1
        schedule = self.search(kernel, target, float(len(kernel.ops)))
        self.solved[key] = (prefix, schedule)
        return schedule
