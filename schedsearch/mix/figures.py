"""What a serving policy achieves, from its schedule and overheads: the figures of ``mix``.

Every request arrives at 0. Per policy:

- ``makespan``: the device makespan plus every overhead (launches, events), as
  ``compare`` counts it.
- a request's ``end``: the largest end of its ops plus the overheads paid before it
  (charges at device times strictly earlier than that end: a kernel launched after the
  request ended does not delay it). The last request's end is the makespan.
- ``deadline_met``: ``end <= deadline``, or None without a deadline.
- ``decode_p50_ns``, ``decode_p99_ns``: percentiles of the decode requests' ends, by the
  nearest-rank rule (numpy's ``inverted_cdf``: a value some request had); None without
  decode requests.
- throughput as a steady stream: the mix repeated back to back, each repetition starting
  when the previous one has ended (no overlap between repetitions, so the period is the
  makespan): ``requests_per_s`` and ``tokens_per_s`` (prefill tokens plus one per decode
  step) per period.
- ``legal``: the checker's verdict on the schedule (with its violation codes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from checker import verify
from checker.report import Report
from models.formats import Schedule, schedule_to_dict
from models.heap import cycles_uncollected
from schedsearch.mix.policies import PolicyRun, Tried, request_ends, total

__all__ = ["RequestFigures", "PolicyFigures", "check", "score", "score_all", "percentile"]


@dataclass(frozen=True, slots=True)
class RequestFigures:
    """When one request ends (ns from the start of the mix) and whether it met its
    deadline (None: it has none)."""

    end: int
    deadline_ns: int | None
    deadline_met: bool | None


@dataclass(frozen=True, slots=True)
class PolicyFigures:
    """One policy's figures (module docstring)."""

    name: str
    makespan: int
    device_makespan: int
    overhead: int
    launches: int
    events: int
    requests: dict[str, RequestFigures]
    decode_p50_ns: int | None
    decode_p99_ns: int | None
    requests_per_s: float
    tokens_per_s: float
    chunk: int | None
    legal: bool
    violations: tuple[str, ...]
    note: str
    tried: tuple[Tried, ...] = ()

    @property
    def missed(self) -> list[str]:
        """The requests whose deadline this policy misses, in file order."""
        return [name for name, r in self.requests.items() if r.deadline_met is False]

    def as_dict(self) -> dict[str, Any]:
        """The ``P`` of ``mix --json``."""
        return {"makespan": self.makespan, "device_makespan": self.device_makespan,
                "overhead": self.overhead, "launches": self.launches, "events": self.events,
                "requests": {name: {"end": r.end, "deadline_met": r.deadline_met}
                             for name, r in self.requests.items()},
                "deadlines_met": sum(r.deadline_met is True for r in self.requests.values()),
                "deadlines": sum(r.deadline_ns is not None for r in self.requests.values()),
                "decode_p50": self.decode_p50_ns, "decode_p99": self.decode_p99_ns,
                "requests_per_s": self.requests_per_s, "tokens_per_s": self.tokens_per_s,
                "chunk": self.chunk, "legal": self.legal,
                "violations": list(self.violations), "note": self.note,
                "tried": [{"candidate": t.label, "chunk": t.chunk, "makespan": t.makespan,
                           "lateness": t.lateness} for t in self.tried]}


def percentile(values: list[int], q: float) -> int | None:
    """The nearest-rank ``q``-th percentile of ``values`` (one of them), None if empty."""
    if not values:
        return None
    return int(np.percentile(values, q, method="inverted_cdf"))


def check(schedule: Schedule) -> Report:
    """The independent checker's verdict on ``schedule``."""
    return verify(schedule_to_dict(schedule))


def score(run: PolicyRun, verdict: Report | None = None) -> PolicyFigures:
    """The figures of ``run``, its schedule checked by the independent checker (or
    ``verdict``, the checker's verdict on that schedule when the caller has it: the
    ``searched`` policy may keep a kernel policy's very schedule)."""
    schedule, mp = run.schedule, run.mix_problem
    ends = request_ends(run)
    requests = {}
    for request in mp.mix.requests:
        end = ends[request.name]
        met = None if request.deadline_ns is None else end <= request.deadline_ns
        requests[request.name] = RequestFigures(end, request.deadline_ns, met)
    makespan = total(run)
    decodes = [requests[r.name].end for r in mp.mix.requests if r.phase == "decode"]
    tokens = sum(r.tokens for r in mp.mix.requests)
    verdict = verdict or check(schedule)
    per_s = 1e9 / makespan if makespan else 0.0
    return PolicyFigures(
        name=run.name, makespan=makespan, device_makespan=schedule.makespan,
        overhead=makespan - schedule.makespan, launches=run.launches, events=run.events,
        requests=requests, decode_p50_ns=percentile(decodes, 50),
        decode_p99_ns=percentile(decodes, 99), requests_per_s=len(requests) * per_s,
        tokens_per_s=tokens * per_s, chunk=mp.chunk, legal=verdict.legal,
        violations=tuple(sorted({v.code for v in verdict.violations})), note=run.note,
        tried=run.tried)


def score_all(runs: dict[str, PolicyRun]) -> dict[str, PolicyFigures]:
    """:func:`score` of each run, each distinct schedule checked once."""
    verdicts: list[tuple[Schedule, Report]] = []
    figures = {}
    with cycles_uncollected():
        for name, run in runs.items():
            verdict = next((v for s, v in verdicts if s is run.schedule), None)
            if verdict is None:
                verdict = check(run.schedule)
                verdicts.append((run.schedule, verdict))
            figures[name] = score(run, verdict)
    return figures
