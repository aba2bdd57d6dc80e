"""The three serving policies on a small mix: legal, in the order each promises, scored
by the figures' definitions."""

from __future__ import annotations

import pytest

from checker import verify
from models.formats import schedule_to_dict
from models.mix import Mix, Request
from models.requests import mix_problem
from models.targets import load_target
from schedsearch.mix.figures import percentile
from schedsearch.mix.policies import POLICIES, Goal, chunked_parts, sequential_parts
from schedsearch.mix.serve import serve
from schedsearch.paths import SolveOptions

TARGET = load_target("hexagon-v75")
QWEN = "qwen2.5-0.5b"
MIX = Mix("small", TARGET.name, (
    Request("p0", QWEN, "prefill", 80, 0),
    Request("d0", QWEN, "decode", 1, 64, deadline_ns=10**9),
    Request("d1", QWEN, "decode", 1, 32, deadline_ns=1),
))


@pytest.fixture(scope="module")
def report():
    """Soft deadlines: d1's (1 ns) cannot be met."""
    return serve(MIX, TARGET, SolveOptions(time_limit=0.05, reproducible=True),
                 goal=Goal(soft_deadlines=True))


def _spans(run, key) -> dict[str, tuple[int, int]]:
    """First start and last end of each group of ops (``key(part) -> group``)."""
    spans: dict[str, tuple[int, int]] = {}
    for name, p in run.schedule.ops.items():
        group = key(run.mix_problem.part_of[run.schedule.problem.ops[name].task])
        lo, hi = spans.get(group, (p.start, p.end))
        spans[group] = (min(lo, p.start), max(hi, p.end))
    return spans


def test_every_policy_is_legal_by_the_checker(report) -> None:
    assert list(report.runs) == list(POLICIES)
    for run in report.runs.values():
        assert verify(schedule_to_dict(run.schedule)).legal, run.name
        assert report.figures[run.name].legal


def test_sequential_runs_the_requests_one_after_another_in_file_order(report) -> None:
    spans = _spans(report.runs["sequential"], lambda part: part.request)
    assert spans["p0"][1] <= spans["d0"][0] and spans["d0"][1] <= spans["d1"][0]
    assert report.figures["sequential"].launches == 3 * 14  # a kernel per task


def test_chunked_runs_every_pending_decode_after_the_first_chunk(report) -> None:
    run = report.runs["chunked"]
    assert run.mix_problem.chunk == 64
    spans = _spans(run, lambda part: part.prefix)
    assert set(spans) == {"p0-c0", "p0-c1", "d0", "d1"}
    assert spans["p0-c0"][1] <= spans["d0"][0]
    assert spans["d0"][1] <= spans["d1"][0] and spans["d1"][1] <= spans["p0-c1"][0]


def test_searched_is_one_entry_and_no_later_than_the_kernel_policies(report) -> None:
    """At any speed: each kernel schedule, fused, is a candidate, and its events (at most
    the 372 or 408 cross-task dependencies, 0.5 us each) cost less than the 41 or 55
    launches (10 us each) it saves; the candidate kept is the least late (soft
    deadlines), then the shortest."""
    figures = report.figures

    def key(name: str) -> tuple[int, int]:
        f = figures[name]
        late = sum(max(0, r.end - r.deadline_ns) for r in f.requests.values()
                   if r.deadline_ns is not None)
        return late, f.makespan

    assert figures["searched"].launches == 1
    assert key("searched") <= min(key("sequential"), key("chunked"))
    assert figures["searched"].chunk in (None, 64)


def test_request_ends_deadlines_and_latency_follow_their_definitions(report) -> None:
    for name, figures in report.figures.items():
        run = report.runs[name]
        ends = {r: f.end for r, f in figures.requests.items()}
        assert max(ends.values()) == figures.makespan
        assert figures.makespan == run.schedule.makespan + sum(ns for _, ns in run.charges)
        for request in MIX.requests:
            last = max(run.schedule.ops[op].end for op in run.mix_problem.ops_of(request.name))
            assert ends[request.name] >= last
            met = figures.requests[request.name].deadline_met
            if request.deadline_ns is None:
                assert met is None
            else:
                assert met == (ends[request.name] <= request.deadline_ns)
        assert figures.missed == ["d1"]  # 1 ns: no policy meets it
        assert figures.decode_p50_ns == min(ends["d0"], ends["d1"])
        assert figures.decode_p99_ns == max(ends["d0"], ends["d1"])
        assert figures.requests_per_s * figures.makespan == pytest.approx(3e9)
        assert figures.tokens_per_s * figures.makespan == pytest.approx(82e9)


def test_chunked_order_with_two_prefills_takes_the_pending_decodes_once() -> None:
    mix = Mix("two", TARGET.name, (Request("d0", QWEN, "decode", 1, 32),
                                    Request("p0", QWEN, "prefill", 96, 0),
                                    Request("p1", QWEN, "prefill", 32, 0),
                                    Request("d1", QWEN, "decode", 1, 32)))
    mp = mix_problem(mix, TARGET, 64)
    assert [p.prefix for p in sequential_parts(mp)] == ["d0", "p0-c0", "p0-c1", "p1", "d1"]
    assert [p.prefix for p in chunked_parts(mp)] == ["p0-c0", "d0", "d1", "p0-c1", "p1"]


def test_percentiles_are_nearest_rank() -> None:
    assert percentile([], 50) is None
    assert percentile([40, 10, 30, 20], 50) == 20
    assert percentile(list(range(1, 101)), 99) == 99
    assert percentile([5, 7], 99) == 7


def test_the_text_tables_show_every_policy_and_the_late_requests(report) -> None:
    from schedsearch.commands.mix import format_tables

    lines = format_tables(report).splitlines()
    assert [line.split()[0] for line in lines[1:4]] == list(POLICIES)
    late = next(line for line in lines if line.startswith("d1"))
    assert late.count("(late)") == 3
    assert str(report.figures["searched"].makespan) in lines[3]


def test_the_kernel_policies_are_the_floor_of_the_searched_one(wall_never_binds) -> None:
    """On a target whose events cost more than its launches, every fused candidate pays
    more than it saves: ``searched`` keeps a kernel policy's own run and is never longer
    than either (the two prefill-less decodes: sequential and chunked are one run)."""
    import copy
    import dataclasses

    costs = copy.deepcopy(TARGET.costs)
    costs["overheads"]["event_ns"] = 100 * costs["overheads"]["launch_ns"]
    dear = dataclasses.replace(TARGET, costs=costs)
    mix = Mix("dear-events", TARGET.name, (Request("d0", QWEN, "decode", 1, 16),
                                           Request("d1", QWEN, "decode", 1, 16)))
    report = serve(mix, dear, SolveOptions(time_limit=0.05, reproducible=True))
    figures = report.figures
    assert figures["searched"].makespan <= min(figures["sequential"].makespan,
                                               figures["chunked"].makespan)
    assert "policy itself" in figures["searched"].note.split(" (tried")[0]
    assert figures["searched"].launches == figures["sequential"].launches == 28
    assert figures["searched"].legal
