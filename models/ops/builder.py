"""Assembling an ``npu-problem/1`` from operator tilings, with the ordering they imply.

The operator modules only say what each op reads and writes; this builder adds the
``after`` edges that follow from it, so none can be forgotten: a buffer read of a value
is ordered after the one op that wrote that value, and a read of a tensor region that
another task produces is ordered after every store that wrote part of it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from models.cost import CostModel
from models.dtypes import DTYPE_BYTES
from models.errors import InputError
from models.formats import Access, Box, Buffer, Mode, Op, Problem, Target, Task, Tensor

__all__ = ["ProblemBuilder", "Block", "split", "round_up", "box_tag", "value_access",
           "depth_edges", "DEPTHS"]

#: Buffer depths a tuner tries (see :func:`depth_edges`): unlimited, single, double, triple.
DEPTHS = (0, 1, 2, 3)


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a split dimension: its index and half-open range."""

    index: int
    lo: int
    hi: int

    @property
    def size(self) -> int:
        return self.hi - self.lo


def split(extent: int, block: int) -> list[Block]:
    """``[0, extent)`` in blocks of ``block``; the last one is shorter when it does not divide."""
    return [Block(i, lo, min(lo + block, extent))
            for i, lo in enumerate(range(0, extent, block))]


def box_tag(tensor: str, box: Box) -> str:
    """A readable value tag for a tensor region: ``A[0:128,0:256]``."""
    return f"{tensor}[{','.join(f'{lo}:{hi}' for lo, hi in box)}]"


def value_access(buffer: str, value: str) -> Access:
    """An access to the whole of ``buffer`` holding ``value`` (for reads and writes)."""
    return Access(buffer=buffer, value=value)


def depth_edges(stream: list[tuple[str, str]], depth: int) -> list[tuple[str, str]]:
    """The ``after`` edges that limit a load stream to ``depth`` loads ahead of their use.

    ``stream`` lists ``(load op, first op that reads what it loaded)`` in issue order; the
    edge ``(first reader of load i, load i + depth)`` lets load ``i + depth`` start only
    once load ``i`` has been consumed: depth 1 is single buffering (no load overlaps the
    compute of the previous block), 2 double, 3 triple; 0 adds nothing (unlimited).
    The first reader, not the last, is the one that counts: a block that stays resident
    for reuse (a GEMM row panel) would otherwise hold back loads that its later readers
    themselves wait for. Every edge runs from an op built earlier to one built later, so
    the edges cannot form a cycle.
    """
    if depth <= 0:
        return []
    return [(stream[i][1], stream[i + depth][0]) for i in range(len(stream) - depth)]


@dataclass
class _TensorUse:
    shape: tuple[int, ...]
    dtype: str
    writer: str | None = None
    readers: set[str] = field(default_factory=set)


class ProblemBuilder:
    """Collects tensors, tasks, buffers and ops for one target; :meth:`build` finishes."""

    def __init__(self, target: Target, model: CostModel, source: str) -> None:
        self.target = target
        self.model = model
        self.source = source
        self.path = "$"
        self._tensors: dict[str, _TensorUse] = {}
        self._tasks: dict[str, Task] = {}
        self._buffers: dict[str, Buffer] = {}
        self._ops: dict[str, Op] = {}
        self._after: dict[tuple[str, str], None] = {}
        self._value_writer: dict[tuple[str, str], str] = {}
        #: per tensor, per first-dimension range: the boxes written and their writers
        self._tensor_writes: dict[str, dict[tuple[int, int], list[tuple[Box, str]]]] = \
            defaultdict(lambda: defaultdict(list))

    # ------------------------------------------------------------------ declarations
    def fail(self, message: str, rule: str) -> InputError:
        return InputError(message, source=self.source, path=self.path, rule=rule)

    def tensor(self, name: str, shape: tuple[int, ...], dtype: str, task: str, *,
               written: bool) -> None:
        """Declare that ``task`` reads (or writes) tensor ``name`` with this shape and type."""
        use = self._tensors.get(name)
        if use is None:
            use = self._tensors[name] = _TensorUse(shape, dtype)
        elif (use.shape, use.dtype) != (shape, dtype):
            raise self.fail(f"tensor {name!r} is used as {list(shape)} {dtype} here but as "
                            f"{list(use.shape)} {use.dtype} by another task", "SHAPE")
        if written:
            if use.writer is not None:
                raise self.fail(f"tensor {name!r} is written by tasks {use.writer!r} and "
                                f"{task!r}; each tensor has one producer", "TENSOR")
            if task in use.readers:
                raise self.fail(f"task {task!r} reads and writes tensor {name!r}", "TENSOR")
            use.writer = task
        else:
            if use.writer == task:
                raise self.fail(f"task {task!r} reads and writes tensor {name!r}", "TENSOR")
            use.readers.add(task)

    def task(self, name: str, task: Task) -> None:
        self._tasks[name] = task

    def buffer(self, name: str, memory: str, size: int) -> str:
        """A new buffer aligned to its memory's alignment; returns its name."""
        assert name not in self._buffers, name
        align = self.target.memories[memory].alignment_bytes
        self._buffers[name] = Buffer(memory, size, align)
        return name

    def size_of(self, buffer: str) -> int:
        return self._buffers[buffer].size

    def bytes_of(self, tensor: str, box: Box) -> int:
        return math.prod(hi - lo for lo, hi in box) * DTYPE_BYTES[self._tensors[tensor].dtype]

    def op(self, name: str, task: str, modes: tuple[Mode, ...], *,
           reads: tuple[Access, ...] = (), writes: tuple[Access, ...] = (),
           space: Box | None = None) -> str:
        """Add an op; reads of buffer values are ordered after the op that wrote them."""
        assert name not in self._ops, name
        for access in reads:
            if access.buffer is not None:
                self.edge(self._value_writer[(access.buffer, access.value or "")], name)
        for access in writes:
            if access.buffer is not None:
                key = (access.buffer, access.value or "")
                assert key not in self._value_writer, key
                self._value_writer[key] = name
            elif access.tensor is not None and access.box is not None:
                self._tensor_writes[access.tensor][access.box[0]].append((access.box, name))
        self._ops[name] = Op(task=task, modes=modes, reads=reads, writes=writes, space=space)
        return name

    def edge(self, pred: str, succ: str) -> None:
        self._after[(pred, succ)] = None

    # ------------------------------------------------------------------ finishing
    def build(self, name: str, meta: dict[str, Any]) -> Problem:
        """The problem, with tensor roles and the edges from producers of temp tensors."""
        for op_name, op in self._ops.items():
            for access in op.reads:
                if access.tensor is None or access.box is None:
                    continue
                for (lo, hi), writes in self._tensor_writes.get(access.tensor, {}).items():
                    if lo < access.box[0][1] and access.box[0][0] < hi:
                        for box, writer in writes:
                            if _intersects(box, access.box):
                                self.edge(writer, op_name)
        tensors = {}
        for tensor, use in self._tensors.items():
            role = "input" if use.writer is None else "temp" if use.readers else "output"
            tensors[tensor] = Tensor(use.shape, use.dtype, role)
        return Problem(name=name, tensors=tensors, tasks=dict(self._tasks),
                       buffers=dict(self._buffers), ops=dict(self._ops),
                       after=tuple(self._after), meta=meta)


def _intersects(a: Box, b: Box) -> bool:
    return all(lo1 < hi2 and lo2 < hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b, strict=True))
