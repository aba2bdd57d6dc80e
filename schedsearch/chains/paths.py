"""The three ways to run a producer -> consumer edge, each solved, verified and scored.

For an edge where a vector-engine task (``rmsnorm``, ``elementwise``) writes the tensor
``T`` that a GEMM reads as its ``a`` operand, the two tasks are taken alone and run:

- **A**, each in its own best layout: the producer writes ``T`` row-major (its native
  layout), a conversion task (kind ``relayout``) rewrites it tiled into ``T.tiled``, the
  GEMM reads that (its native layout); three separate kernels. Both conversion engines
  (a 2-D descriptor DMA, a vector pass) are tried; the faster is A.
- **B**, one shared layout, no conversion: ``T`` row-major (the GEMM's loads pay the
  strided rate) or tiled (the producer pays the scatter passes), two separate kernels;
  the faster layout is B.
- **C**, forwarded on chip: one entry; the producer writes tiles into its on-chip
  buffers and the GEMM's matrix ops read them directly
  (:func:`schedsearch.chains.forward.forward`); the producer's row blocks are rounded up
  to whole matrix tiles, and each GEMM tile waits for exactly the blocks holding the
  rows it needs. The two tasks' matrix- and vector-engine ops take
  ``costs.layouts.fused_compute_factor`` times as long as apart
  (:func:`models.layouts.fused_pressure`: one kernel shares registers and on-chip
  memory between them; an assumption, which :mod:`schedsearch.chains.sweep` varies).
  Where the vector engine's memory is not the matrix engine's, there is no path C (the
  result says why).

Layout costs come from :func:`models.layouts.apply_layout`. A and B are scored as
``compare``'s path 1 (separate kernels, each solved alone, one launch each); C as a
fused entry (one launch, :func:`schedsearch.chains.score.sync_events` events). Every
schedule is verified by the checker. Each path's critical path is split into compute,
data movement, conversion, wait and launch/sync (:mod:`schedsearch.chains.critical`).

The recoverable loss: ``f`` is the share of A's end-to-end time that B or C could
remove at best: its critical path's conversion, the movement of the intermediate
tensors, and the launches and events beyond one launch; compute, the other movement and
the waits (budget and memory stalls, which neither B nor C lifts) stay. The ceiling is
``1 / (1 - f)``. B or C can beat it when their critical path holds less compute, other
movement or waiting than A's (pipelining overlaps the producer's work with the
consumer's, taking it off the critical path); the command says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from models.cost import cost_model, overheads
from models.errors import InputError
from models.formats import Problem, Target
from models.layouts import Layout, apply_layout, fused_pressure, layout_costs
from models.ops.builder import round_up
from models.workload import Workload, WorkloadTask, tile
from schedsearch.chains.critical import Split, split
from schedsearch.chains.forward import NotForwardable, forward
from schedsearch.chains.score import score_fused
from schedsearch.engine.search import solve
from schedsearch.paths import PathResult, SolveOptions, fallback_path, speedup_bound

__all__ = ["DEFAULT_OPTIONS", "CONVERTERS", "solves_per_edge", "PathName", "Edge",
           "ChainPath", "ChainResult", "PRODUCERS", "CONSUMERS", "chain_edges", "chain_paths",
           "path_c"]

#: Five solves per edge or more: a shorter limit per solve than ``compare``'s default.
DEFAULT_OPTIONS = SolveOptions(time_limit=2.0)
#: Task kinds whose output a chain may convert or forward (vector-engine row blocks).
PRODUCERS = ("rmsnorm", "elementwise")
#: Consumer kind -> the parameter naming the operand it reads from the producer.
CONSUMERS = {"gemm": "a"}


class PathName(Enum):
    A = "A"
    B = "B"
    C = "C"


@dataclass(frozen=True, slots=True)
class Edge:
    """Task ``producer`` writes ``tensor``, which task ``consumer`` reads."""

    producer: WorkloadTask
    consumer: WorkloadTask
    tensor: str

    @property
    def label(self) -> str:
        return f"{self.producer.name} -> {self.consumer.name} ({self.tensor})"


@dataclass(frozen=True, slots=True)
class ChainPath:
    """One path of an edge: which variant won, its scored result and its split."""

    path: PathName
    variant: str
    result: PathResult
    split: Split

    def as_dict(self) -> dict[str, Any]:
        r = self.result
        return {"path": self.path.value, "variant": self.variant, "makespan": r.makespan,
                "device_makespan": r.device_makespan, "overhead": r.overhead,
                "launches": r.launches, "events": r.events,
                "critical_path": self.split.as_dict(),
                "peak_bytes": dict(r.evaluation.peak_bytes),
                "ddr_bytes": r.evaluation.ddr_bytes, "legal": r.legal,
                "violations": list(r.violations)}


@dataclass(frozen=True, slots=True)
class ChainResult:
    """The paths of one edge (C may be missing: ``c_note`` says why) and the loss."""

    edge: Edge
    paths: tuple[ChainPath, ...]
    removable_share: float
    c_note: str = ""

    def path(self, name: PathName) -> ChainPath | None:
        return next((p for p in self.paths if p.path is name), None)

    @property
    def best(self) -> ChainPath:
        return min(self.paths, key=lambda p: (p.result.makespan, p.path.value))

    @property
    def ceiling(self) -> float:
        return speedup_bound(self.removable_share)

    def gain(self, name: PathName) -> float | None:
        """Speed-up of path ``name`` over A (None when the path was not built)."""
        a, other = self.path(PathName.A), self.path(name)
        if a is None or other is None:
            return None
        return a.result.makespan / other.result.makespan

    def as_dict(self) -> dict[str, Any]:
        return {"edge": {"producer": self.edge.producer.name,
                         "consumer": self.edge.consumer.name, "tensor": self.edge.tensor},
                "paths": [p.as_dict() for p in self.paths], "best": self.best.path.value,
                "recoverable": {"removable_share": self.removable_share,
                                "ceiling": self.ceiling,
                                "gain_b": self.gain(PathName.B),
                                "gain_c": self.gain(PathName.C)},
                "c_note": self.c_note}


def chain_edges(workload: Workload) -> tuple[Edge, ...]:
    """Every edge from a :data:`PRODUCERS` task to a :data:`CONSUMERS` task reading its
    output as it lies, in workload order (a GEMM that reads the operand transposed or
    batched, ``trans_a`` or ``batch`` other than the defaults, is not such an edge)."""
    edges = []
    for producer in workload.tasks:
        if producer.kind not in PRODUCERS:
            continue
        for consumer in workload.tasks:
            key = CONSUMERS.get(consumer.kind)
            plain = (int(consumer.params.get("trans_a", 0)) == 0
                     and int(consumer.params.get("batch", 1)) == 1)
            if key is not None and plain and consumer.params[key] == producer.params["out"]:
                edges.append(Edge(producer, consumer, str(producer.params["out"])))
    return tuple(edges)


#: The engines path A converts the layout with, each tried.
CONVERTERS = ("dma", "vector")


def _workload(workload: Workload, suffix: str, *tasks: WorkloadTask) -> Workload:
    return replace(workload, name=f"{workload.name}.{suffix}", tasks=tasks)


def _separate(problem: Problem, target: Target, options: SolveOptions, variant: str,
              path: PathName, intermediates: frozenset[str]) -> ChainPath:
    result = fallback_path(problem, target, "separate", options=options)
    return ChainPath(path, variant, result,
                     split(result.schedule, result.overhead, intermediates))


def _best(paths: list[ChainPath]) -> ChainPath:
    return min(paths, key=lambda p: p.result.makespan)


def _path_a(workload: Workload, edge: Edge, target: Target,
            options: SolveOptions) -> ChainPath:
    tiled_name = f"{edge.tensor}.tiled"
    producer = edge.producer
    rows, cols = int(producer.params["rows"]), int(producer.params["cols"])
    consumer = replace(edge.consumer, params={**edge.consumer.params,
                                              CONSUMERS[edge.consumer.kind]: tiled_name})
    found = []
    for engine in CONVERTERS:
        convert = WorkloadTask(f"{producer.name}-cv", "relayout", {
            "rows": rows, "cols": cols, "x": edge.tensor, "out": tiled_name,
            "src": Layout.ROW.value, "dst": Layout.TILED.value, "engine": engine,
            "block_rows": int(producer.params["block_rows"]),
            "dtype": producer.params["dtype"]})
        problem = tile(_workload(workload, f"A-{engine}", producer, convert, consumer), target)
        problem = apply_layout(problem, target, edge.tensor, Layout.ROW)
        problem = apply_layout(problem, target, tiled_name, Layout.TILED)
        found.append(_separate(problem, target, options, f"convert by {engine}", PathName.A,
                               frozenset({edge.tensor, tiled_name})))
    return _best(found)


def _path_b(workload: Workload, edge: Edge, target: Target,
            options: SolveOptions) -> ChainPath:
    problem = tile(_workload(workload, "B", edge.producer, edge.consumer), target)
    return _best([_separate(apply_layout(problem, target, edge.tensor, layout), target,
                            options, f"shared {layout.value}", PathName.B,
                            frozenset({edge.tensor}))
                  for layout in Layout])


def path_c(workload: Workload, edge: Edge, target: Target,
           options: SolveOptions) -> ChainPath:
    """Path C of ``edge`` (module docstring); NotForwardable or InputError (``FIT``)
    when it cannot be built."""
    model = cost_model(target)
    if model.vector.memory != model.matrix.memory:
        raise NotForwardable(f"the producer keeps its rows in {model.vector.memory}, the "
                             f"matrix engine reads {model.matrix.memory}: forwarding needs "
                             "a copy between them")
    block = round_up(int(edge.producer.params["block_rows"]), model.matrix.tile)
    producer = replace(edge.producer, params={**edge.producer.params, "block_rows": block})
    problem = tile(_workload(workload, "C", producer, edge.consumer), target)
    problem = forward(apply_layout(problem, target, edge.tensor, Layout.TILED), target,
                      edge.tensor)
    problem = fused_pressure(problem, target, frozenset({producer.name, edge.consumer.name}))
    schedule = solve(problem, target, **options.search())
    result = score_fused("C", schedule, overheads(target))
    factor = layout_costs(target).fused_compute_factor
    return ChainPath(PathName.C, f"forwarded, {block}-row blocks, compute x{factor:g}", result,
                     split(schedule, result.overhead, frozenset({edge.tensor})))


def _removable(a: ChainPath, launch_ns: int) -> float:
    """Share of A's end-to-end time B or C could remove at best (module docstring)."""
    s = a.split
    share = (s.conversion + s.intermediate + max(0, s.sync - launch_ns)) / s.total
    return min(share, 1 - 1e-9)


def solves_per_edge() -> int:
    """The solves one edge's paths take: path A's three kernels (producer, conversion,
    consumer) per converting engine, path B's two per layout, path C's one."""
    return 3 * len(CONVERTERS) + 2 * len(Layout) + 1


def chain_paths(workload: Workload, target: Target, *,
                options: SolveOptions = DEFAULT_OPTIONS) -> tuple[ChainResult, ...]:
    """Paths A, B and C of every edge of ``workload`` (module docstring).

    A workload without such an edge is an InputError (rule ``CHAIN``).
    ``options.time_limit`` is each solve's; with ``options.allotment`` the study's one
    limit is allotted evenly to its solves (:func:`solves_per_edge` per edge), each
    granted its part of what is left as it begins.
    """
    edges = chain_edges(workload)
    if not edges:
        raise InputError(f"no edge from a {'/'.join(PRODUCERS)} task to a "
                         f"{'/'.join(CONSUMERS)} task reading its output",
                         source=workload.source, path="$.tasks", rule="CHAIN")
    if options.allotment is not None:
        options.allotment.plan(len(edges) * solves_per_edge())
    launch = overheads(target).launch_ns
    results = []
    for edge in edges:
        a = _path_a(workload, edge, target, options)
        paths = [a, _path_b(workload, edge, target, options)]
        note = ""
        try:
            paths.append(path_c(workload, edge, target, options))
        except (NotForwardable, InputError) as why:
            note = f"no path C: {why}"
        results.append(ChainResult(edge, tuple(paths), _removable(a, launch), note))
    return tuple(results)
