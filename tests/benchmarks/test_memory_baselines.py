"""The tight-memory baselines: the plain list schedule and the relaxed memory peer."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.list_baseline import list_schedule
from benchmarks.peer_pyjobshop import memory_peer_instance
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.solution import to_schedule
from tests.engine.problems import gemm_problem, target, verify


def test_the_list_schedule_is_legal_where_it_finishes() -> None:
    inst = build_instance(gemm_problem(blocks=3, k_steps=2, tile=1024), target(1 << 16))
    solution = list_schedule(inst, build_dag(inst))
    assert solution is not None
    assert verify(to_schedule(inst, solution, {})) == []


def test_the_list_schedule_deadlocks_when_loads_fill_memory() -> None:
    # Four DMA queues load the A and B tiles of both blocks at time 0; with room for
    # four tiles that fills memory, no accumulator fits, and nothing ever frees a tile.
    inst = build_instance(gemm_problem(blocks=2, k_steps=1, tile=1024),
                          target(4 * 1024, alignment=1024, dma=4, bw=160))
    assert list_schedule(inst, build_dag(inst)) is None


def test_memory_is_held_whole_by_ordered_accessors_and_shared_otherwise() -> None:
    problem = gemm_problem(blocks=1, k_steps=2, tile=1000)
    peer = memory_peer_instance(problem, target(1 << 16, alignment=64))
    assert peer.capacities["memory:M"] == 1 << 16
    demand = {task.name: task.modes[0].demands["memory:M"] for task in peer.tasks}
    # ldA writes A, mm reads it: ordered, so each holds the whole 1,024 rounded bytes;
    # mm0 and mm1 share the accumulator along a chain with the store: also ordered.
    assert demand["g.ldA0.0"] == 1024
    assert demand["g.mm0.0"] == 3 * 1024  # A, B and the accumulator
    assert demand["g.st0"] == 1024


def test_bounds_only_prints_every_part_and_the_binding_one(tmp_path: Path) -> None:
    from benchmarks.bench_memory import main, tight_problem
    from schedsearch.engine.bounds.lower import lower_bound

    out = tmp_path / "bounds.json"
    assert main(["--bounds-only", "--problems", "chain", "--sizes", "60",
                 "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["bounds"]
    problem, target = tight_problem("chain", 60)
    assert row["parts"] == dict(lower_bound(problem, target).parts)
    assert row["parts"][row["binding"]] == max(row["parts"].values())
