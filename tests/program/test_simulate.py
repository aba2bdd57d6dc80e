"""Simulation: the noise, the fluid bus, hand-computed runs, and every run keeping every
order its plan states (queues, waits with their event cost, barriers, launches)."""

from __future__ import annotations

import copy
import dataclasses
import json
import math

import numpy as np
import pytest

from models.cost import Overheads, overheads
from models.errors import InputError
from models.targets import load_target
from schedsearch.cli import main
from schedsearch.paths import SolveOptions
from schedsearch.program import program_from_dict, program_to_dict
from schedsearch.program.policies import Policy, plan_policy, program_plan
from schedsearch.program.simulate import Jitter, fluid_rates, noise, run_plan
from schedsearch.program.stats import summarise

from .cases import read, schedule_doc, write
from .examples import searched
from .programs import lowered

COSTS = Overheads(launch_ns=100, event_ns=5, barrier_ns=7, dispatch_ns=3)


def tiny_program():
    """a (DMA.0) writes x over [0, 10); b (HMX.0) reads it over [20, 30): one wait."""
    doc = schedule_doc({"a": ("DMA.0", 0, 10, [], [write("x", "v")]),
                        "b": ("HMX.0", 20, 30, [read("x", "v")], [])},
                       buffers={"x": (64, 0, 0, 30)})
    return program_from_dict(lowered(doc))


@pytest.mark.parametrize(("spec", "default", "kinds"), [
    ("0.1", 0.1, {}), ("HMX=0.1,DMA=0.3", 0.0, {"HMX": 0.1, "DMA": 0.3}),
    ("0.2, DMA=0", 0.2, {"DMA": 0.0})])
def test_jitter_spec(spec: str, default: float, kinds: dict[str, float]) -> None:
    jitter = Jitter.parse(spec)
    assert jitter.default == default and jitter.by_kind == kinds


@pytest.mark.parametrize("spec", ["", "x", "-0.1", "DMA=", "=0.1", "nan", "DMA=inf"])
def test_bad_jitter_spec_is_refused(spec: str) -> None:
    with pytest.raises(InputError, match="OPTION|CV"):
        Jitter.parse(spec)


def test_noise_has_the_modelled_duration_as_mean_and_the_asked_spread() -> None:
    z = noise(["a"], 200_000, seed=1)
    sigma2 = math.log1p(0.3 ** 2)
    factor = np.exp(math.sqrt(sigma2) * z["a"] - sigma2 / 2)
    assert factor.mean() == pytest.approx(1.0, abs=0.005)
    assert factor.std() == pytest.approx(0.3, abs=0.005)


def test_fluid_rates_share_the_bus_as_contention_does() -> None:
    """Two ops drawing 40 of 60 run at 60/80 = 0.75 (schedsearch/contention.py's example);
    one alone, or one drawing nothing, runs at 1."""
    draws = np.array([[40.0], [40.0], [0.0]])
    both = fluid_rates(np.array([[True, True, True]]), draws, np.array([60.0]))
    alone = fluid_rates(np.array([[True, False, True]]), draws, np.array([60.0]))
    assert both[0].tolist() == [0.75, 0.75, 1.0]
    assert alone[0, [0, 2]].tolist() == [1.0, 1.0]


def test_a_noiseless_run_by_hand() -> None:
    """launch 100, a runs 10, the event costs 5, b runs 10: makespan 125; DMA busy
    10 of 2 x 125; HMX waits 15 after the launch on its event: 15 of 3 units x 125."""
    planned = program_plan(tiny_program(), COSTS)
    runs = run_plan(planned.plan, noise(["a", "b"], 1, 0), 1, Jitter(0.0))
    assert runs.start[0].tolist() == [100.0, 115.0]
    assert runs.makespan.tolist() == [125.0]
    result = summarise(planned, runs)
    assert result.busy_share["DMA"] == pytest.approx(10 / 250)
    assert result.event_wait_share == pytest.approx(15 / 375)


def test_contention_stretches_two_loads_that_share_the_bus() -> None:
    doc = schedule_doc({"a": ("DMA.0", 0, 100, [], []), "b": ("DMA.1", 0, 100, [], [])})
    doc["target"]["budgets"] = {"BW": 60}
    for op in ("a", "b"):
        doc["problem"]["ops"][op]["modes"][0]["budgets"] = {"BW": 40}
    planned = program_plan(program_from_dict(lowered(doc)), Overheads(0, 0, 0, 0))
    runs = run_plan(planned.plan, {}, 1, Jitter(0.0))
    assert runs.end[0].tolist() == pytest.approx([100 / 0.75, 100 / 0.75])


def _orders_kept(plan, runs) -> None:
    gap = runs.start[:, plan.dst] - (runs.end[:, plan.src] + plan.delay)
    assert gap.min() >= -1e-6
    assert (runs.start >= plan.release - 1e-6).all()
    assert (runs.end >= runs.start).all()


def _units_never_oversubscribed(plan, runs) -> None:
    for r in range(runs.start.shape[0]):
        events = sorted([(t, 1, i) for i, t in enumerate(runs.start[r])] +
                        [(t, 0, i) for i, t in enumerate(runs.end[r])])
        held = np.zeros(len(plan.lanes), dtype=np.int64)
        for _, starting, i in events:
            held += plan.units[i] if starting else -plan.units[i]
            assert (held <= plan.unit_counts).all()


@pytest.mark.parametrize("policy", list(Policy))
def test_noisy_runs_keep_every_order_of_the_plan(policy: Policy) -> None:
    _, lowering = searched("rmsnorm-gemm-chain-v75")
    planned = plan_policy(lowering.program, policy, SolveOptions(time_limit=0.3))
    runs = run_plan(planned.plan, noise(list(lowering.program.schedule.ops), 20, 3), 20,
                    Jitter.parse("0.3,DMA=0.5"))
    assert not np.isnan(runs.end).any()
    _orders_kept(planned.plan, runs)
    _units_never_oversubscribed(planned.plan, runs)
    if policy is Policy.PROGRAM:
        program = lowering.program
        index = {n: i for i, n in enumerate(planned.plan.names)}
        for before, after in program.wait_edges():
            assert (runs.start[:, index[after]] >= runs.end[:, index[before]]).all()


def test_simulate_cli_json(tmp_path, capsys) -> None:
    _, lowering = searched("rmsnorm-gemm-chain-v75")
    path = tmp_path / "p.json"
    path.write_text(json.dumps(program_to_dict(lowering.program)))
    assert main(["simulate", str(path), "--runs", "30", "--jitter", "0.2", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["runs"] == 30 and figures["jitter"] == "0.2"
    (result,) = figures["policies"]
    assert result["policy"] == "program"
    assert result["p50"] <= result["p95"] <= result["p99"]
    assert set(result["busy_share"]) == set(lowering.program.schedule.target.lanes)


def test_simulate_cli_refuses_a_bad_jitter(tmp_path, capsys) -> None:
    assert main(["simulate", str(tmp_path / "p.json"), "--jitter", "fast"]) == 2
    assert "--jitter" in capsys.readouterr().err


def test_a_target_without_dispatch_cost_is_read_with_the_event_cost() -> None:
    target = load_target("hexagon-v75")
    costs = copy.deepcopy(target.costs)
    del costs["overheads"]["dispatch_ns"]
    read = overheads(dataclasses.replace(target, costs=costs))
    assert (read.dispatch_ns, read.event_ns) == (500, 500)
    assert overheads(target).dispatch_ns == 1000


def _tiny_file(tmp_path, target_costs: dict | None = None) -> str:
    document = program_to_dict(tiny_program())
    if target_costs is not None:
        document["schedule"]["target"]["costs"] = target_costs
    path = tmp_path / "p.json"
    path.write_text(json.dumps(document))
    return str(path)


@pytest.mark.parametrize(("option", "words"), [
    (["--seed", "-1"], "--seed: must be from 0 to 9223372036854775807"),
    (["--seed", str(10**23)], "--seed: must be from 0 to 9223372036854775807"),
    (["--runs", "100000000000"], "--runs: must be from 1 to 1,000,000"),
    (["--runs", "1e9"], "--runs: not a whole number: '1e9'"),
    (["--jitter", "FOO=0.1"], "FOO is not a lane kind of target"),
    (["--jitter", "HMX=x"], "--jitter: 'HMX=x' is not CV or KIND=CV"),
    (["--time-limit", "1e9"], "--time-limit: must be at most")])
def test_simulate_refuses_a_bad_option_in_one_line(
        tmp_path, capsys, option: list[str], words: str) -> None:
    assert main(["simulate", _tiny_file(tmp_path), *option]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and words in error, error
    assert "_runs" not in error and "Traceback" not in error


def test_simulate_runs_a_target_without_costs_with_no_overheads_and_says_so(
        tmp_path, capsys) -> None:
    """``costs`` is optional in the format and simulation needs only the overheads."""
    assert main(["simulate", _tiny_file(tmp_path, {}), "--runs", "20", "--jitter", "0",
                 "--json"]) == 0
    captured = capsys.readouterr()
    assert "has no costs: launch, event, barrier and dispatch overheads taken as 0" in \
        captured.err
    (result,) = json.loads(captured.out)["policies"]
    assert result["p50"] == 10 + 10  # a, then b as soon as a ends: no launch, no event


def test_simulate_needs_only_the_overheads_of_the_costs(tmp_path, capsys) -> None:
    costs = {"overheads": {"launch_ns": 100, "event_ns": 5, "barrier_ns": 7}}
    assert main(["simulate", _tiny_file(tmp_path, costs), "--runs", "20", "--jitter", "0",
                 "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["policies"]
    assert result["p50"] == 100 + 10 + 5 + 10  # launch, a, event, b


def test_simulate_refuses_more_op_runs_than_it_can_hold(tmp_path, capsys) -> None:
    _, lowering = searched("rmsnorm-gemm-chain-v75")
    path = tmp_path / "p.json"
    path.write_text(json.dumps(program_to_dict(lowering.program)))
    assert main(["simulate", str(path), "--runs", "1000000"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "is more than 20,000,000 op runs; at most" in error


def test_simulate_plot_says_what_it_wrote_with_the_time_unit(tmp_path, capsys,
                                                            monkeypatch) -> None:
    labels: list[str] = []
    from matplotlib.axes import Axes

    real = Axes.set_xlabel
    monkeypatch.setattr(Axes, "set_xlabel",
                        lambda ax, label, *a, **k: labels.append(label) or real(ax, label))
    picture = tmp_path / "cdf.png"
    assert main(["simulate", _tiny_file(tmp_path), "--runs", "20", "--plot",
                 str(picture)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {picture}"
    assert picture.stat().st_size > 0 and labels == ["makespan (ns)"]


def test_simulate_counts_one_run_in_the_singular(tmp_path, capsys) -> None:
    assert main(["simulate", _tiny_file(tmp_path), "--runs", "1", "--jitter", "0"]) == 0
    out = capsys.readouterr().out
    assert "; 1 run, jitter" in out and "1 runs" not in out


@pytest.mark.parametrize(("draws", "capacity"), [
    ([10.0, 50.0, 0.0], 40.0), ([30.0, 30.0, 30.0], 60.0), ([5.0, 20.0, 40.0], 100.0),
    ([70.0, 1.0, 2.0], 30.0)])
def test_fluid_rates_are_contention_s_fair_shares(draws: list[float],
                                                 capacity: float) -> None:
    """The simulator's bus is :func:`schedsearch.contention.fair_shares`, vectorised: a
    light stream keeps its rate beside a heavy one (10 of 40 beside 50: rates 1 and 0.6),
    every subset of running nodes gives each its share over its draw."""
    from itertools import product

    from schedsearch.contention import fair_shares

    matrix = np.array([[d] for d in draws])
    masks = np.array(list(product([False, True], repeat=len(draws))))
    rates = fluid_rates(masks, matrix, np.array([capacity]))
    for mask, rate in zip(masks, rates, strict=True):
        drawing = [i for i in range(len(draws)) if mask[i] and draws[i] > 0]
        shares = fair_shares([draws[i] for i in drawing], capacity)
        assert [rate[i] for i in drawing] == pytest.approx(
            [share / draws[i] for i, share in zip(drawing, shares, strict=True)])


@pytest.mark.parametrize("policy", [Policy.PROGRAM, Policy.DYNAMIC])
def test_runs_do_not_depend_on_the_order_of_the_plan_s_nodes(policy: Policy) -> None:
    """Each step looks at a band of the nodes (``band_order``): the same plan with its
    nodes in the reverse order runs the same, node by node."""
    _, lowering = searched("rmsnorm-gemm-chain-v75")
    plan = plan_policy(lowering.program, policy, SolveOptions(time_limit=0.3)).plan
    n = len(plan.names)
    back = np.arange(n)[::-1]
    where = np.empty(n, np.int64)
    where[back] = np.arange(n)
    reversed_plan = dataclasses.replace(
        plan, names=[plan.names[i] for i in back], kind=[plan.kind[i] for i in back],
        duration=plan.duration[back], release=plan.release[back], src=where[plan.src],
        dst=where[plan.dst], draws=plan.draws[back], units=plan.units[back],
        priority=None if plan.priority is None else plan.priority[back])
    if plan.ops != n:  # virtual nodes stay after the ops
        pytest.skip("the plan has virtual nodes")
    z = noise(plan.names[:plan.ops], 30, 5)
    jitter = Jitter.parse("0.3,DMA=0.5")
    ahead, behind = run_plan(plan, z, 30, jitter), run_plan(reversed_plan, z, 30, jitter)
    np.testing.assert_array_equal(ahead.start, behind.start[:, where])
    np.testing.assert_array_equal(ahead.end, behind.end[:, where])
