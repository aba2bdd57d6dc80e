"""One LNS window's answer, repeated wherever the incumbent looks the same.

Why. Tiled problems repeat: on the tight wide pair at 7,966 ops the 498 windows where
the bus idles most fall into 6 kinds of 82-83 each (the same ops, modes and relative
starts, a GEMM row and an RMSNorm block further on). LNS solved them one CP-SAT model
at a time, 4 per round of about 0.45 s there, and ran out of time with most of them
untouched. An answer that helps one of them helps every window that looks the same.

What "looks the same" means: the same ops, one for one in start order, where an op is
known by its task, its modes and the sizes of the buffers it touches; each in the same
mode and at the same start relative to the window's first; and the same for the
:data:`CONTEXT` ranks before and after the window (what runs across its edges). A copy
of the answer gives each op of the other window the start (relative to its first) and
mode that its counterpart has in the answer, and moves every op after it left by the
answer's shift, as the answer itself does. A copy is only a candidate: the caller
merges copies with :func:`~.merge.merge_windows`, which checks every precedence and
capacity, and places the buffers.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.instance import Instance
from schedsearch.engine.merge import WindowAnswer
from schedsearch.engine.solution import Solution

__all__ = ["op_kinds", "Lookalikes", "CONTEXT"]

#: Ranks before and after a window that must look the same too.
CONTEXT = 12


def op_kinds(inst: Instance) -> list[int]:
    """Per op a number, the same for ops of one task with the same modes and buffer
    sizes (a GEMM tile's loads, its computes, an RMSNorm block's store...)."""
    seen: dict[Hashable, int] = {}
    return [seen.setdefault((inst.op_task[v], inst.modes[v],
                             tuple(inst.buffer_size[b] for b in inst.op_buffers[v])),
                            len(seen)) for v in range(inst.n_ops)]


class Lookalikes:
    """The windows of one incumbent that look the same as a given one: per rank, the
    op's kind and mode, and the gap to the next rank's start (equal gaps over a range
    are equal relative starts), as lists whose slices compare at C speed."""

    def __init__(self, inst: Instance, inc: Incumbent, kinds: Sequence[int]) -> None:
        self.inst, self.inc = inst, inc
        self.codes: list[tuple[int, int] | None] = [
            (kinds[v], inc.solution.modes[v]) if v < inst.n_ops else None
            for v in inc.ranked]
        starts = [inc.starts[v] for v in inc.ranked]
        self.gaps = [b - a for a, b in zip(starts[:-1], starts[1:], strict=True)]

    def _matches(self, first: int, other: int, size: int) -> bool:
        lo, hi, shift = first - CONTEXT, first + size + CONTEXT, other - first
        return (self.codes[lo:hi] == self.codes[lo + shift:hi + shift] and
                self.gaps[lo:hi - 1] == self.gaps[lo + shift:hi - 1 + shift])

    def copies(self, answer: WindowAnswer, taken: Sequence[WindowAnswer]
               ) -> list[WindowAnswer]:
        """``answer`` (a window of the incumbent) repeated at every window that looks
        the same, with :data:`CONTEXT` ranks on each side, and meets none of ``taken``
        (nor, with its context, another copy), in start order."""
        inst, inc = self.inst, self.inc
        first, size = answer.first, answer.size
        lo, hi = first - CONTEXT, first + size + CONTEXT
        if lo < 0 or hi > len(self.codes) or None in self.codes[lo:hi]:
            return []
        busy = [(a.first - CONTEXT, a.first + a.size + CONTEXT) for a in taken]
        t0 = inc.starts[inc.ranked[first]]
        shift = _tail_shift(inst, inc, answer)
        own = inc.ranked[first:first + size]
        found: list[WindowAnswer] = []
        other = CONTEXT
        while other + size + CONTEXT <= len(self.codes):
            if self.codes[other] != self.codes[first] or any(
                    b_lo < other + size + CONTEXT and other - CONTEXT < b_hi
                    for b_lo, b_hi in busy) or not self._matches(first, other, size):
                other += 1
                continue
            found.append(WindowAnswer(other, size, _copied(inst, inc, answer.solution, own,
                                                           t0, other, shift)))
            busy.append((other - CONTEXT, other + size + CONTEXT))
            other += size + 2 * CONTEXT
        return found


def _tail_shift(inst: Instance, inc: Incumbent, answer: WindowAnswer) -> int:
    """How far ``answer`` moved the ops after its window left (0 where none follow)."""
    after = inc.ranked[answer.first + answer.size:]
    op = next((v for v in after if v < inst.n_ops), None)
    return 0 if op is None else inc.starts[op] - answer.solution.starts[op]


def _copied(inst: Instance, inc: Incumbent, solved: Solution, own: Sequence[int], t0: int,
            first: int, shift: int) -> Solution:
    """The incumbent with the window at rank ``first`` given the starts (relative to its
    first) and modes that ``own``, the answer's window, has in ``solved``, and every op
    after it moved left by ``shift``."""
    modes, starts = list(inc.solution.modes), list(inc.solution.starts)
    here = inc.starts[inc.ranked[first]]
    end = first + len(own)
    for v in inc.ranked[end:]:
        if v < inst.n_ops:
            starts[v] -= shift
    for a, v in zip(own, inc.ranked[first:end], strict=True):
        modes[v] = solved.modes[a]
        starts[v] = here + solved.starts[a] - t0
    return Solution(tuple(modes), tuple(starts), inc.solution.offsets)
