"""A peer on our own problems: PyJobShop's CP-SAT backend beside ``schedsearch.solve``.

What a user would reach for instead is a general scheduling library. It has no notion of
addressed memory, so the bundled pair and triple workloads are compared with VTCM made
ample (every buffer could have an address of its own), where memory constrains nothing
and both solvers face the same problem:

- each op is a task; each mode a PyJobShop mode with the same duration;
- each lane kind is a renewable resource whose capacity is its unit count (an op holds
  whole units, so a cumulative resource plus a unit assignment afterwards is exact), and
  each budget a renewable resource with its capacity;
- the precedences are those ``schedsearch`` derives from the accesses (``after`` edges,
  buffer RAW/WAW/WAR, DDR RAW; :mod:`schedsearch.engine.hazards`), each ``succ.start >=
  pred.end + lag`` an end-before-start constraint with that delay.

Where memory binds (``benchmarks/bench_memory.py``), a second translation keeps the real
memory as one more renewable resource (:func:`memory_peer_instance`): each op holds, only
while it runs, its share of the buffers it accesses (a buffer's rounded size whole when
its accessors are pairwise ordered, so never two of them run at once, else divided among
them). That is a *relaxation*: a real buffer is held from its first accessor's start to
its last one's end (a loaded tile waits for its consumer, an accumulator lives across
the K loop), and at an address, so fragmentation counts too; the relaxed peer sees
neither, so its makespan may be below any legal schedule's, and its answers are not
checked for memory.

Both solve at the same time limit, seed and worker count, in one run. The peer's answer
is turned into an ``npu-schedule/1`` (units assigned, each buffer at its own address) and
verified by the checker like ours, so a translation that forgot a constraint would show.

Figures per problem: both makespans, their ratio (ours / peer; below 1 is better), and
time to equal quality: when each first reached the worse of the two final makespans
(read from our progress callback and a CP-SAT solution callback on the peer's model).

    python -m benchmarks.peer_pyjobshop [--workloads W ...] [--factors F ...]
                                        [--time-limit S] [--workers N] [--seed K] [--json PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import checker
from benchmarks.common import write_figures
from models.formats import Memory, Problem, Target, schedule_to_dict
from models.targets import load_target
from models.workload import load_workload, scaled, tile
from schedsearch import solve
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.search import Progress
from schedsearch.engine.solution import Solution, to_schedule

__all__ = ["PeerMode", "PeerTask", "PeerInstance", "PeerResult", "ample_target",
           "peer_instance", "memory_peer_instance", "first_reaching", "solve_peer",
           "peer_schedule", "compare", "run", "main"]

WORKLOADS = ("gemm-rmsnorm-v75", "gemm-rmsnorm-copy-v75")


@dataclass(frozen=True, slots=True)
class PeerMode:
    duration: int
    demands: dict[str, int]


@dataclass(frozen=True, slots=True)
class PeerTask:
    name: str
    modes: tuple[PeerMode, ...]


@dataclass(frozen=True, slots=True)
class PeerInstance:
    """A problem as a plain resource-constrained project: what the peer is given.

    ``edges`` are ``(pred, succ, delay)`` over task indices: ``succ`` starts no earlier
    than ``pred`` ends plus ``delay``."""

    capacities: dict[str, int]
    tasks: tuple[PeerTask, ...]
    edges: tuple[tuple[int, int, int], ...]


def ample_target(problem: Problem, target: Target) -> Target:
    """``target`` with every memory large enough to give each of ``problem``'s buffers an
    address of its own (sizes rounded up to their effective alignment)."""
    needed: dict[str, int] = {}
    for buffer in problem.buffers.values():
        memory = target.memories[buffer.memory]
        align = math.lcm(buffer.align, memory.alignment_bytes)
        needed[buffer.memory] = needed.get(buffer.memory, 0) + -(-buffer.size // align) * align
    memories = {name: Memory(max(memory.capacity_bytes, needed.get(name, 0)),
                             memory.alignment_bytes)
                for name, memory in target.memories.items()}
    return replace(target, name=f"{target.name}-ample", memories=memories)


def peer_instance(problem: Problem, target: Target) -> PeerInstance:
    """The resource-constrained project both solvers face once memory constrains nothing."""
    inst = build_instance(problem, target)
    dag = build_dag(inst)
    capacities = {**{f"lane:{k}": n for k, n in target.lanes.items()},
                  **{f"budget:{b}": c for b, c in target.budgets.items()}}
    tasks = tuple(
        PeerTask(name, tuple(
            PeerMode(mode.duration,
                     {**{f"lane:{k}": n for k, n in mode.lanes if n},
                      **{f"budget:{b}": d for b, d in mode.budgets if d}})
            for mode in inst.modes[i]))
        for i, name in enumerate(inst.op_names))
    return PeerInstance(capacities, tasks, tuple(dag.edges))


def memory_peer_instance(problem: Problem, target: Target) -> PeerInstance:
    """:func:`peer_instance` with each memory one more renewable resource
    (``memory:M``, capacity rounded up to its alignment) that an op holds only while it
    runs (see the module docstring)."""
    base = peer_instance(problem, target)
    inst = build_instance(problem, target)
    dag = build_dag(inst)
    after = [0] * dag.n_nodes  # bit set of the nodes that follow each node
    for v in reversed(dag.topo):
        for succ, _ in dag.succs[v]:
            after[v] |= after[succ] | 1 << succ
    held = [dict[str, int]() for _ in range(inst.n_ops)]
    for b, ops in enumerate(inst.buffer_ops):
        memory = target.memories[inst.buffer_memory[b]]
        size = -(-inst.buffer_size[b] // memory.alignment_bytes) * memory.alignment_bytes
        ordered = all(after[i] >> j & 1 or after[j] >> i & 1
                      for i in ops for j in ops if i < j)
        share = size if ordered else -(-size // len(ops))
        for op in ops:
            key = f"memory:{inst.buffer_memory[b]}"
            held[op][key] = held[op].get(key, 0) + share
    capacities = {**base.capacities,
                  **{f"memory:{name}": -(-m.capacity_bytes // m.alignment_bytes)
                     * m.alignment_bytes for name, m in target.memories.items()}}
    tasks = tuple(PeerTask(task.name, tuple(PeerMode(mode.duration,
                                                     {**mode.demands, **held[i]})
                                            for mode in task.modes))
                  for i, task in enumerate(base.tasks))
    return PeerInstance(capacities, tasks, base.edges)


def first_reaching(trace: Sequence[tuple[float, int]], makespan: int) -> float | None:
    """The first time in ``trace`` (``(seconds, makespan)`` pairs, in time order) at which
    the makespan was at most ``makespan``; None if never."""
    return next((t for t, m in trace if m <= makespan), None)


# ----------------------------------------------------------------------------- solvers
@dataclass(frozen=True, slots=True)
class PeerResult:
    """The peer's answer: a mode index and start per task (empty if it found none), every
    improving ``(seconds, makespan)`` with the seconds counted from before the model was
    built (as our side counts its own preparation), CP-SAT's status and the wall time."""

    modes: tuple[int, ...]
    starts: tuple[int, ...]
    makespan: int | None
    trace: tuple[tuple[float, int], ...]
    status: str
    wall_s: float


def solve_peer(peer: PeerInstance, *, time_limit: float, workers: int,
               seed: int) -> PeerResult:
    """``peer`` as a PyJobShop model (makespan objective), solved by its OR-Tools backend
    with a solution callback added to see when each makespan was reached."""
    from ortools.sat.python import cp_model
    from pyjobshop import Model
    from pyjobshop.solvers.ortools import CPModel

    began = time.perf_counter()
    model = Model()
    resources = {name: model.add_renewable(capacity, name=name)
                 for name, capacity in peer.capacities.items()}
    tasks = [model.add_task(name=task.name) for task in peer.tasks]
    for task, handle in zip(peer.tasks, tasks, strict=True):
        for mode in task.modes:
            model.add_mode(handle, [resources[r] for r in mode.demands], mode.duration,
                           list(mode.demands.values()))
    for pred, succ, delay in peer.edges:
        model.add_end_before_start(tasks[pred], tasks[succ], delay)
    model.set_objective(weight_makespan=1)
    data = model.data()
    backend = CPModel(data)
    trace: list[tuple[float, int]] = []

    class Watcher(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            trace.append((time.perf_counter() - began, round(self.objective_value)))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    code = solver.solve(backend.model, Watcher())
    status = solver.status_name(code)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return PeerResult((), (), None, tuple(trace), status,
                          time.perf_counter() - began)
    modes: list[int] = []
    starts: list[int] = []
    for t in range(data.num_tasks):
        candidates = data.task2modes(t)
        chosen = next(m for m in candidates if solver.value(backend.variables.mode_vars[m]))
        modes.append(candidates.index(chosen))
        starts.append(solver.value(backend.variables.task_vars[t].start))
    makespan = max((s + peer.tasks[t].modes[m].duration
                    for t, (m, s) in enumerate(zip(modes, starts, strict=True))), default=0)
    return PeerResult(tuple(modes), tuple(starts), makespan, tuple(trace), status,
                      time.perf_counter() - began)


def peer_schedule(problem: Problem, target: Target, result: PeerResult) -> dict[str, Any]:
    """The peer's answer as an ``npu-schedule/1`` for the checker: every buffer at an
    address of its own (the target is ample), units assigned, windows as tight as
    LIFETIME allows."""
    inst = build_instance(problem, target)
    offsets, top = [], {name: 0 for name in target.memories}
    for b in range(inst.n_buffers):
        memory = inst.buffer_memory[b]
        align = inst.buffer_align[b]
        offsets.append(-(-top[memory] // align) * align)
        top[memory] = offsets[-1] + inst.buffer_size[b]
    solution = Solution(result.modes, result.starts, tuple(offsets))
    return schedule_to_dict(to_schedule(inst, solution, {"solver": "pyjobshop/ortools",
                                                         "status": result.status}))


def compare(problem: Problem, target: Target, *, time_limit: float, workers: int,
            seed: int) -> dict[str, Any]:
    """Both solvers on ``problem`` with memory made ample; the figures of one row."""
    ample = ample_target(problem, target)
    ours_trace: list[tuple[float, int]] = []

    def record(progress: Progress) -> None:
        if not ours_trace or progress.makespan < ours_trace[-1][1]:
            ours_trace.append((progress.elapsed, progress.makespan))

    began = time.perf_counter()
    schedule = solve(problem, ample, time_limit=time_limit, seed=seed, workers=workers,
                     progress=record)
    ours_wall = time.perf_counter() - began
    ours_legal = checker.verify(schedule_to_dict(schedule)).legal
    peer = solve_peer(peer_instance(problem, ample), time_limit=time_limit,
                      workers=workers, seed=seed)
    row: dict[str, Any] = {"problem": problem.name, "ops": len(problem.ops),
                           "buffers": len(problem.buffers), "ours_makespan": schedule.makespan,
                           "ours_bound": (schedule.meta or {}).get("bound"),
                           "ours_wall_s": round(ours_wall, 3), "ours_legal": ours_legal,
                           "peer_status": peer.status, "peer_wall_s": round(peer.wall_s, 3),
                           "peer_makespan": peer.makespan}
    if peer.makespan is None:
        return row
    worse = max(schedule.makespan, peer.makespan)
    ours_t, peer_t = first_reaching(ours_trace, worse), first_reaching(peer.trace, worse)
    return {**row, "peer_legal": checker.verify(peer_schedule(problem, ample, peer)).legal,
            "makespan_ratio": round(schedule.makespan / peer.makespan, 4),
            "equal_quality_makespan": worse,
            "ours_time_to_equal_s": None if ours_t is None else round(ours_t, 3),
            "peer_time_to_equal_s": None if peer_t is None else round(peer_t, 3),
            "time_to_equal_ratio": (round(ours_t / peer_t, 3)
                                    if ours_t is not None and peer_t else None)}


def run(workloads: Sequence[str], factors: Sequence[float], *, time_limit: float,
        workers: int, seed: int, log: Any = sys.stdout) -> dict[str, Any]:
    rows = []
    for name in workloads:
        workload = load_workload(name)
        target = load_target(workload.target)
        for factor in factors:
            problem = tile(scaled(workload, factor) if factor != 1 else workload, target)
            row = compare(problem, target, time_limit=time_limit, workers=workers,
                          seed=seed)
            rows.append({"workload": name, "factor": factor, **row})
            print(f"{name} x{factor:g}: {row['ops']} ops, ours {row['ours_makespan']} "
                  f"peer {row['peer_makespan']} ratio {row.get('makespan_ratio')} "
                  f"t_equal ours {row.get('ours_time_to_equal_s')} peer "
                  f"{row.get('peer_time_to_equal_s')}", file=log, flush=True)
    return {"time_limit_s": time_limit, "workers": workers, "seed": seed,
            "memory": "ample (VTCM grown to hold every buffer at once)", "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS))
    parser.add_argument("--factors", nargs="+", type=float, default=[1.0],
                        help="row-dimension scale factors (models.workload.scaled)")
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("pyjobshop") is None:
        figures: dict[str, Any] = {"skipped": "pyjobshop is not installed "
                                              "(pip install '.[bench]')"}
        print(figures["skipped"])
    else:
        figures = run(args.workloads, args.factors, time_limit=args.time_limit,
                      workers=args.workers, seed=args.seed)
    write_figures(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
