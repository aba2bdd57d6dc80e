"""bench_limits runs what it says: real commands, a mix the mix reader accepts."""

from __future__ import annotations

import tomllib

from benchmarks import bench_limits
from models.mix import mix_from_dict
from schedsearch.cli import COMMANDS


def test_every_timed_command_is_a_schedsearch_command() -> None:
    assert set(bench_limits.COMMANDS) <= set(COMMANDS)
    for command, argv in bench_limits.COMMANDS.items():
        assert argv[0] == command


def test_the_timed_mix_is_a_valid_mix_of_one_prefill_and_decodes() -> None:
    mix = mix_from_dict(tomllib.loads(bench_limits.MIX), source="bench_limits.MIX")
    phases = [request.phase for request in mix.requests]
    assert phases[0] == "prefill" and set(phases[1:]) == {"decode"} and len(phases) == 5


def test_the_goal_is_the_issue_s_one_point_one_times_the_limit_plus_a_second() -> None:
    assert bench_limits.goal(10.0) == 12.0 and bench_limits.goal(0.5) == 1.55
