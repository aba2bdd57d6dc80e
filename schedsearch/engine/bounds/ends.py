"""Sharper heads and tails at the two ends of each lane kind's work.

Why. ``head(i)`` and ``tail(i)`` (:mod:`.phases`) are forced paths at the shortest
durations: they let every transfer on a path run at full bandwidth beside every other.
Before the first GEMM tile of a prefill layer both RMSNorm row blocks are loaded, normed,
stored and loaded again, with the tile's weights; two DMA queues and 60 units of DDR
bandwidth cannot carry all of that at once at full speed. On Qwen2.5-0.5B prefill v75 the
path says the first tile starts at 12,025 ns or later; the small scheduling problem of
its ancestors alone cannot end before 15,382. After the last tile, the residual add of
both row blocks waits for the last column's store and crosses DDR twice: path 9,204,
least makespan of the descendants 12,071 (the search's schedules end exactly so).

Argument. Every ancestor of ``i`` along the forced order ends before ``i`` starts, and a
legal schedule restricted to them is a legal schedule of the small problem made of
them alone (fewer ops draw less; memory is left out, which only relaxes), so ``start(i)``
is at least that problem's least makespan, and at least CP-SAT's proven bound on it.
Mirrored, every descendant of ``i`` runs inside ``[end(i), makespan]``, so ``tail(i)``
may be raised to the least makespan of its descendants. Each raised value is a valid
head or tail in every legal schedule, so every part built on heads and tails
(``head_tail:K``, ``phases:K``, ``windows``) stays valid.

Which ops. A part uses most the least head and tail over a lane kind's ops. Per lane kind
K, K's ops are sharpened in increasing path head until the next one's path head reaches
the least head found so far (then no later op can lower it), at most
:data:`MAX_SHARPENED` of them, each closure of at most :data:`MAX_CLOSURE` ops (an op with
a larger one keeps its path, and ends the walk); tails alike. Equal closures are solved
once. The small problems are :mod:`.gap`'s CP-SAT patterns without buffers (one worker,
seed 0, a deterministic work limit), so the figure repeats at any load.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from models.formats import Problem, Target
from models.validate import usable_modes
from schedsearch.engine.bounds.gap import Pattern, Piece, mode_key, price_pattern
from schedsearch.engine.bounds.phases import ForcedOrder, OpTables

__all__ = ["MAX_CLOSURE", "MAX_SHARPENED", "SOLVE_WORK", "sharpened_order"]

#: Ops an ancestor or descendant set may have for its small problem to be solved.
MAX_CLOSURE = 64
#: Ops sharpened per lane kind and end.
MAX_SHARPENED = 32
#: CP-SAT's deterministic work (its seconds) per small problem. On the bundled prefill
#: layers these problems have 8-20 ops and prove optimal far sooner.
SOLVE_WORK = 0.25


class _Closures:
    """Ancestor and descendant sets along the forced edges, cut off at a size."""

    def __init__(self, n_ops: int, edges: np.ndarray) -> None:
        self.preds: list[list[int]] = [[] for _ in range(n_ops)]
        self.succs: list[list[int]] = [[] for _ in range(n_ops)]
        for a, b in edges.tolist():
            self.preds[b].append(a)
            self.succs[a].append(b)

    def of(self, op: int, backward: bool) -> frozenset[int] | None:
        """``op``'s ancestors (``backward``) or descendants, or None past
        :data:`MAX_CLOSURE`."""
        links = self.preds if backward else self.succs
        seen: set[int] = set()
        stack = [op]
        while stack:
            for other in links[stack.pop()]:
                if other not in seen:
                    if len(seen) == MAX_CLOSURE:
                        return None
                    seen.add(other)
                    stack.append(other)
        return frozenset(seen)


class _SmallProblems:
    """The least makespan (CP-SAT's proven bound) of a set of ops with their forced edges,
    lanes and budgets, each set solved once."""

    def __init__(self, problem: Problem, target: Target, closures: _Closures) -> None:
        self.target, self.closures = target, closures
        self.modes = [tuple(mode_key(op.modes[k]) for k in usable_modes(op.modes, target))
                      for op in problem.ops.values()]
        self.solved: dict[frozenset[int], int] = {}

    def least(self, ops: frozenset[int]) -> int:
        if not ops:
            return 0
        if ops not in self.solved:
            members = sorted(ops)
            index = {op: k for k, op in enumerate(members)}
            inside = [(index[a], index[b]) for b in members
                      for a in self.closures.preds[b] if a in index]
            piece = Piece(tuple(self.modes[op] for op in members), (), tuple(inside))
            length = price_pattern(Pattern(0, None, None, (piece,)), self.target,
                                   SOLVE_WORK).length
            self.solved[ops] = 0 if length is None else length  # None: cannot happen
        return self.solved[ops]


def _sharpen(values: np.ndarray, kops: np.ndarray, closures: _Closures,
             small: _SmallProblems, backward: bool) -> None:
    """Raise ``values`` (heads with ``backward``, else tails) of the ops of one lane
    kind, least first, while one of them could still lower their least value."""
    least = None
    for op in kops[np.argsort(values[kops], kind="stable")][:MAX_SHARPENED].tolist():
        if least is not None and values[op] >= least:
            break
        closure = closures.of(op, backward)
        if closure is not None:
            values[op] = max(int(values[op]), small.least(closure))
        least = int(values[op]) if least is None else min(least, int(values[op]))
        if closure is None:
            break


def sharpened_order(problem: Problem, target: Target, tables: OpTables,
                    order: ForcedOrder) -> ForcedOrder:
    """``order`` with the heads and tails of each lane kind's first and last ops raised
    to the least makespans of their ancestors and descendants (module docstring)."""
    closures = _Closures(order.n_ops, order.edges)
    small = _SmallProblems(problem, target, closures)
    head, tail = order.head.copy(), order.tail.copy()
    for kind in target.lanes:
        kops = np.flatnonzero(tables.work[kind] > 0)
        if len(kops):
            _sharpen(head, kops, closures, small, backward=True)
            _sharpen(tail, kops, closures, small, backward=False)
    return replace(order, head=head, tail=tail)
