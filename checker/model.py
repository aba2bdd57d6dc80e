"""The checker's own reading of a schedule document: only what the legality rules need.

:mod:`checker.load` builds a :class:`Model` from the JSON document. Elements that failed a
FORMAT check are left out, and the section they belong to is dropped from
:attr:`Model.intact`, so a rule that needs a whole section (a partition, a "last write")
can tell that it would be judging an incomplete picture and stand aside.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Box", "Mode", "TensorAccess", "BufferAccess", "AccessLog", "OpDef", "Placement", "Tensor",
    "Task", "Buffer", "BufferPlacement", "Memory", "Model", "SECTIONS",
]

#: A box: one half-open ``(lo, hi)`` interval per dimension. The loader keeps the
#: document's own lists (``[[lo, hi], ...]``, never modified); boxes the rules derive
#: (clipped boxes, gaps) are tuples. Code reading boxes indexes and unpacks them only,
#: and turns them into tuples where it needs to hash or order them.
Box = Sequence[Sequence[int]]

#: Sections a rule may need whole; :attr:`Model.intact` holds those without FORMAT faults.
SECTIONS = frozenset({
    "lanes", "budgets", "memories", "tensors", "tasks", "buffers", "ops", "after",
    "schedule.ops", "schedule.buffers", "makespan",
})


@dataclass(slots=True)
class Mode:
    duration: int
    lanes: dict[str, int]
    budgets: dict[str, int]


@dataclass(slots=True)
class TensorAccess:
    tensor: str
    box: Box


@dataclass(slots=True)
class BufferAccess:
    """A buffer access with its byte range resolved (``bytes`` defaults to the whole buffer)."""

    buffer: str
    lo: int
    hi: int
    value: str | None


@dataclass(slots=True)
class AccessLog:
    """Every buffer access of the usable ops as the reader took them, as flat lists (one
    entry per access, an op's reads before its writes; ``ends[i]`` counts the accesses
    of the first ``i + 1`` usable ops): :mod:`checker.columns` turns them into arrays
    without walking the ops again."""

    buffer: list[int] = field(default_factory=list)  # index into Model.buffers
    lo: list[int] = field(default_factory=list)
    hi: list[int] = field(default_factory=list)
    value: list[str | None] = field(default_factory=list)
    write: list[bool] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)

    def truncate(self, mark: int) -> None:
        """Forget the accesses logged since there were ``mark`` (an op left out)."""
        for column in (self.buffer, self.lo, self.hi, self.value, self.write):
            del column[mark:]


@dataclass(slots=True)
class OpDef:
    task: str
    modes: list[Mode]
    space: Box | None
    tensor_reads: list[TensorAccess]
    tensor_writes: list[TensorAccess]
    buffer_reads: list[BufferAccess]
    buffer_writes: list[BufferAccess]


@dataclass(slots=True)
class Placement:
    mode: int
    start: int
    end: int
    units: dict[str, list[int]]

    @property
    def inverted(self) -> bool:
        """``end < start``: DURATION's fault. The window ``[start, end)`` is then empty, as
        a zero-length one is, but it has no instant either: the op holds and draws nothing,
        its accesses lie inside any buffer lifetime, its reads read nothing (never stale),
        its writes occupy no time (no race, never during a read) and become visible at
        ``end`` like any op's."""
        return self.end < self.start


@dataclass(slots=True)
class Tensor:
    shape: tuple[int, ...]
    role: str


@dataclass(slots=True)
class Task:
    space: Box | None
    outputs: dict[str, Box] | None


@dataclass(slots=True)
class Buffer:
    memory: str
    size: int
    align: int


@dataclass(slots=True)
class BufferPlacement:
    offset: int
    alloc: int
    free: int


@dataclass(slots=True)
class Memory:
    capacity: int
    alignment: int


@dataclass
class Model:
    """Everything usable in one schedule document, by name."""

    lanes: dict[str, int] = field(default_factory=dict)
    budgets: dict[str, int] = field(default_factory=dict)
    memories: dict[str, Memory] = field(default_factory=dict)
    tensors: dict[str, Tensor] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    buffers: dict[str, Buffer] = field(default_factory=dict)
    #: Problem ops whose definition is fully usable.
    ops: dict[str, OpDef] = field(default_factory=dict)
    #: Their buffer accesses, as flat lists.
    access_log: AccessLog = field(default_factory=AccessLog)
    #: Names of all problem ops, usable or not; ``None`` when ``ops`` is not an object.
    op_names: list[str] | None = None
    #: Usable placements, including those of ops the problem does not know.
    placements: dict[str, Placement] = field(default_factory=dict)
    #: Names of all scheduled ops; ``None`` when the schedule's ``ops`` is not an object.
    placed_names: list[str] | None = None
    buffer_places: dict[str, BufferPlacement] = field(default_factory=dict)
    after: list[tuple[str, str]] = field(default_factory=list)
    makespan: int | None = None
    intact: set[str] = field(default_factory=lambda: set(SECTIONS))
    #: Tables derived from the model that more than one rule uses, built once.
    memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def scheduled(self) -> list[tuple[str, OpDef, Placement]]:
        """Ops that are both usably defined and usably placed, in problem order.

        Computed once: the rules ask for it after loading is complete.
        """
        if "scheduled" not in self.memo:
            places = self.placements
            self.memo["scheduled"] = [(name, op, places[name]) for name, op in self.ops.items()
                                      if name in places]
        return self.memo["scheduled"]
