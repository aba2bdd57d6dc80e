"""The configuration space of a workload: per task, the tunable parameters and their values.

Each operator module says which of its parameters are worth tuning and which values to
try (``candidates(params, cost_model)`` in :mod:`models.ops`); a task's *configuration*
is one value per tunable parameter, a workload's (*joint*) configuration one per task.
The task's own parameters are its *default* configuration; a default value that the
operator does not list (a user's ``bm = 96``, say) is kept as one more value to try, so
the default is always a point of the space.

Configurations are hashable tuples in a fixed order (tasks in workload order, parameters
in the operator's order), so they key the tuner's memo and compare deterministically.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from models.cost import CostModel
from models.ops import KINDS
from models.workload import Workload, WorkloadTask

__all__ = ["TaskSpace", "TaskConfig", "Configuration", "task_space", "default_configuration",
           "lean_configuration", "apply", "as_dict", "coordinates", "neighbours", "solo"]

#: One task's configuration: ``(parameter, value)`` pairs in the operator's order.
TaskConfig = tuple[tuple[str, Any], ...]
#: A workload's configuration: one :data:`TaskConfig` per task, in workload order.
Configuration = tuple[TaskConfig, ...]


@dataclass(frozen=True, slots=True)
class TaskSpace:
    """The values to try for each tunable parameter of one task (default included)."""

    task: str
    kind: str
    values: tuple[tuple[str, tuple[Any, ...]], ...]
    default: TaskConfig


def task_space(task: WorkloadTask, model: CostModel) -> TaskSpace:
    """The operator's candidate values for ``task``, with the task's own value added."""
    listed = KINDS[task.kind].candidates(task.params, model)
    values = []
    for key, options in listed.items():
        own = task.params[key]
        values.append((key, options if own in options else (*options, own)))
    default = tuple((key, task.params[key]) for key in listed)
    return TaskSpace(task.name, task.kind, tuple(values), default)


def default_configuration(spaces: tuple[TaskSpace, ...]) -> Configuration:
    return tuple(space.default for space in spaces)


def lean_configuration(spaces: tuple[TaskSpace, ...]) -> Configuration:
    """Every numeric parameter at its smallest value (the smallest blocks hold the least
    memory), the others at their default: the start when the default does not fit."""
    return tuple(tuple((key, min(values) if all(isinstance(v, int) for v in values)
                        else dict(space.default)[key])
                       for key, values in space.values)
                 for space in spaces)


def apply(workload: Workload, configuration: Configuration) -> Workload:
    """The workload with each task's tunable parameters set to ``configuration``."""
    tasks = tuple(replace(task, params={**task.params, **dict(config)})
                  for task, config in zip(workload.tasks, configuration, strict=True))
    return replace(workload, tasks=tasks)


def as_dict(spaces: tuple[TaskSpace, ...],
            configuration: Configuration) -> dict[str, dict[str, Any]]:
    """``{task: {parameter: value}}``, the shape the JSON output uses."""
    return {space.task: dict(config)
            for space, config in zip(spaces, configuration, strict=True)}


def coordinates(spaces: tuple[TaskSpace, ...]) -> list[tuple[int, str]]:
    """The axes of a coordinate descent: ``(task index, parameter)`` in a fixed order."""
    return [(i, key) for i, space in enumerate(spaces) for key, _ in space.values]


def neighbours(spaces: tuple[TaskSpace, ...], configuration: Configuration, task: int,
               key: str) -> list[Configuration]:
    """The configurations that differ from ``configuration`` in ``key`` of ``task`` only."""
    config = configuration[task]
    current = dict(config)[key]
    found = []
    for value in dict(spaces[task].values)[key]:
        if value != current:
            changed = tuple((k, value if k == key else v) for k, v in config)
            found.append((*configuration[:task], changed, *configuration[task + 1:]))
    return found


def solo(workload: Workload, index: int) -> Workload:
    """The workload holding only task ``index`` (what "this task alone" means)."""
    task = workload.tasks[index]
    return replace(workload, name=f"{workload.name}:{task.name}", tasks=(task,))
