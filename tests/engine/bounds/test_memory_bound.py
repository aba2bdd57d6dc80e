"""The memory part of the lower bound: exact on hand cases, never above a legal makespan."""

from __future__ import annotations

from hypothesis import given, settings

from models.formats import (
    Access,
    Buffer,
    Memory,
    Mode,
    Op,
    Problem,
    Target,
    Task,
    Tensor,
    problem_from_dict,
    target_from_dict,
)
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.bounds.memory import (
    exclusion_bound,
    exclusion_sets,
    memory_volumes,
    necessary_edges,
    shortest_lifetimes,
    usable_by_op,
)
from schedsearch.engine.search import solve_report
from tests.engine.problems import feasible_problems, verify
from tests.fuzz._budget import examples
from tests.fuzz.strategies import feasible_instances


def target(capacity: int, alignment: int = 1) -> Target:
    return Target("t", lanes={"DMA": 2, "MX": 1, "VX": 4}, budgets={},
                  memories={"M": Memory(capacity, alignment)})


def writer(buffer: str, value: str, duration: int, lane: str = "VX") -> Op:
    return Op("t", (Mode(duration, {lane: 1}),), writes=(Access(buffer=buffer, value=value),))


def reader(buffer: str, value: str, duration: int, lane: str = "VX") -> Op:
    return Op("t", (Mode(duration, {lane: 1}),), reads=(Access(buffer=buffer, value=value),))


def problem(buffers: dict[str, int], ops: dict[str, Op]) -> Problem:
    return Problem("p", {}, {"t": Task("x")}, {n: Buffer("M", s) for n, s in buffers.items()},
                   ops)


def test_two_buffers_that_fill_memory_cannot_overlap() -> None:
    ops = {"a": writer("x", "x1", 10), "b": writer("y", "y1", 30)}
    bound = lower_bound(problem({"x": 100, "y": 100}, ops), target(100))
    assert bound.parts["memory:M"] == 40  # the optimum: one after the other
    assert bound.value == 40


def test_a_lifetime_runs_from_the_writer_to_the_end_of_its_reader() -> None:
    ops = {"w1": writer("x", "v", 10, "DMA"), "r1": reader("x", "v", 20, "MX"),
           "w2": writer("y", "v", 10, "DMA"), "r2": reader("y", "v", 20, "VX")}
    p = problem({"x": 100, "y": 100}, ops)
    assert shortest_lifetimes(p, target(100)) == {"x": 30, "y": 30}
    assert lower_bound(p, target(100)).parts["memory:M"] == 60  # the optimum


def test_accessors_that_share_one_unit_lengthen_the_lifetime() -> None:
    ops = {f"r{i}": reader("x", "v", 10, "MX") for i in range(3)}
    ops["w"] = writer("y", "y1", 30)
    p = problem({"x": 100, "y": 100}, ops)
    assert shortest_lifetimes(p, target(100))["x"] == 30  # three reads on one MX unit
    assert lower_bound(p, target(100)).parts["memory:M"] == 60


def test_padding_to_the_alignment_counts() -> None:
    # 40-byte buffers at offsets that are multiples of 64 in 128 bytes: two at a time.
    ops = {f"w{i}": writer(f"b{i}", "v", 10) for i in range(4)}
    p = problem({f"b{i}": 40 for i in range(4)}, ops)
    volume, = memory_volumes(p, target(128, 64))
    assert (volume.volume, volume.space) == (4 * 64 * 10, 128)
    assert lower_bound(p, target(128, 64)).parts["memory:M"] == 20  # the optimum


def test_a_value_with_two_writers_orders_nothing() -> None:
    ops = {"w1": writer("x", "v", 10), "w2": writer("x", "v", 10), "r": reader("x", "v", 5),
           "w3": writer("y", "u", 10), "s": reader("y", "u", 5)}
    edges = necessary_edges(problem({"x": 8, "y": 8}, ops))
    assert edges == {("w3", "s")}  # either writer may be the one r sees


def test_a_write_without_a_value_may_be_the_one_a_read_sees() -> None:
    # FORMATS.md compares values only where both have one: r may run after w0 (no
    # value) and before w1 (the value r names), so w1 -> r is not forced.
    ops = {"w0": Op("t", (Mode(10, {"VX": 1}),), writes=(Access(buffer="x"),)),
           "r": reader("x", "v", 5), "w1": writer("x", "v", 10)}
    assert necessary_edges(problem({"x": 8}, ops)) == set()


def test_a_ddr_read_waits_for_every_write_of_its_region() -> None:
    ops = {"st0": Op("t", (Mode(5),), writes=(Access(tensor="H", box=((0, 2),)),)),
           "st1": Op("t", (Mode(5),), writes=(Access(tensor="H", box=((2, 4),)),)),
           "ld": Op("t", (Mode(5),), reads=(Access(tensor="H", box=((1, 3),)),)),
           "in": Op("t", (Mode(5),), reads=(Access(tensor="X", box=((0, 1),)),))}
    p = Problem("p", {"H": Tensor((4,), "i8", "temp"), "X": Tensor((1,), "i8", "input")},
                {"t": Task("x")}, {}, ops)
    assert necessary_edges(p) == {("st0", "ld"), ("st1", "ld")}


def test_ops_that_cannot_share_memory_with_the_big_ones_run_outside_them() -> None:
    # Two computes holding 60 of 100 bytes each can never overlap, nor can either
    # overlap a transfer holding 50; the four transfers run two at a time on two DMA
    # units. The optimum: 20 for the computes, then 20 for the transfers.
    ops = {f"c{i}": writer(f"c{i}", "v", 10) for i in range(2)}
    ops |= {f"d{i}": writer(f"d{i}", "v", 10, "DMA") for i in range(4)}
    sizes = {"c0": 60, "c1": 60, "d0": 50, "d1": 50, "d2": 50, "d3": 50}
    bound = lower_bound(problem(sizes, ops), target(100))
    assert bound.parts["memory:M"] == 32  # (2 * 60 * 10 + 4 * 50 * 10) / 100
    assert bound.parts["exclusion:M"] == 40
    assert bound.value == 40


def test_a_smaller_op_of_more_than_half_does_not_spoil_the_exclusion_part() -> None:
    # Two computes hold 60 of 100 bytes, a third 55, two transfers 45 each on one DMA
    # unit. All three computes are pairwise apart, but a transfer fits beside the 55: with
    # all three as X no transfer is apart from X, so X drawn from the 60s alone is better
    # (the 55 and both transfers then run outside them). The optimum: 20 for the 60s, then
    # the 55 beside one transfer, then the other.
    one_dma = Target("t", lanes={"DMA": 1, "VX": 4}, budgets={},
                     memories={"M": Memory(100, 1)})
    ops = {"c0": writer("c0", "v", 10), "c1": writer("c1", "v", 10),
           "m": writer("m", "v", 10), "d0": writer("d0", "v", 10, "DMA"),
           "d1": writer("d1", "v", 10, "DMA")}
    p = problem({"c0": 60, "c1": 60, "m": 55, "d0": 45, "d1": 45}, ops)
    greedy = exclusion_sets(p, one_dma, "M", necessary_edges(p))
    assert sorted(greedy.chosen) == ["c0", "c1", "m"] and greedy.rest == []
    assert exclusion_bound(one_dma, greedy, usable_by_op(p, one_dma)) == 30
    bound = lower_bound(p, one_dma)
    assert bound.parts["exclusion:M"] == 40
    report = solve_report(p, one_dma, time_limit=5.0, workers=1, placement=False)
    assert not verify(report.schedule)
    assert report.schedule.makespan == bound.value  # the optimum


@settings(max_examples=examples(0.2))
@given(feasible_problems())
def test_the_memory_part_never_exceeds_the_exact_optimum(case: tuple[Problem, Target]
                                                          ) -> None:
    """Against CP-SAT's whole model with addresses, solved to optimality where it can."""
    p, t = case
    report = solve_report(p, t, time_limit=1.0, workers=1, placement=False)
    assert not verify(report.schedule)
    bound = lower_bound(p, t)
    optimal = (report.schedule.meta or {}).get("status") == "OPTIMAL"
    assert bound.value <= report.schedule.makespan, (bound.parts, optimal,
                                                     report.schedule.makespan)


@given(feasible_instances(max_ops=8))
def test_no_part_exceeds_a_legal_witness(document: dict) -> None:
    """Random accesses (byte ranges, several writers, DDR temps): the bound stays below
    the makespan of a schedule known to be legal."""
    t = target_from_dict(document["target"])
    p = problem_from_dict(document["problem"], "<witness>", t)
    bound = lower_bound(p, t)
    assert bound.value <= document["makespan"], (bound.parts, document["makespan"])
