"""The model against a measured run: per op, the makespan, and the measured critical path.

A measured run (:class:`~schedsearch.calibrate.measurements.MeasuredRun`) is shifted so
that its first op starts at 0, like the schedule. Each op's modelled duration is its
chosen mode's duration; its measured one is its measured window.

The measured critical path is the schedule's critical path walked over the measured
windows (:func:`schedsearch.chains.critical.critical_path`, the one rule for planned and
measured time): from the op with the latest measured end, step to the predecessor that
ended last at or before the op's measured start, until an op has none. An op's
predecessors are the ops before it in the queue of each unit it holds (by measured
start), its ``after`` edges, and the writer of each buffer value it reads. The
makespan difference splits exactly along that chain: ``measured makespan = sum of the
chain's measured durations + the gaps between them`` (time the chain waited), so
``path_excess`` (the chain's measured minus modelled durations) and ``path_gaps`` say how
much of the difference the ops on the path explain and how much waiting does.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from typing import Any

from models.formats import Schedule
from schedsearch.calibrate.measurements import MeasuredRun
from schedsearch.chains.critical import critical_path
from schedsearch.trace import op_mode

__all__ = ["OpReplay", "Replay", "replay", "measured_schedule", "plot_replay"]


@dataclass(frozen=True, slots=True)
class OpReplay:
    """One op: planned window, measured window (shifted to start at 0), durations."""

    name: str
    task: str
    planned_start: int
    planned_end: int
    measured_start: float
    measured_end: float
    modelled: int
    measured: float
    on_critical_path: bool

    @property
    def difference(self) -> float:
        return self.measured - self.modelled


@dataclass(frozen=True, slots=True)
class Replay:
    schedule_makespan: int
    measured_makespan: float
    critical_path: list[str]
    path_modelled: int
    path_measured: float
    path_gaps: float
    ops: list[OpReplay]

    @property
    def difference(self) -> float:
        return self.measured_makespan - self.schedule_makespan

    @property
    def path_excess(self) -> float:
        """How much longer the chain's ops ran than modelled."""
        return self.path_measured - self.path_modelled

    def as_dict(self) -> dict[str, Any]:
        document = asdict(self)
        for entry, op in zip(document["ops"], self.ops, strict=True):
            entry["difference"] = op.difference
        document.update(difference=self.difference, path_excess=self.path_excess,
                        path_share=(self.path_excess / self.difference
                                    if self.difference else None))
        return document


def replay(run: MeasuredRun) -> Replay:
    """Set the measured run beside its schedule (see the module docstring)."""
    schedule = run.schedule
    origin = run.origin
    windows = {name: (start - origin, end - origin) for name, (start, end) in run.windows.items()}
    path = list(critical_path(schedule, windows))
    chain = set(path)
    modes = {name: op_mode(schedule, name) for name in schedule.ops}
    modelled = {name: mode.duration if mode else 0 for name, mode in modes.items()}
    ops = [OpReplay(name, schedule.problem.ops[name].task, p.start, p.end, windows[name][0],
                    windows[name][1], modelled[name], windows[name][1] - windows[name][0],
                    name in chain)
           for name, p in sorted(schedule.ops.items(), key=lambda kv: (kv[1].start, kv[0]))]
    measured = run.makespan
    path_measured = sum(windows[n][1] - windows[n][0] for n in path)
    return Replay(schedule.makespan, measured, path, sum(modelled[n] for n in path),
                  path_measured, measured - path_measured, ops)


def measured_schedule(run: MeasuredRun) -> Schedule:
    """The measured run as a schedule (times rounded to ticks, shifted to start at 0;
    no buffers), for drawing beside the planned one."""
    origin = run.origin
    ops = {name: replace(p, start=round(run.windows[name][0] - origin),
                         end=round(run.windows[name][1] - origin))
           for name, p in run.schedule.ops.items()}
    return replace(run.schedule, ops=ops, buffers={},
                   makespan=max(p.end for p in ops.values()))


def plot_replay(run: MeasuredRun, path: str | os.PathLike[str]) -> None:
    """Both timelines, the schedule above the measured run, on one time axis."""
    from schedsearch.plot import plot_paths

    plot_paths([("schedule", run.schedule), ("measured", measured_schedule(run))], path)
