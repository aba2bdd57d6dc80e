"""The translation of our problems for the PyJobShop peer (pyjobshop itself not needed)."""

from __future__ import annotations

import checker
from benchmarks.peer_pyjobshop import (
    PeerResult,
    ample_target,
    first_reaching,
    peer_instance,
    peer_schedule,
)
from models.formats import Access, Buffer, Memory, Mode, Op, Problem, Target, Task, Tensor


def _target(capacity: int = 4096) -> Target:
    return Target(name="t", lanes={"DMA": 2, "VX": 4}, budgets={"BW": 60},
                  memories={"M": Memory(capacity, 64)})


def _problem() -> Problem:
    """Load a tile into a buffer, then a two-mode vector op reads it: one RAW edge plus
    an explicit ``after`` edge from the load to an unrelated op."""
    def buf(value: str) -> Access:
        return Access(buffer="b", value=value)

    ops = {
        "ld": Op("t", (Mode(10, {"DMA": 1}, {"BW": 40}),),
                 reads=(Access(tensor="X", box=((0, 4),)),), writes=(buf("x"),)),
        "vec": Op("t", (Mode(8, {"VX": 1}), Mode(5, {"VX": 2})), reads=(buf("x"),)),
        "other": Op("t", (Mode(3, {"DMA": 1}),)),
    }
    return Problem(name="p", tensors={"X": Tensor((4,), "f16", "input")},
                   tasks={"t": Task("copy")},
                   buffers={"b": Buffer("M", 3000, 128)}, ops=ops,
                   after=(("ld", "other"),))


def test_ample_memory_holds_every_buffer_at_its_own_address() -> None:
    problem = _problem()
    small = _target(capacity=1024)
    ample = ample_target(problem, small)
    assert ample.memories["M"].capacity_bytes == 3072  # 3000 rounded up to lcm(128, 64)
    assert ample.memories["M"].alignment_bytes == 64
    assert (ample.lanes, ample.budgets) == (small.lanes, small.budgets)
    assert ample_target(problem, _target(1 << 20)).memories["M"].capacity_bytes == 1 << 20


def test_lanes_and_budgets_become_renewable_resources() -> None:
    peer = peer_instance(_problem(), _target())
    assert peer.capacities == {"lane:DMA": 2, "lane:VX": 4, "budget:BW": 60}
    tasks = {task.name: task for task in peer.tasks}
    assert [(m.duration, m.demands) for m in tasks["ld"].modes] == [
        (10, {"lane:DMA": 1, "budget:BW": 40})]
    assert [(m.duration, m.demands) for m in tasks["vec"].modes] == [
        (8, {"lane:VX": 1}), (5, {"lane:VX": 2})]


def test_edges_carry_after_and_access_precedences() -> None:
    peer = peer_instance(_problem(), _target())
    index = {task.name: i for i, task in enumerate(peer.tasks)}
    edges = {(peer.tasks[p].name, peer.tasks[s].name): lag for p, s, lag in peer.edges}
    assert edges == {("ld", "other"): 0, ("ld", "vec"): 0}
    assert all(0 <= p < len(index) and 0 <= s < len(index) for p, s, _ in peer.edges)


def test_time_to_reach_a_makespan() -> None:
    trace = [(0.1, 100), (0.5, 90), (2.0, 80)]
    assert first_reaching(trace, 95) == 0.5
    assert first_reaching(trace, 80) == 2.0
    assert first_reaching(trace, 100) == 0.1
    assert first_reaching(trace, 79) is None
    assert first_reaching([], 1) is None


def _answer(starts: tuple[int, ...], modes: tuple[int, ...] = (0, 1, 0)) -> PeerResult:
    return PeerResult(modes=modes, starts=starts, makespan=None, trace=(),
                      status="OPTIMAL", wall_s=0.0)


def test_a_peer_answer_becomes_a_schedule_the_checker_accepts() -> None:
    problem = _problem()
    ample = ample_target(problem, _target(capacity=1024))
    # ld [0, 10), vec in its 2-unit mode [10, 15), other [10, 13): legal.
    document = peer_schedule(problem, ample, _answer((0, 10, 10)))
    report = checker.verify(document)
    assert report.legal, report.violations
    assert document["ops"]["vec"]["units"]["VX"] == [0, 1]
    assert document["buffers"]["b"] == {"offset": 0, "alloc": 0, "free": 15}


def test_a_peer_answer_that_breaks_a_precedence_is_caught() -> None:
    problem = _problem()
    ample = ample_target(problem, _target())
    # vec starts before the load that writes the value it reads has ended.
    codes = {v.code for v in checker.verify(
        peer_schedule(problem, ample, _answer((0, 5, 10)))).violations}
    assert "STALE_READ" in codes
