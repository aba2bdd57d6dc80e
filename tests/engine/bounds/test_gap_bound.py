"""The ``gaps:M`` part: exact where norms and their transfer pairs alternate, never above a
legal makespan, and its memory rows' dual-feasible function sound."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from models.formats import Access, Buffer, Memory, Mode, Op, Problem, Target, Task, Tensor
from schedsearch.engine.bounds.gap import Pattern, Piece, _dff, gap_bound, pattern_length
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.bounds.memory import (
    exclusion_sets,
    necessary_edges,
    reach_bits,
    usable_by_op,
)
from schedsearch.engine.search import solve_report
from tests.engine.problems import verify
from tests.fuzz._budget import examples

FAST, SLOW = Mode(10, {"DMA": 1}, {"BW": 40}), Mode(20, {"DMA": 1}, {"BW": 20})


def target(capacity: int = 100) -> Target:
    return Target("t", lanes={"DMA": 2, "VX": 4}, budgets={"BW": 60},
                  memories={"M": Memory(capacity, 1)})


def norm_blocks(blocks: int, size: int = 35, copies: int = 0, norm: int = 10,
                chained: bool = False, last: int = 0) -> Problem:
    """An RMSNorm in ``blocks`` blocks (load, norm, store; a weight of 10 bytes loaded once)
    and ``copies`` copy blocks (load, store) of their own data, or (``chained``) of the
    norm's output through DDR. With ``size`` 35 of 100 bytes, a norm holds 80 and no other
    block's buffer fits beside it. ``last``: the last block's size (``size`` if 0)."""
    ops = {"ldW": Op("n", (Mode(5, {"DMA": 1}, {"BW": 20}),),
                     reads=(Access(tensor="W", box=((0, 1),)),),
                     writes=(Access(buffer="W", value="w"),))}
    buffers = {"W": Buffer("M", 10)}
    after = []
    for i in range(blocks):
        bytes_ = last if last and i == blocks - 1 else size
        buffers |= {f"in{i}": Buffer("M", bytes_), f"out{i}": Buffer("M", bytes_)}
        ops[f"ld{i}"] = Op("n", (FAST, SLOW), reads=(Access(tensor="X", box=((i, i + 1),)),),
                           writes=(Access(buffer=f"in{i}", value=f"x{i}"),))
        ops[f"norm{i}"] = Op("n", (Mode(norm, {"VX": 1}),),
                             reads=(Access(buffer=f"in{i}", value=f"x{i}"),
                                    Access(buffer="W", value="w")),
                             writes=(Access(buffer=f"out{i}", value=f"y{i}"),))
        ops[f"st{i}"] = Op("n", (FAST, SLOW), reads=(Access(buffer=f"out{i}", value=f"y{i}"),),
                           writes=(Access(tensor="Y", box=((i, i + 1),)),))
        after.append(("ldW", f"norm{i}"))
    for i in range(copies):
        buffers[f"c{i}"] = Buffer("M", size)
        source = "Y" if chained else "S"
        ops[f"cld{i}"] = Op("c", (FAST, SLOW), reads=(Access(tensor=source, box=((i, i + 1),)),),
                            writes=(Access(buffer=f"c{i}", value=f"s{i}"),))
        ops[f"cst{i}"] = Op("c", (FAST, SLOW), reads=(Access(buffer=f"c{i}", value=f"s{i}"),),
                            writes=(Access(tensor="D", box=((i, i + 1),)),))
    tensors = {name: Tensor((rows,), "i8", role) for name, role, rows in
               (("X", "input", blocks), ("W", "input", 1),
                ("Y", "temp" if chained else "output", blocks),
                ("S", "input", copies), ("D", "output", copies)) if rows}
    return Problem("norm", tensors, {"n": Task("rmsnorm"), "c": Task("copy")}, buffers, ops,
                   tuple(after))


def test_norms_and_transfer_pairs_alternate() -> None:
    # Gap 0: the first load (10, beside the weight's); between two norms a store and the
    # next load, which cannot both draw 40 of the bus (20 either way); after the last
    # norm its store (10); three norms of 10. The exclusion part sees only the bus.
    p = norm_blocks(3)
    bound = lower_bound(p, target())
    assert bound.parts["gaps:M"] == 10 + 20 + 20 + 10 + 30
    assert bound.parts["gaps:M"] > bound.parts["exclusion:M"]
    report = solve_report(p, target(), time_limit=5.0, workers=1, placement=False)
    assert not verify(report.schedule)
    assert report.schedule.makespan == bound.value  # the optimum


def test_a_partial_last_block_does_not_spoil_the_gap_part() -> None:
    # The last block holds 10 + 2 * 25 = 60 bytes: more than half, so the greedy X takes
    # its norm too, but a full block's transfer (35) fits beside it, so no transfer is
    # apart from all of X and the part falls to the norms alone. X drawn from the 80s
    # keeps the transfers (the last block is then a unit of its own, in some gap).
    p = norm_blocks(3, last=25)
    greedy = exclusion_sets(p, target(), "M", necessary_edges(p))
    before, after = reach_bits(p, necessary_edges(p))
    alone = gap_bound(p, target(), greedy, before, after, usable_by_op(p, target()))
    bound = lower_bound(p, target())
    assert len(greedy.chosen) == 3 and alone == 3 * 10 + 2 * 10  # norms, a load, a store
    assert bound.parts["gaps:M"] > alone
    report = solve_report(p, target(), time_limit=5.0, workers=1, placement=False)
    assert not verify(report.schedule)
    assert bound.value <= report.schedule.makespan


def test_a_roomier_memory_lets_the_next_load_run_beside_the_norm() -> None:
    # With 200 bytes, the next block's input fits beside a norm: nothing is apart, no part.
    assert lower_bound(norm_blocks(3), target(200)).parts["gaps:M"] == 0


def test_a_gap_pattern_is_the_least_time_of_its_pieces() -> None:
    transfer = ((10, (("DMA", 1),), (("BW", 40),)), (20, (("DMA", 1),), (("BW", 20),)))
    store = Piece((transfer,), ((35, True, (0,)),))  # its buffer live from the gap's start
    load = Piece((transfer,), ((35, True, (0,)),))  # its buffer live to the gap's end
    assert pattern_length(Pattern(90, store, load, ()), target()) == 20
    # A copy's buffer (35) fits beside only one of the two others: its load waits for the
    # store to free its buffer, the next load for the copy's store.
    copy = Piece((transfer, transfer), ((35, False, (0, 1)),), ((0, 1),))
    assert pattern_length(Pattern(90, store, load, (copy,)), target()) == 30
    assert pattern_length(Pattern(30, None, None, (copy,)), target()) is None  # 35 > 30


@settings(max_examples=examples(0.2))
@given(st.integers(1, 3), st.integers(0, 3), st.sampled_from([30, 34, 35, 40, 45]),
       st.integers(1, 25), st.booleans(), st.sampled_from([0, 0, 21, 25, 27, 30]))
def test_the_gap_part_never_exceeds_a_legal_makespan(blocks: int, copies: int, size: int,
                                                      norm: int, chained: bool,
                                                      last: int) -> None:
    """Against CP-SAT's whole model with addresses (placement=False), solved to
    optimality where it can: any legal makespan is at least the bound. ``last``: a last
    block of another size (a partial one), which changes the sets X tried."""
    copies = min(copies, blocks) if chained else copies
    p = norm_blocks(blocks, size, copies, norm, chained, last)
    report = solve_report(p, target(), time_limit=1.0, workers=1, placement=False)
    assert not verify(report.schedule)
    bound = lower_bound(p, target())
    assert bound.parts["gaps:M"] <= report.schedule.makespan, bound.parts


@settings(max_examples=examples(4))
@given(st.lists(st.integers(1, 100), min_size=1, max_size=8), st.integers(1, 4))
def test_the_memory_rows_count_sizes_that_fit_as_at_most_the_whole(sizes: list[int],
                                                                     k: int) -> None:
    space = max(sum(sizes), 1)  # they fit together, exactly or with room
    assert sum(_dff(size, space, k) for size in sizes) <= 1 + 1e-12
    assert sum(_dff(size, space + 7, k) for size in sizes) <= 1 + 1e-12
