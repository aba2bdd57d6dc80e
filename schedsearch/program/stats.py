"""Runs of a program under noise, summarised: makespan percentiles against the static
makespan, busy share per lane kind, and the share of time ops waited on events.

``event_wait_share``: unit time during which a unit's next op in its queue had not
started although the op before it in the queue (or the launch) had ended, over all
units' time (units x makespan). In a static plan an op starts as soon as its queue
predecessor and its waits allow, so that time is exactly time waiting on events (or on a
barrier, or a kernel launch, in the policies that have them). The dynamic runtime has no
queues: ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.cost import Overheads
from schedsearch.paths import SolveOptions
from schedsearch.program.model import Program
from schedsearch.program.policies import Policy, PolicyPlan, plan_policy
from schedsearch.program.simulate import Jitter, Runs, noise, run_plan

__all__ = ["PolicyRuns", "Study", "simulate", "summarise"]

PERCENTILES = (50, 95, 99)


@dataclass(frozen=True, slots=True)
class PolicyRuns:
    """One policy's runs: makespans (one per run) and mean shares over the runs."""

    policy: Policy
    static_makespan: int
    makespans: np.ndarray
    busy_share: dict[str, float]
    event_wait_share: float | None

    def percentile(self, p: float) -> float:
        return float(np.percentile(self.makespans, p))

    def to_dict(self, reference: int) -> dict[str, Any]:
        d: dict[str, Any] = {"policy": self.policy.value, "static_makespan":
                             self.static_makespan, "mean": round(float(self.makespans.mean()), 1)}
        for p in PERCENTILES:
            d[f"p{p}"] = round(self.percentile(p), 1)
            d[f"p{p}_vs_static"] = round(self.percentile(p) / reference, 4) if reference \
                else None
        d["busy_share"] = {k: round(v, 4) for k, v in self.busy_share.items()}
        d["event_wait_share"] = None if self.event_wait_share is None else \
            round(self.event_wait_share, 4)
        return d


@dataclass(frozen=True, slots=True)
class Study:
    """Every policy run under the same noise; ``static_makespan`` is the program's."""

    static_makespan: int
    runs: int
    seed: int
    jitter: Jitter
    results: tuple[PolicyRuns, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"static_makespan": self.static_makespan, "runs": self.runs,
                "seed": self.seed, "jitter": str(self.jitter),
                "policies": [r.to_dict(self.static_makespan) for r in self.results]}


def summarise(planned: PolicyPlan, runs: Runs) -> PolicyRuns:
    """Percentiles and shares of one policy's runs."""
    plan = planned.plan
    makespan = runs.makespan
    span = np.where(makespan > 0, makespan, 1.0)
    held = np.nan_to_num(runs.end - runs.start)
    busy = {lane: float(np.mean(held @ plan.units[:, k] / (plan.unit_counts[k] * span)))
            for k, lane in enumerate(plan.lanes)}
    waited = None
    if planned.queues:
        gaps = np.zeros(len(makespan))
        for queue in planned.queues:
            if queue:
                gaps += runs.start[:, queue[0]] - plan.release[queue[0]]
                gaps += (runs.start[:, queue[1:]] - runs.end[:, queue[:-1]]).sum(axis=1)
        waited = float(np.mean(gaps / (plan.unit_counts.sum() * span)))
    return PolicyRuns(planned.policy, planned.static_makespan, makespan, busy, waited)


def simulate(program: Program, *, runs: int = 1000, jitter: Jitter | None = None,
             seed: int = 0, policies: Sequence[Policy] = (Policy.PROGRAM,),
             options: SolveOptions | None = None, costs: Overheads | None = None) -> Study:
    """Run each policy ``runs`` times under the same noise (``seed``, per op name).

    ``options`` bounds the solves the ``barrier`` and ``separate`` policies need;
    ``costs`` replaces the target's overheads (a target without ``costs``).
    """
    jitter = jitter if jitter is not None else Jitter(0.1)
    options = options if options is not None else SolveOptions(time_limit=2.0, seed=seed)
    z = noise(list(program.schedule.ops), runs, seed)
    results = []
    for policy in policies:
        planned = plan_policy(program, policy, options, costs)
        results.append(summarise(planned, run_plan(planned.plan, z, runs, jitter)))
    return Study(program.schedule.makespan, runs, seed, jitter, tuple(results))
