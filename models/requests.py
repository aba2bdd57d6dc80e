"""A mix's requests as one workload and one problem, with chunked prefill.

Each request is one decoder layer of its family (:func:`models.examples.decoders.layer`,
the operator library's tasks that the bundled layers are made of) at its phase: a
prefill of ``tokens`` new tokens, or one decode token attending to ``past`` cached ones.
Every task and tensor name is prefixed by the request's name (``d0-q_proj``, ``d0-x``),
weights included: requests never share a tensor, so they depend on nothing of each other
(the cost is the same as shared weights: every tile is loaded from DDR either way).

Chunked prefill. A prefill of ``T`` tokens in chunks of ``k`` is ``ceil(T / k)`` layers,
chunk ``c`` (prefix ``p0-c2``) of ``min(k, T - c*k)`` tokens attending to ``past + c*k``
cached ones: the K/V that the earlier chunks wrote. A workload task reads whole tensors,
so each chunk's cache is an input tensor of its own (``p0-c2-k_cache``, in DDR), and the
order it implies is added to the problem as ``after`` edges: every load of a chunk's
cache rows follows every store of an earlier chunk's K or V that wrote those rows. The
rest of a chunk (its norm, projections, MLP) depends on nothing earlier, so a search may
start it sooner; chunks "run in order" through their attention.

ONNX requests. A request whose model is an ``.onnx`` decoder-layer graph is that graph
imported (:mod:`models.onnx`) with its ``dims`` bound, names prefixed the same way. It is
never chunked: a chunk is the layer at fewer tokens attending to a longer past, which a
prefill graph (no cache inputs) cannot express, and which cache tensor is which is known
only of the operator library's names. Every policy runs such a prefill whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from models.cost import cost_model
from models.errors import InputError
from models.examples.decoders import MODELS, layer
from models.formats import Problem, Target
from models.jsonio import json_path
from models.mix import Mix, Request
from models.ops import KINDS
from models.workload import MAX_OPS, WORKLOAD_FORMAT, Workload, tile, workload_from_dict

__all__ = ["Part", "MixProblem", "chunkable", "parts", "request_tasks", "mix_workload",
           "mix_problem"]

#: The attention's cache tensors and the projections' outputs that fill them.
_CACHE = {"k_cache": "k", "v_cache": "v"}


@dataclass(frozen=True, slots=True)
class Part:
    """One decoder layer of a request: the whole request, or chunk ``chunk`` of a prefill;
    ``prefix`` starts every name of its tasks and tensors."""

    request: str
    prefix: str
    tokens: int
    past: int
    chunk: int | None = None


@dataclass(frozen=True, slots=True)
class MixProblem:
    """The problem of a mix with each prefill in chunks of ``chunk`` tokens (None: every
    prefill whole, also when none is longer than the chunk), its parts in order, and the
    part each task belongs to."""

    mix: Mix
    problem: Problem
    parts: tuple[Part, ...]
    part_of: dict[str, Part]
    chunk: int | None

    @property
    def request_of(self) -> dict[str, str]:
        """The request each task serves."""
        return {task: part.request for task, part in self.part_of.items()}

    def ops_of(self, request: str) -> list[str]:
        """The ops of ``request``, in problem order."""
        return [name for name, op in self.problem.ops.items()
                if self.part_of[op.task].request == request]


def chunkable(request: Request) -> bool:
    """True for a prefill that chunks (of a bundled family; an ONNX one runs whole)."""
    return request.phase == "prefill" and request.onnx is None


def parts(request: Request, chunk: int | None = None) -> list[Part]:
    """The layers ``request`` runs as: one, or a prefill's chunks of ``chunk`` tokens."""
    if not chunkable(request) or chunk is None or chunk >= request.tokens:
        return [Part(request.name, request.name, request.tokens, request.past)]
    return [Part(request.name, f"{request.name}-c{c}", min(chunk, request.tokens - lo),
                 request.past + lo, c)
            for c, lo in enumerate(range(0, request.tokens, chunk))]


@lru_cache(maxsize=16)
def _onnx_layer(path: str, dims: tuple[tuple[str, int], ...], matrix: tuple[str, ...]
                ) -> tuple[dict[str, Any], ...]:
    """The tasks of the ONNX graph ``path`` with ``dims`` bound, imported once per process
    (every chunking of a mix builds its problem anew; the import folds the whole graph)."""
    from models.onnx.graph import read_graph
    from models.onnx.lower import lower

    tasks, _ = lower(read_graph(path, dict(dims)), "error", matrix)
    return tuple({"name": t.name, "kind": t.kind, **t.params} for t in tasks)


def _layer_tasks(request: Request, part: Part, target: Target) -> list[dict[str, Any]]:
    """The unprefixed tasks of ``part``: its ONNX graph's, or its family's layer."""
    if request.onnx is not None:
        matrix = tuple(cost_model(target).matrix.accepted())
        return list(_onnx_layer(request.onnx, request.dims, matrix))
    family = next(m for m in MODELS if m.name == request.model)
    return layer(family, request.phase, part.tokens, part.past)["tasks"]


def request_tasks(request: Request, part: Part, target: Target) -> list[dict[str, Any]]:
    """The workload tasks of ``part`` of ``request`` on ``target``: its family's layer or
    its ONNX graph's tasks, every name prefixed."""
    tasks = []
    for task in _layer_tasks(request, part, target):
        spec = KINDS[task["kind"]].PARAMS
        tasks.append({key: (f"{part.prefix}-{value}"
                            if key == "name" or (key in spec and spec[key].kind == "tensor")
                            else value)
                      for key, value in task.items()})
    return tasks


def mix_workload(mix: Mix, target: Target, chunk: int | None = None
                 ) -> tuple[Workload, list[Part], dict[str, Part]]:
    """All requests of ``mix`` on ``target`` as one workload (file order), its parts in
    order, and the part each task belongs to."""
    tasks: list[dict[str, Any]] = []
    found: list[Part] = []
    part_of: dict[str, Part] = {}
    for i, request in enumerate(mix.requests):
        for part in parts(request, chunk):
            found.append(part)
            try:
                made = request_tasks(request, part, target)
            except InputError as error:  # the importer's refusal of an ONNX graph
                raise InputError(f"{error.source}: {error.message}", source=mix.source,
                                 path=json_path(json_path("$.requests", i), "model"),
                                 rule=error.rule) from None
            part_of.update((task["name"], part) for task in made)
            tasks += made
    document = {"format": WORKLOAD_FORMAT, "name": mix.name, "target": mix.target,
                "tasks": tasks}
    return workload_from_dict(document, mix.source), found, part_of


def _chunk_edges(problem: Problem, found: list[Part], rows: Mapping[str, int]
                 ) -> list[tuple[str, str]]:
    """Each load of a chunk's cache rows after every store of an earlier chunk's K or V
    that wrote them (``rows[prefix]``: the first cache row of that chunk's new tokens)."""
    stores: dict[tuple[str, str], list[tuple[int, int, str]]] = {}  # (request, k|v)
    loads: list[tuple[str, str, int, int, str]] = []  # (request, k|v, lo, hi, op)
    tensor_part = {f"{part.prefix}-{name}": (part, name)
                   for part in found if part.chunk is not None
                   for name in ("k", "v", *_CACHE)}
    for op_name, op in problem.ops.items():
        for access in op.writes:
            hit = tensor_part.get(access.tensor or "")
            if hit and hit[1] in ("k", "v") and access.box is not None:
                lo, hi = access.box[0]
                shift = rows[hit[0].prefix]
                stores.setdefault((hit[0].request, hit[1]), []).append(
                    (lo + shift, hi + shift, op_name))
        for access in op.reads:
            hit = tensor_part.get(access.tensor or "")
            if hit and hit[1] in _CACHE and access.box is not None:
                lo, hi = access.box[0]
                loads.append((hit[0].request, _CACHE[hit[1]], lo, hi, op_name))
    return [(store, load)
            for request, which, lo, hi, load in loads
            for s_lo, s_hi, store in stores.get((request, which), [])
            if s_lo < hi and lo < s_hi]


def mix_problem(mix: Mix, target: Target, chunk: int | None = None,
                max_ops: int = MAX_OPS) -> MixProblem:
    """The problem of ``mix`` on ``target``, each prefill in chunks of ``chunk`` tokens
    (None: whole); InputError if it cannot be tiled (see :func:`models.workload.tile`)."""
    if chunk is not None and chunk < 1:
        raise InputError(f"a chunk is at least one token, got {chunk}", source=mix.source,
                         rule="CHUNK")
    workload, found, part_of = mix_workload(mix, target, chunk)
    problem = tile(workload, target, max_ops)
    rows = {part.prefix: part.past for part in found}
    edges = _chunk_edges(problem, found, rows)
    if edges:
        problem = replace(problem, after=problem.after + tuple(edges))
    chunked = any(part.chunk is not None for part in found)
    return MixProblem(mix, problem, tuple(found), part_of, chunk if chunked else None)
