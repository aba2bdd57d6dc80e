"""Small hand-made problems and a Hypothesis strategy of random feasible ones.

Built directly as :mod:`models.formats` dataclasses so each test states exactly the
situation it is about (a tight memory, a chain of writers, two tasks) and nothing else.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

from models.formats import (
    Access,
    Buffer,
    Memory,
    Mode,
    Op,
    Problem,
    Schedule,
    Target,
    Task,
    Tensor,
    schedule_to_dict,
)


def target(capacity: int = 4096, alignment: int = 64, dma: int = 2, bw: int = 60) -> Target:
    return Target(name="test", lanes={"DMA": dma, "MX": 1, "VX": 2},
                  budgets={"BW": bw},
                  memories={"M": Memory(capacity_bytes=capacity, alignment_bytes=alignment)})


def load(task: str, buffer: str, tensor: str, value: str, duration: int = 10) -> Op:
    return Op(task=task, modes=(Mode(duration, {"DMA": 1}, {"BW": 40}),
                                Mode(2 * duration, {"DMA": 1}, {"BW": 20})),
              reads=(Access(tensor=tensor, box=((0, 1),)),),
              writes=(Access(buffer=buffer, value=value),))


def compute(task: str, reads: list[tuple[str, str]], writes: list[tuple[str, str]],
            duration: int = 20, lane: str = "MX") -> Op:
    return Op(task=task, modes=(Mode(duration, {lane: 1}),),
              reads=tuple(Access(buffer=b, value=v) for b, v in reads),
              writes=tuple(Access(buffer=b, value=v) for b, v in writes))


def store(task: str, buffer: str, value: str, tensor: str, row: int, duration: int = 10) -> Op:
    return Op(task=task, modes=(Mode(duration, {"DMA": 1}, {"BW": 40}),),
              reads=(Access(buffer=buffer, value=value),),
              writes=(Access(tensor=tensor, box=((row, row + 1),)),))


def gemm_like(blocks: int, k_steps: int, tile: int, task: str = "g",
              out: str = "C") -> tuple[dict[str, Tensor], dict[str, Buffer], dict[str, Op]]:
    """Per output block: k_steps loads of an A and a B tile, k_steps accumulating
    computes, one store. Naively issuing every load first needs
    ``blocks * k_steps * 2 * tile`` bytes; one block at a time needs ``3 * tile``."""
    tensors = {f"{task}A": Tensor((1,), "i8", "input"), f"{task}B": Tensor((1,), "i8", "input"),
               out: Tensor((blocks,), "i8", "output")}
    buffers: dict[str, Buffer] = {}
    ops: dict[str, Op] = {}
    for i in range(blocks):
        acc = f"{task}.acc{i}"
        buffers[acc] = Buffer("M", tile)
        for k in range(k_steps):
            a, b = f"{task}.A{i}.{k}", f"{task}.B{i}.{k}"
            buffers[a] = Buffer("M", tile)
            buffers[b] = Buffer("M", tile)
            ops[f"{task}.ldA{i}.{k}"] = load(task, a, f"{task}A", f"a{i}{k}")
            ops[f"{task}.ldB{i}.{k}"] = load(task, b, f"{task}B", f"b{i}{k}")
            reads = [(a, f"a{i}{k}"), (b, f"b{i}{k}")] + ([(acc, f"acc{i}@{k}")] if k else [])
            ops[f"{task}.mm{i}.{k}"] = compute(task, reads, [(acc, f"acc{i}@{k + 1}")])
        ops[f"{task}.st{i}"] = store(task, acc, f"acc{i}@{k_steps}", out, i)
    return tensors, buffers, ops


def example_at(name: str, ops: int) -> tuple[Problem, Target]:
    """Bundled example ``name`` scaled to about ``ops`` ops, tiled, with its target."""
    from models.targets import load_target
    from models.workload import load_workload, scaled, tile

    workload = load_workload(name)
    tgt = load_target(workload.target)
    return tile(scaled(workload, ops / len(tile(workload, tgt).ops)), tgt), tgt


def gemm_problem(blocks: int = 3, k_steps: int = 2, tile: int = 1024) -> Problem:
    tensors, buffers, ops = gemm_like(blocks, k_steps, tile)
    return Problem(name="gemm", tensors=tensors, tasks={"g": Task("gemm")}, buffers=buffers,
                   ops=ops)


def two_task_problem(tile: int = 512) -> Problem:
    """Two independent gemm-like tasks, so granularity=task has something to separate."""
    t1, b1, o1 = gemm_like(2, 2, tile, task="g", out="C")
    t2, b2, o2 = gemm_like(2, 1, tile, task="h", out="D")
    return Problem(name="two", tensors={**t1, **t2}, tasks={"g": Task("gemm"),
                                                             "h": Task("gemm")},
                   buffers={**b1, **b2}, ops={**o1, **o2})


def packing_problem() -> Problem:
    """Shrunk from a fuzz witness: in 7 bytes aligned to 2, ``x`` (3 bytes, alive from
    ``a`` to ``c``), ``y`` and ``z`` (2 bytes each, alive together with ``x`` in ``c``)
    fit only with ``x`` at offset 4. Every greedy pass puts ``x`` at 0 first, then
    cannot place ``z`` (``d``, which follows ``b``, only changes the passes' sequences:
    without it one of the passes happens to succeed)."""
    ops = {"a": compute("t", [], [("x", "x1")], duration=1),
           "b": compute("t", [], [("y", "y1")], duration=1),
           "c": compute("t", [("y", "y1")], [("x", "x2"), ("z", "z1")], duration=1),
           "d": compute("t", [], [], duration=2, lane="DMA")}
    return Problem("packing", {}, {"t": Task("k")},
                   {"x": Buffer("M", 3), "y": Buffer("M", 2), "z": Buffer("M", 2)}, ops,
                   (("b", "d"),))


@st.composite
def feasible_problems(draw: Any) -> tuple[Problem, Target]:
    """Random gemm-like tasks on a memory that fits one block of the largest task
    (so a feasible schedule exists) and often not much more."""
    n_tasks = draw(st.integers(1, 3))
    tile = draw(st.sampled_from([64, 100, 256, 512]))
    tensors: dict[str, Tensor] = {}
    buffers: dict[str, Buffer] = {}
    ops: dict[str, Op] = {}
    tasks: dict[str, Task] = {}
    for t in range(n_tasks):
        blocks, k_steps = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        more_t, more_b, more_o = gemm_like(blocks, k_steps, tile, task=f"t{t}", out=f"O{t}")
        tensors |= more_t
        buffers |= more_b
        ops |= more_o
        tasks[f"t{t}"] = Task("gemm")
    alignment = draw(st.sampled_from([1, 64, 128]))
    padded = -(-tile // alignment) * alignment
    capacity = 3 * padded + draw(st.integers(0, 6)) * padded
    dma = draw(st.integers(1, 2))
    problem = Problem(name="random", tensors=tensors, tasks=tasks, buffers=buffers, ops=ops)
    return problem, target(capacity=capacity, alignment=alignment, dma=dma)


def verify(schedule: Schedule) -> list[str]:
    """The checker's violations as ``code: message`` lines (empty when legal)."""
    from checker import verify as checker_verify

    report = checker_verify(schedule_to_dict(schedule))
    return [f"{v.code}: {v.message}" for v in report.violations]


def block_of(name: str) -> int:
    """The block number of a tiled op's name (``r0.ldX.b12`` -> 12)."""
    found = re.search(r"\.b(\d+)$", name)
    assert found is not None, name
    return int(found.group(1))


def lns_either_way(monkeypatch: Any, attribute: str, disabled: Any, ops: int,
                   work: float) -> dict[bool, tuple[Any, int]]:
    """LNS (:func:`schedsearch.engine.lns.improve`) on the tight wide pair of about
    ``ops`` ops from its list schedule, with the same work budget, once with
    ``schedsearch.engine.lns.<attribute>`` replaced by ``disabled`` (key False) and once
    as it is (key True): each result and its makespan, each answer verified."""
    from benchmarks.bench_memory import tight_problem
    from schedsearch.engine import lns
    from schedsearch.engine.hazards import build_dag
    from schedsearch.engine.instance import build_instance
    from schedsearch.engine.portfolio import list_schedule
    from schedsearch.engine.solution import Solution, to_schedule
    from schedsearch.engine.timebudget import TimeBudget

    problem, tgt = tight_problem("pair-wide", ops)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    start = list_schedule(inst, dag)
    assert isinstance(start, Solution)
    found = {}
    for enabled in (False, True):
        if enabled:
            monkeypatch.undo()
        else:
            monkeypatch.setattr(lns, attribute, disabled)
        result = lns.improve(inst, dag, start, TimeBudget.start(work, wall=120), seed=0,
                             workers=2, lower=0)
        assert verify(to_schedule(inst, result.solution, {})) == []
        found[enabled] = (result, result.solution.makespan(inst))
    return found
