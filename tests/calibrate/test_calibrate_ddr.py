"""The DDR bandwidth from transfers that overlapped in a measured run."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.cost import cost_model
from models.formats import Schedule, Target
from schedsearch.calibrate.calibration import calibrate
from schedsearch.calibrate.ddr import (
    TransferSlice,
    fit_ddr,
    overlapping,
    streamed_bytes,
)
from schedsearch.calibrate.engines import model_figures
from schedsearch.calibrate.synthetic import (
    TRUTH_BANDWIDTH,
    synthetic_measurements,
    synthetic_run,
)
from schedsearch.calibrate.work import Engine, run_rows
from schedsearch.contention import fair_shares


@given(st.lists(st.floats(0.5, 100), min_size=1, max_size=6), st.floats(0.5, 300))
def test_fair_shares_give_the_bus_away_max_min_fairly(caps: list[float], bus: float) -> None:
    shares = fair_shares(caps, bus)
    assert math.isclose(sum(shares), min(bus, sum(caps)), rel_tol=1e-9)
    assert all(0 < share <= cap * (1 + 1e-12) for share, cap in zip(shares, caps, strict=True))
    # max-min fair: a stream below its cap gets at least as much as any other stream
    for share, cap in zip(shares, caps, strict=True):
        if share < cap * (1 - 1e-9):
            assert all(share >= other * (1 - 1e-9) for other in shares)


def _slices(schedule: Schedule, truth: Target, bandwidth: float,
            seed: int) -> list[TransferSlice]:
    """The transfers of a synthetic measured run, with the truth's caps and latencies."""
    run = synthetic_run(schedule, truth, bandwidth=bandwidth, seed=seed)
    model = cost_model(truth)
    slices = []
    for name, row in run_rows(run, model).items():
        if row.engine in (Engine.LOAD, Engine.STORE):
            latency, rate = model_figures(model, row.engine, row.key)
            slices.append(TransferSlice(name, *run.windows[name], row.work, float(rate or 1),
                                        latency))
    return slices


def test_a_bus_slower_than_two_transfers_is_recovered_within_its_interval(
        schedule: Schedule, truth: Target) -> None:
    covered = 0
    for seed in range(20):
        fit = fit_ddr(_slices(schedule, truth, TRUTH_BANDWIDTH, seed), 0.99)
        assert fit is not None and fit.bandwidth is not None
        assert abs(fit.bandwidth - TRUTH_BANDWIDTH) < 0.1 * TRUTH_BANDWIDTH
        covered += fit.low <= TRUTH_BANDWIDTH <= fit.high
    assert covered >= 19


def test_a_bus_that_never_bound_gives_only_a_lower_bound(schedule: Schedule,
                                                         truth: Target) -> None:
    slices = _slices(schedule, truth, 1000.0, 0)
    fit = fit_ddr(slices, 0.99)
    assert fit is not None
    assert fit.bandwidth is None
    assert max(s.cap for s in slices) < fit.lower_bound < 1000  # the truth keeps the claim


def test_no_overlap_no_fit() -> None:
    alone = [TransferSlice("a", 0, 100, 1000, 20, 10), TransferSlice("b", 100, 200, 1000, 20, 10)]
    assert fit_ddr(alone, 0.99) is None


def test_several_runs_are_fitted_together_not_overlapped(v75: Target, schedule: Schedule,
                                                         truth: Target) -> None:
    """Two runs of one schedule: their clocks both start near 0, yet a transfer of one
    run never shares the bus with one of the other."""
    runs = [synthetic_run(schedule, truth, bandwidth=TRUTH_BANDWIDTH, seed=s) for s in (0, 1)]
    rows = synthetic_measurements(truth, seed=0)
    alone = [calibrate(v75, rows, [run], sources=["r"], output="o").report.ddr
             for run in runs]
    both = calibrate(v75, rows, runs, sources=["r"], output="o").report.ddr
    assert both is not None and all(ddr is not None for ddr in alone)
    assert both.slices == sum(ddr.slices for ddr in alone)
    assert both.parameter.low <= TRUTH_BANDWIDTH <= both.parameter.high


_windows = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 6), st.integers(0, 3),
                              st.sampled_from([10.0, 20.0, 40.0])), max_size=7)


def _transfers(drawn: list[tuple[int, int, int, float]]) -> list[TransferSlice]:
    return [TransferSlice(str(i), start, start + length, 1.0, cap, latency)
            for i, (start, length, latency, cap) in enumerate(drawn)]


@given(_windows)
def test_overlapping_agrees_with_all_pairs(drawn: list) -> None:
    slices = _transfers(drawn)
    streaming = [s for s in slices if s.streaming[1] > s.streaming[0]]
    pairs = [s.name for s in streaming
             if any(o is not s and o.streaming[0] < s.streaming[1]
                    and s.streaming[0] < o.streaming[1] for o in streaming)]
    assert [s.name for s in overlapping(slices)] == pairs


@given(_windows, st.floats(5, 100))
def test_streamed_bytes_integrate_the_fair_shares_tick_by_tick(drawn: list,
                                                               bus: float) -> None:
    """Integer windows: on each tick the streaming set is fixed, so summing fair shares
    tick by tick is an independent account of the bytes each transfer moves."""
    slices = _transfers(drawn)
    expected = [0.0] * len(slices)
    for tick in range(30):
        active = [i for i, s in enumerate(slices)
                  if s.streaming[0] <= tick and tick + 1 <= s.streaming[1]]
        for i, share in zip(active, fair_shares([slices[i].cap for i in active], bus),
                            strict=True):
            expected[i] += share
    assert streamed_bytes(slices, bus) == pytest.approx(expected, abs=1e-9)
