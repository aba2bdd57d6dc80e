"""The placement sub-problem as plain data: buffers with fixed lifetimes, and the answer.

A buffer occupies the bytes ``[offset, offset + size)`` during the half-open lifetime
``[lower, upper)``; two buffers conflict when both ranges intersect. A buffer with
``lower == upper`` or ``size == 0`` conflicts with nothing but must still lie inside the
capacity (the checker's ``MEM_RANGE`` rule does not look at lifetimes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from models.errors import InputError
from schedsearch.engine.result import SolveStatus

__all__ = ["PlacementBuffer", "PlacementResult", "check_buffers", "max_load", "lower_bound"]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class PlacementBuffer:
    """One buffer: live over ``[lower, upper)``, ``size`` bytes, offset a multiple of
    ``align``; ``offset`` pins it (the engine keeps it where it is).

    The constructor refuses unusable values with an :class:`InputError` (rule ``FORMAT``)
    so that everything past it may assume clean integers.
    """

    id: str
    lower: int
    upper: int
    size: int
    align: int = 1
    offset: int | None = None

    def __post_init__(self) -> None:
        path = f"$[{self.id!r}]"
        if not isinstance(self.id, str) or not self.id:
            raise InputError("buffer id must be a non-empty string", path=path)
        for name in ("lower", "upper", "size", "align"):
            if not _is_int(getattr(self, name)):
                raise InputError(f"{name} must be an integer", path=f"{path}.{name}")
        if self.lower < 0:
            raise InputError(f"lower must be >= 0, got {self.lower}", path=f"{path}.lower")
        if self.upper < self.lower:
            raise InputError(f"upper {self.upper} < lower {self.lower}", path=f"{path}.upper")
        if self.size < 0:
            raise InputError(f"size must be >= 0, got {self.size}", path=f"{path}.size")
        if self.align < 1:
            raise InputError(f"alignment must be >= 1, got {self.align}", path=f"{path}.align")
        if self.offset is not None:
            if not _is_int(self.offset) or self.offset < 0:
                raise InputError("offset must be an integer >= 0", path=f"{path}.offset")
            if self.offset % self.align:
                raise InputError(f"offset {self.offset} is not a multiple of alignment "
                                 f"{self.align}", path=f"{path}.offset")

    @property
    def live(self) -> bool:
        """Whether the buffer can conflict with another one at all."""
        return self.upper > self.lower and self.size > 0


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """The answer of :func:`~schedsearch.engine.placement.place`.

    ``offsets`` holds every buffer when a placement was found and is empty otherwise;
    ``peak`` is the largest ``offset + size`` (0 without a placement); ``lower_bound`` the
    max-load bound (see :func:`lower_bound`); ``method`` names what found or refuted it.
    """

    #: ``OPTIMAL``: capacity mode solved, or minimise mode with the peak proved smallest;
    #: ``FEASIBLE``: minimise mode, a placement whose optimality is not proved;
    #: ``INFEASIBLE``: proved that no placement fits; ``NO_SOLUTION_IN_TIME``: no
    #: placement, no proof; ``NO_SOLUTION_FOUND``: the same, stopped by the caller's node
    #: budget instead of the clock (the search uses it; ``place`` never sets one).
    status: SolveStatus
    offsets: dict[str, int]
    peak: int
    lower_bound: int
    wall_s: float
    method: str = ""
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def placed(self) -> bool:
        return self.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)


def check_buffers(buffers: Iterable[PlacementBuffer]) -> list[PlacementBuffer]:
    """The buffers as a list, refusing a duplicated id (two buffers cannot share a name)."""
    result = list(buffers)
    seen: set[str] = set()
    for buffer in result:
        if not isinstance(buffer, PlacementBuffer):
            raise InputError(f"expected a PlacementBuffer, got {type(buffer).__name__}")
        if buffer.id in seen:
            raise InputError(f"duplicate buffer id {buffer.id!r}", path=f"$[{buffer.id!r}]")
        seen.add(buffer.id)
    return result


def max_load(buffers: Sequence[PlacementBuffer]) -> int:
    """The largest sum of sizes live at one instant (frees before allocations at a tick)."""
    events: list[tuple[int, int]] = []
    for buffer in buffers:
        if buffer.live:
            events.append((buffer.lower, buffer.size))
            events.append((buffer.upper, -buffer.size))
    events.sort()  # at equal times the negative (free) sorts first: half-open lifetimes
    best = load = 0
    for _, delta in events:
        load += delta
        best = max(best, load)
    return best


def lower_bound(buffers: Sequence[PlacementBuffer]) -> int:
    """No placement has a smaller peak: the max load, the largest buffer (zero-length ones
    included, they still need room) and the top of every pinned buffer."""
    bound = max_load(buffers)
    for buffer in buffers:
        bound = max(bound, buffer.size + (buffer.offset or 0))
    return bound
