"""``schedsearch mix`` with deadlines: refused naming the requests when they cannot all be
met, met by the searched policy where the kernel policies miss them, soft deadlines,
the ``--json`` shape, and ``--time-limit`` as the budget of the whole command.

The mixes are small (a 16-token prefill, decodes of 16 past: 1,591 ops) and every
assertion holds at any speed: the deadline pass that starts the per-request search is
not cut by time, and the window search only improves on it."""

from __future__ import annotations

import json

import pytest

from checker.cli import main as schedcheck
from models.mix import Mix, Request
from models.targets import load_target
from schedsearch import cli
from schedsearch.engine.deadlines import search_objectives
from schedsearch.engine.search import solve
from schedsearch.mix.policies import KERNEL_SHARE
from schedsearch.mix.serve import serve
from schedsearch.paths import SolveOptions

TARGET = load_target("hexagon-v75")
QWEN = "qwen2.5-0.5b"


def _mix_file(tmp_path, d0: float, d1: float):
    path = tmp_path / "m.toml"
    path.write_text(f"""name = "deadlines"
target = "hexagon-v75"
[[requests]]
name = "p0"
model = "{QWEN}"
phase = "prefill"
tokens = 16
[[requests]]
name = "d0"
model = "{QWEN}"
phase = "decode"
past = 16
deadline_us = {d0}
[[requests]]
name = "d1"
model = "{QWEN}"
phase = "decode"
past = 16
deadline_us = {d1}
""")
    return path


def test_deadlines_that_cannot_all_be_met_are_refused_naming_the_requests(
        tmp_path, capsys, wall_never_binds) -> None:
    """Each decode alone ends in about 560 us; the two together stream twice the DDR
    traffic, more than 800 us of it."""
    out = tmp_path / "s.json"
    argv = ["mix", str(_mix_file(tmp_path, 800, 800)), "--json", "-o", str(out),
            "--time-limit", "0.05", "--reproducible"]
    assert cli.main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert "INFEASIBLE" in line and "the deadlines of d0, d1 cannot all be met" in line
    assert "p0" not in line
    assert not out.exists()


def test_only_the_searched_policy_meets_the_deadlines(tmp_path, capsys,
                                                      wall_never_binds) -> None:
    """Both kernel policies run the 16-token prefill first (one chunk), so neither decode
    can end by 700 or 1,200 us; the searched policy serves the decodes first."""
    out = tmp_path / "s.json"
    argv = ["mix", str(_mix_file(tmp_path, 700, 1200)), "--json", "-o", str(out),
            "--time-limit", "0.1", "--reproducible"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    document = json.loads(captured.out)
    assert list(document) == ["policies"]
    assert list(document["policies"]) == ["sequential", "chunked", "searched"]
    for policy in document["policies"].values():
        assert isinstance(policy["makespan"], int)
        assert list(policy["requests"]) == ["p0", "d0", "d1"]
        for request in policy["requests"].values():
            assert set(request) == {"end", "deadline_met"}
            assert isinstance(request["end"], int)
        assert policy["requests"]["p0"]["deadline_met"] is None
    met = {name: [policy["requests"][r]["deadline_met"] for r in ("d0", "d1")]
           for name, policy in document["policies"].items()}
    assert met == {"sequential": [False, False], "chunked": [False, False],
                   "searched": [True, True]}
    searched = document["policies"]["searched"]
    assert searched["deadlines_met"] == searched["deadlines"] == 2
    assert "per-request search" in searched["note"]
    assert schedcheck(["verify", str(out)]) == 0
    assert json.loads(out.read_text())["makespan"] == searched["device_makespan"]


def test_soft_deadlines_keep_the_least_lateness_and_name_the_late_requests(
        tmp_path, capsys, wall_never_binds) -> None:
    argv = ["mix", str(_mix_file(tmp_path, 800, 800)), "--json", "--soft-deadlines",
            "--time-limit", "0.05", "--reproducible"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    searched = json.loads(captured.out)["policies"]["searched"]
    assert searched["legal"] is True
    late = [r for r in ("d0", "d1") if searched["requests"][r]["deadline_met"] is False]
    assert late  # they cannot both be met
    assert f"misses the deadline of {', '.join(late)}" in captured.err


def test_the_time_limit_is_the_budget_of_the_whole_command(wall_never_binds) -> None:
    """Every search the command runs is granted its part of ``--time-limit``'s one
    allotment: the distinct separate kernels :data:`KERNEL_SHARE` of it together, the
    fused searches the rest (a tightening round that does not run gives its part back).
    The limit is one whose every grant pays for a search (:mod:`schedsearch.mix.cuts`)."""
    limit = 100.0
    kernels: list[float] = []
    fused: list[float] = []

    def search(problem, target, grant):
        (kernels if len(problem.tasks) == 1 else fused).append(grant.time_limit)
        return solve(problem, target, time_limit=0.01)

    def objective_search(problem, target, objectives, starts, grant):
        fused.append(grant.time_limit)
        return search_objectives(problem, target, objectives, starts=starts, time_limit=0.01)

    mix = Mix("t", TARGET.name, (Request("p0", QWEN, "prefill", 16, 0),
                                 Request("d0", QWEN, "decode", 1, 16, deadline_ns=700_000)))
    report = serve(mix, TARGET, SolveOptions(time_limit=limit), search=search,
                   objective_search=objective_search)
    assert report.figures["searched"].requests["d0"].deadline_met
    assert len(kernels) == 28  # 14 tasks per request, each solved once for both policies
    assert sum(kernels) == pytest.approx(KERNEL_SHARE * limit)
    assert len(fused) >= 2  # the makespan search and the per-request search
    assert sum(kernels) + sum(fused) <= limit + 1e-9

