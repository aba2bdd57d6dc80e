"""The critical path of a schedule and its split into compute, movement, conversion, wait."""

from __future__ import annotations

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
from schedsearch.chains.critical import critical_path, split

TARGET = Target("t", lanes={"DMA": 1, "HVX": 1}, budgets={},
                memories={"V": Memory(1024, 1)})


def _schedule() -> Schedule:
    """ld (DMA, reads X) -> norm (HVX) -> st (DMA, writes Y); cv (relayout task) on HVX
    after st; a short unrelated op on HVX early. Hand-placed with a 5-tick gap before cv."""
    tensors = {"X": Tensor((4,), "f16", "input"), "Y": Tensor((4,), "f16", "output"),
               "Z": Tensor((4,), "f16", "output")}
    tasks = {"r": Task("rmsnorm"), "c": Task("relayout"), "o": Task("rmsnorm")}
    buffers = {"b": Buffer("V", 8), "y": Buffer("V", 8)}
    ops = {
        "ld": Op("r", (Mode(10, {"DMA": 1}),), reads=(Access(tensor="X", box=((0, 4),)),),
                 writes=(Access(buffer="b", value="x"),)),
        "norm": Op("r", (Mode(20, {"HVX": 1}),), reads=(Access(buffer="b", value="x"),),
                   writes=(Access(buffer="y", value="y"),)),
        "st": Op("r", (Mode(10, {"DMA": 1}),), reads=(Access(buffer="y", value="y"),),
                 writes=(Access(tensor="Y", box=((0, 4),)),)),
        "cv": Op("c", (Mode(7, {"HVX": 1}),), reads=(Access(tensor="Y", box=((0, 4),)),),
                 writes=(Access(tensor="Z", box=((0, 4),)),)),
        "other": Op("o", (Mode(3, {"HVX": 1}),)),
    }
    problem = Problem("p", tensors, tasks, buffers, ops,
                      after=(("ld", "norm"), ("norm", "st"), ("st", "cv")))
    placed = {"ld": OpPlacement(0, 0, 10, {"DMA": (0,)}),
              "norm": OpPlacement(0, 10, 30, {"HVX": (0,)}),
              "st": OpPlacement(0, 30, 40, {"DMA": (0,)}),
              "cv": OpPlacement(0, 45, 52, {"HVX": (0,)}),
              "other": OpPlacement(0, 0, 3, {"HVX": (0,)})}
    buffers_placed = {"b": BufferPlacement(0, 0, 30), "y": BufferPlacement(8, 10, 40)}
    return Schedule(TARGET, problem, placed, buffers_placed, 52)


def test_the_path_follows_dependencies_back_from_the_last_end() -> None:
    assert critical_path(_schedule()) == ("ld", "norm", "st", "cv")


def test_split_by_part_hand_computed() -> None:
    parts = split(_schedule(), sync=100, intermediates=frozenset({"Y"}))
    assert (parts.compute, parts.movement, parts.conversion, parts.wait) == (20, 20, 7, 5)
    assert parts.intermediate == 10  # only the store writes Y; the load reads X
    assert parts.device == 52
    assert parts.total == 152


def test_parts_tile_the_makespan_of_a_solved_schedule(chain_schedule: Schedule) -> None:
    parts = split(chain_schedule)
    assert parts.device == chain_schedule.makespan
    path = critical_path(chain_schedule)
    ends = [chain_schedule.ops[n].end for n in path]
    starts = [chain_schedule.ops[n].start for n in path]
    assert all(end <= start for end, start in zip(ends, starts[1:], strict=False))
