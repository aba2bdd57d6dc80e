"""Scoring a schedule: makespan, busy and overlap shares, memory peaks, DDR bytes."""

from __future__ import annotations

import pytest

from models.cost import evaluate
from models.formats import (
    Access,
    Buffer,
    BufferPlacement,
    Memory,
    Mode,
    Op,
    OpPlacement,
    Problem,
    Schedule,
    Target,
    Task,
    Tensor,
)

TARGET = Target("t", lanes={"DMA": 2, "HMX": 1, "HVX": 4}, budgets={},
                memories={"VTCM": Memory(1 << 20, 2048)})


def schedule() -> Schedule:
    """ld [0,10) on DMA, mm [10,30) on HMX, v [5,25) on 2 HVX, st [30,40) on DMA."""
    a = Access(buffer="a", value="x")
    problem = Problem(
        "p", {"X": Tensor((4, 8), "f16", "input"), "Y": Tensor((4, 8), "f32", "output")},
        {"t": Task("x")}, {"a": Buffer("VTCM", 3000, 2048), "b": Buffer("VTCM", 100)},
        {"ld": Op("t", (Mode(10, {"DMA": 1}),), reads=(Access(tensor="X", box=((0, 4), (0, 8))),),
                  writes=(a,)),
         "mm": Op("t", (Mode(20, {"HMX": 1}),), reads=(a,)),
         "v": Op("t", (Mode(99, {"HVX": 1}), Mode(20, {"HVX": 2}))),
         "st": Op("t", (Mode(10, {"DMA": 1}),),
                  writes=(Access(tensor="Y", box=((0, 2), (0, 8))),))})
    ops = {"ld": OpPlacement(0, 0, 10, {"DMA": (0,)}), "mm": OpPlacement(0, 10, 30, {"HMX": (0,)}),
           "v": OpPlacement(1, 5, 25, {"HVX": (0, 1)}), "st": OpPlacement(0, 30, 40, {"DMA": (1,)})}
    buffers = {"a": BufferPlacement(0, 0, 30), "b": BufferPlacement(4096, 20, 40)}
    return Schedule(TARGET, problem, ops, buffers, 40)


def test_figures_of_a_small_schedule() -> None:
    result = evaluate(schedule())
    assert result.makespan == 40
    assert result.busy_share == pytest.approx({"DMA": 20 / 80, "HMX": 20 / 40,
                                               "HVX": 40 / 160})
    # two kinds busy: [5,10) DMA+HVX, [10,25) HMX+HVX -> 20 of 40
    assert result.overlap_share == pytest.approx(0.5)
    assert result.peak_bytes == {"VTCM": 3100}  # both live during [20, 30)
    assert result.extent_bytes == {"VTCM": 4196}
    assert result.ddr_bytes == 4 * 8 * 2 + 2 * 8 * 4
    assert result.as_dict()["busy_share"]["HMX"] == pytest.approx(0.5)


def test_touching_intervals_do_not_overlap() -> None:
    s = schedule()
    ops = dict(s.ops, v=OpPlacement(1, 30, 50, {"HVX": (0, 1)}))
    result = evaluate(Schedule(s.target, s.problem, ops, s.buffers, 50))
    assert result.makespan == 50
    assert result.overlap_share == pytest.approx(10 / 50)  # only st with v in [30, 40)


def test_empty_schedule() -> None:
    s = schedule()
    empty = Problem("p", {}, {}, {}, {})
    result = evaluate(Schedule(s.target, empty, {}, {}, 0))
    assert (result.makespan, result.overlap_share, result.ddr_bytes) == (0, 0.0, 0)
    assert result.peak_bytes == {"VTCM": 0}
