"""One simulated run of a program as a Chrome trace, with each wait drawn as a flow arrow.

The run's times (floats, rounded to whole ticks) are put into a schedule-shaped record of
the same ops, units and buffer offsets, so :func:`schedsearch.trace.schedule_to_trace`
draws it like any schedule; a buffer's window is where its accesses ran. That record is
for display only: under noise ops run longer and draws share the bus, so it is not an
``npu-schedule/1`` of the same modes (its windows and draws need not add up). Each wait
``u -> v`` becomes a flow from ``u``'s slice to ``v``'s slice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from fractions import Fraction
from typing import Any

from models.cost import overheads
from models.formats import BufferPlacement, Schedule
from schedsearch.program.model import Program
from schedsearch.program.policies import program_plan
from schedsearch.program.simulate import Jitter, Runs, noise, run_plan
from schedsearch.trace import Violation, microseconds_per_tick, op_tracks, schedule_to_trace

__all__ = ["simulate_once", "run_schedule", "program_run_trace"]

_LANES_PID = 1


def simulate_once(program: Program, jitter: Jitter, seed: int) -> Runs:
    """One run of the program policy (the first run of ``seed``'s noise)."""
    plan = program_plan(program, overheads(program.schedule.target)).plan
    return run_plan(plan, noise(list(program.schedule.ops), 1, seed), 1, jitter)


def run_schedule(program: Program, runs: Runs, run: int = 0) -> Schedule:
    """The times of run ``run`` as a schedule-shaped record (display only, see above)."""
    schedule = program.schedule
    times: dict[str, tuple[int, int]] = {}
    for i, name in enumerate(runs.plan.names[:runs.plan.ops]):
        start = round(float(runs.start[run, i]))
        times[name] = (start, max(start, round(float(runs.end[run, i]))))
    ops = {name: replace(p, start=times[name][0], end=times[name][1])
           for name, p in schedule.ops.items()}
    windows: dict[str, list[int]] = {}
    for name in schedule.ops:
        op = schedule.problem.ops[name]
        for access in (*op.reads, *op.writes):
            if access.buffer is not None:
                lo, hi = windows.setdefault(access.buffer, list(times[name]))
                windows[access.buffer] = [min(lo, times[name][0]), max(hi, times[name][1])]
    buffers = {name: BufferPlacement(b.offset, *windows.get(name, (b.alloc, b.free)))
               for name, b in schedule.buffers.items()}
    meta = {"simulated_run": run, "static_makespan": schedule.makespan}
    return Schedule(schedule.target, schedule.problem, ops, buffers,
                    max((end for _, end in times.values()), default=0), meta)


def program_run_trace(program: Program, jitter: Jitter, seed: int,
                      violations: Iterable[Violation] = ()) -> tuple[dict[str, Any], Schedule]:
    """A trace of one simulated run, waits as flow events (``ph`` ``s``/``f``)."""
    timed = run_schedule(program, simulate_once(program, jitter, seed))
    trace = schedule_to_trace(timed, violations)
    tid = {e["args"]["name"]: e["tid"] for e in trace["traceEvents"]
           if e.get("ph") == "M" and e["name"] == "thread_name" and e["pid"] == _LANES_PID}
    scale = microseconds_per_tick(timed.target.time_unit) or Fraction(1)

    def us(ticks: int) -> int | float:  # as schedule_to_trace converts, so the ts match
        value = ticks * scale
        return int(value) if value.denominator == 1 else float(value)

    for k, (before, after) in enumerate(program.wait_edges()):
        a, b = timed.ops[before], timed.ops[after]
        trace["traceEvents"] += [
            {"name": "wait", "cat": "wait", "ph": "s", "id": k, "pid": _LANES_PID,
             "tid": tid[op_tracks(timed, before)[0]], "ts": us(a.start)},
            {"name": "wait", "cat": "wait", "ph": "f", "bp": "e", "id": k, "pid": _LANES_PID,
             "tid": tid[op_tracks(timed, after)[0]], "ts": us(b.start)}]
    trace["otherData"].update({"simulated_run": True, "jitter": str(jitter), "seed": seed,
                               "static_makespan": program.schedule.makespan,
                               "waits": program.wait_count})
    return trace, timed
