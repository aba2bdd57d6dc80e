"""Pictures of schedules: a Gantt chart of the lanes, memory occupancy and budget draw.

``plot_schedule`` draws one schedule in three bands sharing one time axis: lane units as
rows with ops coloured by task (what ran where and when), each memory as address-by-time
rectangles, one per buffer (how full VTCM was, and where fragmentation sits), and each
budget's draw against its capacity (when DDR bandwidth bound). ``plot_paths`` draws
several schedules of the same work (the four execution paths of ``compare``) on one time
axis, so their lengths compare at a glance.

Matplotlib is imported inside the functions, so commands that draw nothing do not pay for
loading it. Figures are built with ``matplotlib.figure.Figure`` rather than pyplot: that
renders headless through Agg without switching the process-wide backend or keeping
global figure state, so a caller inside a notebook or a server is left undisturbed.
Lane rows, sweeps and task lookups come from :mod:`schedsearch.trace`, so the picture
shows exactly what the trace shows.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from models.formats import Schedule
from schedsearch import output
from schedsearch.trace import (
    Violation,
    budget_draw,
    lane_tracks,
    live_bytes,
    op_task,
    op_tracks,
)
from schedsearch.wording import counted

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_schedule", "plot_paths", "Panel"]

_UNKNOWN_TASK = "#9e9e9e"
_DPI = 150
_WIDTH_IN = 12.0
_ROW_IN = 0.32
#: Above this many ops, bars are too thin for names and labelling only costs time, and
#: white edges between bars would cover more than the bars themselves (a faint picture).
_MAX_LABELLED_OPS = 400
_VIOLATION = "#d62728"


@dataclass(frozen=True, slots=True)
class Panel:
    """One schedule of :func:`plot_paths` and what its title says: the makespan the table
    shows (``makespan``, overheads included; the schedule's own when None), the overhead
    in it, the launches and barriers it pays (drawn as markers and lines), and the
    checker's violation codes (an illegal panel is marked)."""

    name: str
    schedule: Schedule
    makespan: int | None = None
    overhead: int = 0
    launches: int = 0
    barriers: int = 0
    violations: tuple[str, ...] = ()


def plot_schedule(schedule: Schedule, path: str | os.PathLike[str],
                  violations: Sequence[Violation] = ()) -> None:
    """Draw ``schedule`` to the image file ``path`` (format from its suffix, default png).

    ``violations`` (a checker report's) are drawn in red: a line at each one's time, an
    outline around the ops it names. An unwritable path or an image format matplotlib
    cannot write is an InputError.
    """
    from matplotlib.figure import Figure

    memories = list(schedule.target.memories)
    budgets = list(schedule.target.budgets)
    tracks = lane_tracks(schedule)
    heights = [_ROW_IN * len(tracks) + 0.6] + [1.8] * len(memories) + [1.1] * len(budgets)
    figure = Figure(figsize=(_WIDTH_IN, sum(heights) + 0.9), layout="constrained")
    axes = figure.subplots(len(heights), 1, sharex=True, squeeze=False,
                           gridspec_kw={"height_ratios": heights})[:, 0]
    colours = _task_colours([schedule])
    span = _time_range([schedule])
    _draw_lanes(axes[0], schedule, colours, span)
    _draw_violations(axes, schedule, violations)
    _task_legend(axes[0], colours)
    occupancy = live_bytes(schedule)
    for ax, memory in zip(axes[1:1 + len(memories)], memories, strict=True):
        _draw_memory(ax, schedule, memory, colours, max(lv for _, lv in occupancy[memory]))
    draws = budget_draw(schedule)
    for ax, budget in zip(axes[1 + len(memories):], budgets, strict=True):
        _draw_budget(ax, schedule, budget, draws[budget])
    unit = schedule.target.time_unit
    axes[-1].set_xlim(*span)
    axes[-1].set_xlabel(f"time ({unit})")
    figure.suptitle(f"{schedule.problem.name} on {schedule.target.name}: makespan "
                    f"{schedule.makespan} {unit}", x=0.01, ha="left", fontsize="medium")
    _save(figure, path)


def plot_paths(named_schedules: Sequence[tuple[str, Schedule] | Panel],
               path: str | os.PathLike[str]) -> None:
    """Draw several schedules' lanes, one panel each, on one shared time axis.

    Tasks keep one colour across panels, so the same work can be followed from path to
    path; each panel's title gives its makespan (a :class:`Panel`'s, overheads included)
    and a dashed line marks the device's; launches are triangles above the lanes at each
    launched task's start, barriers dotted lines between tasks; an illegal panel has a red
    title and frame.
    """
    if not named_schedules:
        raise ValueError("plot_paths needs at least one schedule")
    from matplotlib.figure import Figure

    panels = [p if isinstance(p, Panel) else Panel(*p) for p in named_schedules]
    schedules = [panel.schedule for panel in panels]
    heights = [_ROW_IN * len(lane_tracks(s)) + 0.7 for s in schedules]
    figure = Figure(figsize=(_WIDTH_IN, sum(heights) + 0.6), layout="constrained")
    axes = figure.subplots(len(heights), 1, sharex=True, squeeze=False,
                           gridspec_kw={"height_ratios": heights})[:, 0]
    colours = _task_colours(schedules)
    span = _time_range(schedules)
    for ax, panel in zip(axes, panels, strict=True):
        _draw_lanes(ax, panel.schedule, colours, span)
        ax.axvline(panel.schedule.makespan, color="black", linestyle="--", linewidth=0.8)
        _draw_entries(ax, panel)
        _title(ax, panel)
    _task_legend(axes[0], colours)
    axes[-1].set_xlim(*span)
    axes[-1].set_xlabel(f"time ({schedules[0].target.time_unit})")
    _save(figure, path)


# ----------------------------------------------------------------------------- drawing
def _title(ax: Axes, panel: Panel) -> None:
    unit = panel.schedule.target.time_unit
    device = panel.schedule.makespan
    total = device if panel.makespan is None else panel.makespan
    text = f"{panel.name}: makespan {total} {unit}"
    if panel.makespan is not None:
        text += (f" (device {device} + overhead {panel.overhead}; {panel.launches} "
                 f"launch{'es' if panel.launches != 1 else ''}, {panel.barriers} "
                 f"barrier{'s' if panel.barriers != 1 else ''})")
    colour = "black"
    if panel.violations:
        text += f"  ILLEGAL: {', '.join(sorted(set(panel.violations)))}"
        colour = _VIOLATION
        for spine in ax.spines.values():
            spine.set_edgecolor(_VIOLATION)
            spine.set_linewidth(2)
    ax.set_title(text, loc="left", fontsize="medium", color=colour)


def _task_starts(schedule: Schedule) -> list[tuple[int, str]]:
    """Each task's first start, in time order."""
    starts: dict[str, int] = {}
    for name, placement in schedule.ops.items():
        task = op_task(schedule, name)
        if task is not None:
            starts[task] = min(starts.get(task, placement.start), placement.start)
    return sorted((time, task) for task, time in starts.items())


def _draw_entries(ax: Axes, panel: Panel) -> None:
    """Launches (a triangle at the start of each launched task: every task when there
    are as many launches as tasks, else the first) and barriers (a dotted line where
    each task after the first begins)."""
    starts = _task_starts(panel.schedule)
    launched = starts if panel.launches >= len(starts) else starts[:panel.launches]
    for time, _ in launched:
        ax.plot([time], [-0.5], marker="v", color="black", markersize=6, clip_on=False)
    if panel.barriers:
        for time, _ in starts[1:panel.barriers + 1]:
            ax.axvline(time, color="black", linestyle=":", linewidth=1.0)


def _draw_violations(axes: Sequence[Axes], schedule: Schedule,
                     violations: Sequence[Violation]) -> None:
    """A red line at each violation's time on every panel; a red outline around each bar
    of an op a violation names."""
    named = {op for violation in violations for op in violation.ops}
    tracks = {track: row for row, track in enumerate(lane_tracks(schedule))}
    for name in sorted(named & set(schedule.ops)):
        placement = schedule.ops[name]
        for track in op_tracks(schedule, name):
            axes[0].broken_barh([(placement.start, max(1, placement.end - placement.start))],
                                (tracks[track] - 0.45, 0.9), facecolors="none",
                                edgecolors=_VIOLATION, linewidths=1.5)
    for violation in violations:
        if violation.time is not None:
            for ax in axes:
                ax.axvline(violation.time, color=_VIOLATION, linewidth=1.0, alpha=0.8)
    if violations:
        axes[0].set_title(f"{counted(len(violations), 'violation')}: "
                          f"{', '.join(sorted({v.code for v in violations}))}",
                          loc="left", fontsize="medium", color=_VIOLATION)


def _task_colours(schedules: Sequence[Schedule]) -> dict[str, str]:
    """One colour per task name, in order of first appearance across ``schedules``."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    palette = [to_hex(c) for c in colormaps["tab20"].colors]  # type: ignore[attr-defined]
    # tab20 pairs a strong and a light shade of each hue: strong ones first, then light.
    palette = palette[0::2] + palette[1::2]
    names = dict.fromkeys(task for schedule in schedules for task in schedule.problem.tasks)
    return {task: palette[i % len(palette)] for i, task in enumerate(names)}


def _time_range(schedules: Sequence[Schedule]) -> tuple[float, float]:
    """The time span that shows every op and buffer window of every schedule."""
    low, high = 0, 1
    for schedule in schedules:
        times = [schedule.makespan]
        times += [t for p in schedule.ops.values() for t in (p.start, p.end)]
        times += [t for b in schedule.buffers.values() for t in (b.alloc, b.free)]
        low, high = min(low, *times), max(high, *times)
    return low, high


def _draw_lanes(ax: Axes, schedule: Schedule, colours: dict[str, str],
                span: tuple[float, float]) -> None:
    """One row per lane unit; one bar per op per unit it holds, coloured by its task.

    ``span`` is the time range the shared axis will show, which decides where names fit.
    """
    tracks = lane_tracks(schedule)
    bars: dict[str, list[tuple[int, int]]] = {track: [] for track in tracks}
    fills: dict[str, list[str]] = {track: [] for track in tracks}
    for name, placement in schedule.ops.items():
        colour = colours.get(op_task(schedule, name) or "", _UNKNOWN_TASK)
        for track in op_tracks(schedule, name):
            bars[track].append((placement.start, max(0, placement.end - placement.start)))
            fills[track].append(colour)
    crowded = len(schedule.ops) > _MAX_LABELLED_OPS
    for row, track in enumerate(tracks):
        if bars[track]:
            ax.broken_barh(bars[track], (row - 0.4, 0.8), facecolors=fills[track],
                           edgecolors="none" if crowded else "white",
                           linewidths=0 if crowded else 0.4)
    if len(schedule.ops) <= _MAX_LABELLED_OPS:
        _label_ops(ax, schedule, {track: row for row, track in enumerate(tracks)}, span)
    ax.set_yticks(range(len(tracks)), tracks)
    ax.set_ylim(len(tracks) - 0.5, -0.5)
    ax.grid(axis="x", linewidth=0.3, alpha=0.5)


def _label_ops(ax: Axes, schedule: Schedule, rows: dict[str, int],
              span: tuple[float, float]) -> None:
    """Write each op's name inside its bar where the bar is wide enough to hold it.

    The width test is an estimate (a character of the label font is about 1/170 of the
    time axis on the default figure); a name that would not fit is left out rather than
    spilling over its neighbours.
    """
    char_width = (span[1] - span[0]) / 170
    for name, placement in schedule.ops.items():
        if placement.end - placement.start < char_width * (len(name) + 1):
            continue
        for track in op_tracks(schedule, name):
            ax.text((placement.start + placement.end) / 2, rows[track], name, ha="center",
                    va="center", fontsize=6, color="white", clip_on=True)


def _task_legend(ax: Axes, colours: dict[str, str]) -> None:
    from matplotlib.patches import Patch

    if colours:
        ax.legend(handles=[Patch(color=c, label=task) for task, c in colours.items()],
                  loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize="small",
                  title="task", title_fontsize="small", frameon=False,
                  ncols=1 + len(colours) // 16)


def _buffer_tasks(schedule: Schedule) -> dict[str, str]:
    """Per buffer, the task of its first writer (else first reader): whose data it holds."""
    found: dict[str, tuple[int, int, str]] = {}
    for name, placement in schedule.ops.items():
        op = schedule.problem.ops.get(name)
        if op is None:
            continue
        for rank, accesses in enumerate((op.writes, op.reads)):
            for access in accesses:
                if access.buffer is not None:
                    key = (rank, placement.start, op.task)
                    found[access.buffer] = min(found.get(access.buffer, key), key)
    return {buffer: task for buffer, (_, _, task) in found.items()}


def _draw_memory(ax: Axes, schedule: Schedule, memory: str, colours: dict[str, str],
                 peak: int) -> None:
    """Each buffer of ``memory`` as a rectangle: time window by byte range."""
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgb
    from matplotlib.ticker import FuncFormatter

    capacity = schedule.target.memories[memory].capacity_bytes
    owners = _buffer_tasks(schedule)
    boxes, fills = [], []
    top = capacity
    for name, placement in schedule.buffers.items():
        buffer = schedule.problem.buffers.get(name)
        if buffer is None or buffer.memory != memory or placement.free <= placement.alloc:
            continue
        low, high = placement.offset, placement.offset + buffer.size
        boxes.append([(placement.alloc, low), (placement.free, low),
                      (placement.free, high), (placement.alloc, high)])
        fills.append(colours.get(owners.get(name, ""), _UNKNOWN_TASK))
        top = max(top, high)
    # Edges a shade darker than the fill: they separate neighbours without turning
    # buffers only a pixel or two high into black lines.
    # Many buffers: no edges and no transparency, or the picture turns faint.
    crowded = len(boxes) > _MAX_LABELLED_OPS
    edges = [tuple(0.6 * c for c in to_rgb(fill)) for fill in fills]
    ax.add_collection(PolyCollection(boxes, facecolors=fills,
                                     edgecolors="none" if crowded else edges,
                                     linewidths=0 if crowded else 0.3,
                                     alpha=1.0 if crowded else 0.85))
    ax.axhline(capacity, color="red", linestyle="--", linewidth=0.8)
    ax.set_ylim(0, top * 1.04)
    # Quarters of the capacity: capacities are powers of two, so the ticks read 1 MiB, ...
    ax.set_yticks([capacity * i / 4 for i in range(5)])
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: _bytes_text(value)))
    ax.set_ylabel(f"{memory}\naddress")
    ax.text(0.995, 0.96, f"peak {_bytes_text(peak)} of {_bytes_text(capacity)}",
            transform=ax.transAxes, ha="right", va="top", fontsize="small")


def _draw_budget(ax: Axes, schedule: Schedule, budget: str,
                 series: list[tuple[int, int]]) -> None:
    """A budget's draw as a step function, with its capacity as a dashed line."""
    capacity = schedule.target.budgets[budget]
    times = [t for t, _ in series]
    levels = [level for _, level in series]
    ax.fill_between(times, levels, step="post", alpha=0.35, color="tab:blue", linewidth=0)
    ax.step(times, levels, where="post", color="tab:blue", linewidth=0.9)
    ax.axhline(capacity, color="red", linestyle="--", linewidth=0.8)
    ax.set_ylim(0, max(capacity, *levels) * 1.1)
    unit = (f"bytes/{schedule.target.time_unit}"
            if schedule.target.costs.get("ddr_budget") == budget else "units")
    ax.set_ylabel(f"{budget}\n({unit})")


def _bytes_text(value: float) -> str:
    for size, suffix in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(value) >= size:
            return f"{value / size:.4g} {suffix}"
    return f"{value:.4g} B"


def _save(figure: Figure, path: str | os.PathLike[str]) -> None:
    """Render to ``path`` through the shared writer (whole or not at all; the format from
    the suffix, checked first)."""
    image_format = output.image_format(path)
    output.write_with(path, lambda stream: figure.savefig(stream, format=image_format,
                                                          dpi=_DPI))
