"""Path C: the consumer reads the producer's on-chip buffers; the intermediate never
goes to DDR.

:func:`forward` rewrites a tiled problem in which a producer stores tensor ``T`` block
by block and a matrix-engine consumer loads it back: the stores of ``T`` and the loads
of ``T`` go, and every op that read a loaded block reads instead the producer's buffers
that hold those rows (whole buffers, with the values the producer wrote). The reads are
ordinary buffer reads, so the operator builder's rule gives the ordering: each consumer
op is ``after`` the producer ops that wrote the rows it needs, and nothing else, so a
consumer tile starts as soon as its rows are done. The producer's buffers stay live
until their last reader, so the rows in flight must fit in the memory (the search
refuses with ``FIT`` otherwise). No rule beyond FORMATS.md is needed: the checker sees
buffers, values and ``after`` edges it already judges.

The producer's buffers are padded to whole matrix tiles (the matrix engine reads whole
tiles). Forwarding needs the producer's buffers to be in the memory the matrix engine
reads (true on Hexagon, where both engines share VTCM; not on the Ascend core, whose
vector engine writes UB and whose Cube reads L1): otherwise :class:`NotForwardable`.
"""

from __future__ import annotations

from dataclasses import replace

from models.cost import cost_model
from models.dtypes import DTYPE_BYTES
from models.formats import Access, Problem, Target
from models.ops.builder import round_up

__all__ = ["NotForwardable", "forward"]


class NotForwardable(Exception):
    """The consumer cannot read the producer's buffers; ``str()`` says why."""


def _rows(access: Access) -> tuple[int, int]:
    assert access.box is not None
    return access.box[0]


def forward(problem: Problem, target: Target, tensor: str) -> Problem:
    """``problem`` with ``tensor`` forwarded on chip (module docstring)."""
    model = cost_model(target)
    memory, tile = model.matrix.memory, model.matrix.tile
    elem = DTYPE_BYTES[problem.tensors[tensor].dtype]
    cols = problem.tensors[tensor].shape[-1]
    stores: dict[str, tuple[tuple[int, int], Access]] = {}
    loads: dict[str, tuple[tuple[int, int], Access]] = {}
    for name, op in problem.ops.items():
        for access in op.writes:
            if access.tensor == tensor:
                sources = [r for r in op.reads if r.buffer is not None]
                if len(sources) != 1:
                    raise NotForwardable(f"op {name!r} stores {tensor!r} from "
                                         f"{len(sources)} buffers, not one")
                stores[name] = (_rows(access), sources[0])
        for access in op.reads:
            if access.tensor == tensor:
                written = [w for w in op.writes if w.buffer is not None]
                if len(written) != 1 or problem.buffers[written[0].buffer].memory != memory:
                    raise NotForwardable(f"op {name!r} reads {tensor!r} but does not load "
                                         f"it into the matrix engine's {memory}")
                loads[name] = (_rows(access), written[0])
    if not stores or not loads:
        raise NotForwardable(f"{tensor!r} is not stored and loaded back by two tasks")
    for _, source in stores.values():
        if problem.buffers[source.buffer].memory != memory:
            raise NotForwardable(
                f"the producer keeps {tensor!r} in {problem.buffers[source.buffer].memory}, "
                f"the matrix engine reads {memory}: forwarding needs a copy between them")
    writer = {(w.buffer, w.value): name for name, op in problem.ops.items()
              for w in op.writes if w.buffer is not None}
    instead: dict[tuple[str | None, str | None], list[Access]] = {}
    for (lo, hi), loaded in loads.values():
        sources = [source for (slo, shi), source in stores.values() if slo < hi and lo < shi]
        instead[(loaded.buffer, loaded.value)] = sources
    removed = set(stores) | set(loads)
    ops = {}
    edges = [(a, b) for a, b in problem.after if a not in removed and b not in removed]
    for name, op in problem.ops.items():
        if name in removed:
            continue
        reads: list[Access] = []
        for access in op.reads:
            replacement = instead.get((access.buffer, access.value))
            if replacement is None:
                reads.append(access)
                continue
            for source in replacement:
                if source not in reads:
                    reads.append(source)
                    edges.append((writer[(source.buffer, source.value)], name))
        ops[name] = replace(op, reads=tuple(reads))
    buffers = {name: b for name, b in problem.buffers.items()
               if name not in {loaded.buffer for _, loaded in loads.values()}}
    for (lo, hi), source in stores.values():
        padded = round_up(hi - lo, tile) * round_up(cols, tile) * elem
        buffer = buffers[source.buffer]
        buffers[source.buffer] = replace(buffer, size=max(buffer.size, padded))
    tasks = {name: replace(task, outputs={t: box for t, box in task.outputs.items()
                                          if t != tensor} or None)
             if task.outputs else task for name, task in problem.tasks.items()}
    tensors = {name: t for name, t in problem.tensors.items() if name != tensor}
    return replace(problem, tensors=tensors, tasks=tasks, buffers=buffers, ops=ops,
                   after=tuple(dict.fromkeys(edges)))
