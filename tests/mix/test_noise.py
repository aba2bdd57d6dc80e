"""``schedsearch mix --simulate``: the searched schedule's program run under noise, each
request's end P50/P99 and the share of runs that met its deadline."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from models.cost import overheads
from models.mix import Mix, Request
from models.targets import load_target
from schedsearch import cli
from schedsearch.mix.noise import simulate_mix
from schedsearch.mix.policies import Goal
from schedsearch.mix.serve import serve
from schedsearch.paths import SolveOptions
from schedsearch.program.simulate import Jitter

TARGET = load_target("hexagon-v75")
QWEN = "qwen2.5-0.5b"
MIX = Mix("noisy", TARGET.name, (Request("p0", QWEN, "prefill", 16, 0),
                                 Request("d0", QWEN, "decode", 1, 16, deadline_ns=10**9),
                                 Request("d1", QWEN, "decode", 1, 16)))


@pytest.fixture(scope="module")
def searched():
    with pytest.MonkeyPatch.context() as patch:
        from tests.clock import wall_never_binds
        wall_never_binds(patch)
        report = serve(MIX, TARGET, SolveOptions(time_limit=0.05, reproducible=True),
                       goal=Goal(soft_deadlines=True))
    return report.runs["searched"]


def _device_ends(run) -> dict[str, int]:
    ends: dict[str, int] = {}
    for name, p in run.schedule.ops.items():
        request = run.mix_problem.part_of[run.schedule.problem.ops[name].task].request
        ends[request] = max(ends.get(request, 0), p.end)
    return ends


def test_without_noise_every_run_ends_each_request_no_sooner_than_its_schedule(
        searched) -> None:
    """The program keeps every order of the schedule and adds the launch and the events:
    no request ends before its device end plus the launch."""
    noise = simulate_mix(searched, 3, Jitter(0.0))
    device = _device_ends(searched)
    launch = overheads(TARGET).launch_ns
    assert list(noise.requests) == ["p0", "d0", "d1"]
    for name, r in noise.requests.items():
        assert r.end_p50 == r.end_p99 >= device[name] + launch
        assert r.end_p50 <= noise.makespan_p50
    assert noise.requests["d0"].met_share == 1.0  # a second
    assert noise.requests["d1"].met_share is None
    assert max(r.end_p99 for r in noise.requests.values()) == noise.makespan_p99


def test_the_deadline_share_counts_the_runs_that_met_it(searched) -> None:
    """A deadline at a request's median end under noise is met in about half the runs;
    the share is that of runs whose end is at most the deadline."""
    jitter = Jitter(0.2)
    first = simulate_mix(searched, 200, jitter, seed=4)
    median = int(first.requests["d1"].end_p50)
    tight = Mix(MIX.name, MIX.target, (*MIX.requests[:2],
                                       Request("d1", QWEN, "decode", 1, 16,
                                               deadline_ns=median)))
    run = replace(searched, mix_problem=replace(searched.mix_problem, mix=tight))
    again = simulate_mix(run, 200, jitter, seed=4)
    share = again.requests["d1"].met_share
    assert 0.4 <= share <= 0.6
    assert again.requests["d1"].end_p50 == first.requests["d1"].end_p50  # the same noise
    assert first.requests["d1"].end_p99 > first.requests["d1"].end_p50


def test_mix_simulate_cli_adds_the_simulation_to_the_json(tmp_path, capsys,
                                                          wall_never_binds) -> None:
    path = tmp_path / "m.toml"
    path.write_text("""name = "cli"
target = "hexagon-v75"
[[requests]]
name = "p0"
model = "qwen2.5-0.5b"
phase = "prefill"
tokens = 16
[[requests]]
name = "d0"
model = "qwen2.5-0.5b"
phase = "decode"
past = 16
deadline_us = 100000
""")
    argv = ["mix", str(path), "--json", "--time-limit", "0.05", "--reproducible",
            "--simulate", "20", "--jitter", "0.1,DMA=0.3", "--noise-seed", "7"]
    assert cli.main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    simulation = document["simulation"]
    assert simulation["policy"] == "searched" and simulation["runs"] == 20
    assert simulation["jitter"] == "0.1,DMA=0.3" and simulation["seed"] == 7
    assert list(simulation["requests"]) == ["p0", "d0"]
    d0 = simulation["requests"]["d0"]
    assert d0["end_p50"] <= d0["end_p99"] <= simulation["makespan_p99"]
    assert d0["deadline_met_share"] == 1.0
    assert simulation["requests"]["p0"]["deadline_met_share"] is None
    assert cli.main(argv) == 0  # the same noise again
    assert json.loads(capsys.readouterr().out)["simulation"] == simulation
    assert cli.main(["mix", str(path), "--time-limit", "0.05", "--reproducible",
                     "--simulate", "5"]) == 0
    out = capsys.readouterr().out
    assert "searched under noise: 5 runs, jitter 0.1, seed 0" in out
    assert "end P50" in out and "deadline met" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--jitter", "0.2"], "--jitter applies to --simulate runs only"),
    (["--simulate", "3", "--jitter", "NPU=0.1"], "NPU is not a lane kind"),
    (["--simulate", "0"], "must be from 1 to"),
])
def test_mix_refuses_bad_noise_options_before_searching(tmp_path, capsys, argv,
                                                        message) -> None:
    path = tmp_path / "m.toml"
    path.write_text('name = "x"\ntarget = "hexagon-v75"\n[[requests]]\nname = "d0"\n'
                    'model = "qwen2.5-0.5b"\nphase = "decode"\npast = 16\n')
    assert cli.main(["mix", str(path), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
