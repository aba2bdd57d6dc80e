"""What is recoverable at all: the same problem solved again with one thing idealised.

Before anyone builds a fusion or asks for faster hardware, :func:`whatif` answers how
much end-to-end time each resource costs: the problem is solved once as it is (one fused
entry, tiles interleaved, scored like ``compare``'s path 4) and again with exactly one
thing idealised at a time:

- a lane kind infinitely fast: every mode holding a unit of it lasts 1 tick (the cost
  model's shortest duration);
- a budget unlimited: its capacity is raised to the sum of every op's largest draw, so
  it never binds;
- launch and synchronisation free: the launch, event and barrier overheads are 0 (the
  device schedule does not change, so it is not solved again);
- a memory unlimited: its capacity is raised to the sum of its buffers (aligned), so
  every buffer can be live at once;

then all of them together. Each row reports the end-to-end makespan and its gain over
the baseline. Gains do not add: removing one bottleneck exposes the next, so the table
shows the combined run itself, never a sum or product of the rows.

Each lane row also shows the estimate a profile would suggest: the share ``f`` of the
baseline's end-to-end time that its critical path (:mod:`schedsearch.chains.critical`)
spends on that lane kind, and ``1 / (1 - f)``, the gain if that time simply vanished
(for the synchronisation row ``f`` is the overhead's share, and the estimate is exact).
Where the solved gain falls short of the estimate, the bottleneck moved; ``bottleneck``
names the largest single-resource part of the lower bound
(:func:`schedsearch.engine.bounds.lower.lower_bound`) of each problem, so the move is visible. Every
schedule is verified by the checker against its own (idealised) problem and target.
The search is time-limited: when an idealised search comes out no better end to end
than the baseline's schedule (which is legal for the idealised problem too), that
schedule is kept and the row's note says so; no row is slower than the baseline.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from models.cost import Overheads, overheads
from models.formats import Memory, Problem, Schedule, Target
from schedsearch.chains.critical import critical_path
from schedsearch.chains.score import score_fused
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.search import solve_report
from schedsearch.paths import PathResult, SolveOptions, speedup_bound

__all__ = ["DEFAULT_OPTIONS", "IdealKind", "Idealisation", "WhatIfRow", "WhatIf",
           "idealisations", "idealise", "whatif", "bottleneck"]

#: Bound parts that combine several resources (not named as a bottleneck), and the
#: search's own part beside the lower bound's (``dependency_chain`` at the search's
#: granularity), so that a solve's parts name the bottleneck :func:`bottleneck` does.
_COMBINED_PARTS = ("energy", "configuration", "windows", "cpsat", "dependency_chain")
#: Whatif solves many problems: a shorter limit per solve than ``compare``'s default.
DEFAULT_OPTIONS = SolveOptions(time_limit=2.0)


class IdealKind(Enum):
    LANE = "lane"
    BUDGET = "budget"
    SYNC = "sync"
    MEMORY = "memory"


@dataclass(frozen=True, slots=True)
class Idealisation:
    """One thing made ideal: a lane kind, a budget, a memory (by name), or sync."""

    kind: IdealKind
    resource: str = ""

    @property
    def label(self) -> str:
        return {IdealKind.LANE: f"{self.resource} infinitely fast",
                IdealKind.BUDGET: f"{self.resource} unlimited",
                IdealKind.SYNC: "launch and sync free",
                IdealKind.MEMORY: f"{self.resource} unlimited"}[self.kind]


@dataclass(frozen=True, slots=True)
class WhatIfRow:
    """One run: what was idealised (empty: the baseline; several: all together)."""

    idealised: tuple[Idealisation, ...]
    result: PathResult
    gain: float
    bottleneck: str
    share: float | None = None
    note: str = ""

    @property
    def label(self) -> str:
        if not self.idealised:
            return "baseline"
        return "all together" if len(self.idealised) > 1 else self.idealised[0].label

    @property
    def estimate(self) -> float | None:
        """``1 / (1 - share)``: the gain if the share simply vanished."""
        return None if self.share is None else speedup_bound(self.share)

    def as_dict(self) -> dict[str, Any]:
        return {"idealised": self.label,
                "what": [{"kind": i.kind.value, "resource": i.resource}
                         for i in self.idealised],
                "makespan": self.result.makespan,
                "device_makespan": self.result.device_makespan,
                "overhead": self.result.overhead, "gain": self.gain,
                "share": self.share, "estimate": self.estimate,
                "bottleneck": self.bottleneck, "legal": self.result.legal,
                "violations": list(self.result.violations), "note": self.note}


@dataclass(frozen=True, slots=True)
class WhatIf:
    """The baseline first, one row per idealisation, and the combined row last."""

    problem: str
    target: str
    time_unit: str
    rows: tuple[WhatIfRow, ...]

    @property
    def combined(self) -> WhatIfRow:
        return self.rows[-1]

    def as_dict(self) -> dict[str, Any]:
        return {"problem": self.problem, "target": self.target, "time_unit": self.time_unit,
                "rows": [row.as_dict() for row in self.rows],
                "combined_gain": self.combined.gain}


def idealisations(target: Target) -> tuple[Idealisation, ...]:
    """Every single idealisation of ``target``: lanes, budgets, sync, then memories."""
    return (*(Idealisation(IdealKind.LANE, k) for k in target.lanes),
            *(Idealisation(IdealKind.BUDGET, b) for b in target.budgets),
            Idealisation(IdealKind.SYNC),
            *(Idealisation(IdealKind.MEMORY, m) for m in target.memories))


def idealise(problem: Problem, target: Target, costs: Overheads,
             ideals: Iterable[Idealisation]) -> tuple[Problem, Target, Overheads]:
    """The problem, target and overheads with each of ``ideals`` applied (module doc)."""
    for ideal in ideals:
        if ideal.kind is IdealKind.LANE:
            ops = {name: replace(op, modes=tuple(
                       replace(m, duration=min(m.duration, 1)) if m.lanes.get(ideal.resource)
                       else m for m in op.modes))
                   for name, op in problem.ops.items()}
            problem = replace(problem, ops=ops)
        elif ideal.kind is IdealKind.BUDGET:
            demand = sum(max(m.budgets.get(ideal.resource, 0) for m in op.modes)
                         for op in problem.ops.values())
            capacity = max(target.budgets[ideal.resource], demand)
            target = replace(target, budgets={**target.budgets, ideal.resource: capacity})
        elif ideal.kind is IdealKind.MEMORY:
            memory = target.memories[ideal.resource]
            need = sum(_aligned(b.size, math.lcm(b.align, memory.alignment_bytes))
                       for b in problem.buffers.values() if b.memory == ideal.resource)
            bigger = Memory(max(memory.capacity_bytes, need), memory.alignment_bytes)
            target = replace(target, memories={**target.memories, ideal.resource: bigger})
        else:
            costs = Overheads(0, 0, 0)
    return problem, target, costs


def _aligned(size: int, align: int) -> int:
    return -(-size // align) * align


def bottleneck(problem: Problem, target: Target) -> str:
    """The largest part of the problem's lower bound that names one resource (a lane, a
    budget, a memory, the critical path); parts combining several are left out."""
    return _largest(lower_bound(problem, target).parts)


def _largest(bound_parts: Mapping[str, int]) -> str:
    """:func:`bottleneck` from the parts of a lower bound (or of a solve's report)."""
    parts = {k: v for k, v in bound_parts.items() if k not in _COMBINED_PARTS}
    return max(parts, key=lambda p: (parts[p], p), default="-")


def _lane_share(schedule: Schedule, lane: str, total: int) -> float:
    """Share of ``total`` that the critical path spends in ops holding ``lane``."""
    ticks = 0
    for name in critical_path(schedule):
        placed = schedule.ops[name]
        if schedule.problem.ops[name].modes[placed.mode].lanes.get(lane):
            ticks += placed.end - placed.start
    return ticks / total if total else 0.0


def whatif(problem: Problem, target: Target, *,
           options: SolveOptions = DEFAULT_OPTIONS) -> WhatIf:
    """The baseline, each idealisation alone, and all together (module docstring).

    ``options.time_limit`` is each solve's; with ``options.allotment`` the study's one
    limit is allotted evenly to its solves (an idealisation of synchronisation alone
    keeps the baseline's schedule and solves nothing), each granted its part of what is
    left as it begins."""
    costs = overheads(target)
    singles = idealisations(target)
    studied = [*((i,) for i in singles), singles]
    if options.allotment is not None:
        options.allotment.plan(1 + sum(not all(i.kind is IdealKind.SYNC for i in ideal)
                                       for ideal in studied))

    def run(ideals: tuple[Idealisation, ...], base: PathResult | None,
            base_neck: str = "-") -> tuple[PathResult, str, str]:
        p, t, c = idealise(problem, target, costs, ideals)
        label = "+".join(i.label for i in ideals) or "baseline"
        if base is not None and all(i.kind is IdealKind.SYNC for i in ideals):
            return score_fused(label, base.schedule, c), base_neck, ""  # same problem
        report = solve_report(p, t, **options.search())
        neck = _largest(report.bound_parts)
        found = score_fused(label, report.schedule, c)
        # The baseline's schedule is legal here too; its end-to-end time under these
        # overheads (same placements, same events), scored only when it is kept.
        if base is None or found.makespan <= (base.device_makespan + c.launch_ns
                                              + base.events * c.event_ns):
            return found, neck, ""
        kept = score_fused(label, replace(base.schedule, problem=p, target=t,
                                          meta={"kept": "baseline"}), c)
        note = (f"the time-limited search reached {found.makespan} end to end, no better "
                "than the baseline's schedule, which is legal here too: it is kept")
        return kept, neck, note

    base, base_bottleneck, _ = run((), None)
    rows = [WhatIfRow((), base, 1.0, base_bottleneck)]
    for ideal in studied:
        result, neck, note = run(ideal, base, base_bottleneck)
        share = None
        if len(ideal) == 1 and ideal[0].kind is IdealKind.LANE:
            share = _lane_share(base.schedule, ideal[0].resource, base.makespan)
        elif len(ideal) == 1 and ideal[0].kind is IdealKind.SYNC:
            share = base.overhead / base.makespan if base.makespan else 0.0
        rows.append(WhatIfRow(ideal, result, base.makespan / result.makespan, neck,
                              share, note))
    return WhatIf(problem.name, target.name, target.time_unit, tuple(rows))
