"""The searched mix under noise: its schedule lowered to a program and run many times by
the simulator (``schedsearch simulate``'s ``program`` policy), each request's end taken
from every run.

Per run, a request ends when the last of its ops ends (the simulator's times include
the entry's launch and each wait's event). Per request: the end's P50 and P99 over the
runs (numpy's linear interpolation, as ``simulate`` reports the makespan) and, with a
deadline, the share of runs in which the request ended by it. The overheads are the
program's as the simulator runs it: one launch before anything starts, and each wait
costs an event after the op it waits for (on the device's time, not serially on the
control processor as the mix's figures charge them), so at no noise a request's end can
differ from its ``end`` in the policy table by those overheads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models.cost import overheads
from schedsearch.mix.policies import PolicyRun
from schedsearch.program.lower import lower
from schedsearch.program.policies import program_plan
from schedsearch.program.simulate import Jitter, noise, run_plan

__all__ = ["RequestNoise", "MixNoise", "simulate_mix"]


@dataclass(frozen=True, slots=True)
class RequestNoise:
    """One request's end over the runs (ns) and the share of runs that met its deadline
    (None without one)."""

    end_p50: float
    end_p99: float
    deadline_ns: int | None
    met_share: float | None


@dataclass(frozen=True, slots=True)
class MixNoise:
    """The runs of one policy's program: how many, the noise, the makespan's P50/P99, and
    each request's figures in file order."""

    policy: str
    runs: int
    jitter: Jitter
    seed: int
    makespan_p50: float
    makespan_p99: float
    requests: dict[str, RequestNoise]

    def as_dict(self) -> dict[str, Any]:
        """The ``simulation`` object of ``mix --json``."""
        return {"policy": self.policy, "runs": self.runs, "jitter": str(self.jitter),
                "seed": self.seed, "makespan_p50": round(self.makespan_p50, 1),
                "makespan_p99": round(self.makespan_p99, 1),
                "requests": {name: {"end_p50": round(r.end_p50, 1),
                                    "end_p99": round(r.end_p99, 1),
                                    "deadline_met_share": r.met_share}
                             for name, r in self.requests.items()}}


def simulate_mix(run: PolicyRun, runs: int, jitter: Jitter, seed: int = 0) -> MixNoise:
    """``runs`` runs of ``run``'s schedule lowered to a program, under ``jitter`` with the
    noise of ``seed`` (drawn per op name, as ``simulate`` draws it)."""
    schedule, mp = run.schedule, run.mix_problem
    plan = program_plan(lower(schedule), overheads(schedule.target)).plan
    result = run_plan(plan, noise(list(schedule.ops), runs, seed), runs, jitter)
    column = {name: i for i, name in enumerate(plan.names)}
    requests = {}
    for request in mp.mix.requests:
        ends = result.end[:, [column[op] for op in mp.ops_of(request.name)]].max(axis=1)
        met = None if request.deadline_ns is None else \
            float(np.mean(ends <= request.deadline_ns))
        requests[request.name] = RequestNoise(float(np.percentile(ends, 50)),
                                              float(np.percentile(ends, 99)),
                                              request.deadline_ns, met)
    return MixNoise(run.name, runs, jitter, seed, float(np.percentile(result.makespan, 50)),
                    float(np.percentile(result.makespan, 99)), requests)
