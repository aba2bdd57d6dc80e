"""The scheduled ops and their buffer accesses as NumPy columns, built once per model.

Most rules loop over every scheduled op or every buffer access in Python, and on a legal
schedule find nothing. With the same facts as arrays, a rule first asks NumPy whether
anything at all can be wrong (a vector test that is exact where it says "nothing"), and
runs its Python pass, which finds and names the violations, only on what the test could
not clear. The rules' semantics live in those Python passes; the vector tests only decide
where they need not run.

Rows keep the model's order: ops in problem order (:meth:`Model.scheduled`), accesses by
op and then as the op lists them, reads and writes apart. A rule that builds records for
part of the rows (by a mask) therefore meets them in the order its full pass would.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from checker.model import Model

__all__ = ["Accesses", "Columns", "columns"]

@dataclass(frozen=True, slots=True)
class Accesses:
    """One kind of buffer access (reads or writes) of the scheduled ops, a row each."""

    op: np.ndarray      # index into Columns.names
    buffer: np.ndarray  # index into Columns.buffers
    lo: np.ndarray
    hi: np.ndarray
    value: np.ndarray   # the value (a string, or None): an object array


@dataclass(frozen=True, slots=True)
class Columns:
    """The scheduled ops (``names``, ``start``, ``end``) and their buffer accesses."""

    names: list[str]
    start: np.ndarray
    end: np.ndarray
    #: Buffer names of the problem, in order; accesses name them by index.
    buffers: list[str]
    reads: Accesses
    writes: Accesses


def columns(m: Model) -> Columns:
    """The model's columns, built on first use (after loading) and kept in ``m.memo``."""
    if "columns" not in m.memo:
        m.memo["columns"] = _build(m)
    return m.memo["columns"]


def _build(m: Model) -> Columns:
    """From the reader's :class:`~checker.model.AccessLog`: the rows of usable ops that
    are also placed, renumbered by their place among the scheduled ops."""
    scheduled = m.scheduled()
    start = np.array([p.start for _, _, p in scheduled], dtype=np.int64)
    end = np.array([p.end for _, _, p in scheduled], dtype=np.int64)
    if len(scheduled) == len(m.ops):  # the common case: every usable op is placed
        names = list(m.ops)
        placed = np.ones(len(names), dtype=bool)
    else:
        names = [name for name, _, _ in scheduled]
        places = m.placements
        placed = np.array([name in places for name in m.ops], dtype=bool)
    position = np.cumsum(placed) - 1
    log = m.access_log
    counts = np.diff(np.array(log.ends, dtype=np.int64), prepend=0)
    owner = np.repeat(np.arange(len(m.ops), dtype=np.int64), counts)
    kept = placed[owner]
    write = np.array(log.write, dtype=bool)
    rows = [position[owner], np.array(log.buffer, dtype=np.int64),
            np.array(log.lo, dtype=np.int64), np.array(log.hi, dtype=np.int64),
            np.array(log.value, dtype=object)]
    reads = Accesses(*(column[kept & ~write] for column in rows))
    writes = Accesses(*(column[kept & write] for column in rows))
    return Columns(names, start, end, list(m.buffers), reads, writes)
