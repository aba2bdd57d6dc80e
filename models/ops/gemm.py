"""GEMM ``C[M,N] = A[M,K] @ B[K,N]`` tiled for a matrix engine with on-chip accumulators.

Per output block (m, n): the matrix engine accumulates over the K blocks into an
accumulator buffer (a chain ``acc(m0,n0)@k0 -> @k1 -> ...``), the vector engine converts
the accumulator to the output type, and a store writes the block to DDR. Operand blocks
are loaded from DDR into on-chip buffers; one loaded block serves every matrix op that
uses it, and ``order`` decides which blocks are shared, i.e. how much DMA traffic reuse
saves and how much memory it holds:

- ``mnk`` (default): an A block (m, k) is loaded once and serves every n; B blocks are
  loaded again for every m (A row panels stay resident).
- ``nmk``: a B block (k, n) is loaded once and serves every m; A blocks are loaded again
  for every n.
- ``kmn``: every A and B block is loaded exactly once (least traffic; every accumulator
  stays live across the whole K loop).

Block sizes are rounded up to the matrix tile (32 on HMX, 16 on Cube); shapes that the
blocks do not divide give shorter edge blocks, whose on-chip buffers are padded to whole
tiles (the matrix engine computes whole tiles).

``depth`` bounds each operand stream (A loads, B loads, in issue order) to that many
loads ahead of their first use (:func:`~models.ops.builder.depth_edges`): 1, 2, 3 are
single, double and triple buffering; 0 (the default) leaves the scheduler free.
:func:`candidates` lists the configurations a tuner may try.
"""

from __future__ import annotations

from models.cost import VECTOR_PASSES, CostModel, matrix_mode, transfer_modes, vector_modes
from models.dtypes import DTYPE_BYTES
from models.formats import Access, Task
from models.ops.builder import (
    DEPTHS,
    Block,
    ProblemBuilder,
    box_tag,
    depth_edges,
    round_up,
    split,
    value_access,
)
from models.ops.params import Param

__all__ = ["KIND", "PARAMS", "ORDERS", "BLOCKS", "build", "candidates"]

KIND = "gemm"
ORDERS = ("mnk", "nmk", "kmn")
PARAMS = {
    "M": Param("int", minimum=1, help="rows of A and C"),
    "N": Param("int", minimum=1, help="columns of B and C"),
    "K": Param("int", minimum=1, help="columns of A, rows of B (the reduction)"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type of A, B, C"),
    "a": Param("tensor", "{task}.A", help="tensor name of A"),
    "b": Param("tensor", "{task}.B", help="tensor name of B"),
    "out": Param("tensor", "{task}.C", help="tensor name of C"),
    "bm": Param("int", 128, minimum=1, help="block rows (rounded up to the matrix tile)"),
    "bn": Param("int", 128, minimum=1, help="block columns (rounded up to the tile)"),
    "bk": Param("int", 128, minimum=1, help="block depth (rounded up to the tile)"),
    "order": Param("str", "mnk", choices=ORDERS, help="loop order: which loads are shared"),
    "depth": Param("int", 0, minimum=0, help="loads of each operand stream ahead of their "
                                           "use: 1 single, 2 double, 3 triple buffering, "
                                           "0 unlimited"),
}
#: Block sizes a tuner tries: multiples of both the 32x32 HMX and the 16x16 Cube tile.
BLOCKS = (64, 128, 256)


def candidates(p: dict[str, object], model: CostModel) -> dict[str, tuple[object, ...]]:
    """The values of each tunable parameter worth trying for this task on this engine.

    Block sizes come from :data:`BLOCKS`, rounded up to the matrix tile and capped at the
    dimension (rounded up to the tile), so no two candidates tile the same way.
    """
    tile = model.matrix.tile

    def sizes(extent: int) -> tuple[int, ...]:
        whole = round_up(extent, tile)
        return tuple(sorted({min(round_up(size, tile), whole) for size in BLOCKS}))

    return {"bm": sizes(int(p["M"])), "bn": sizes(int(p["N"])), "bk": sizes(int(p["K"])),
            "order": ORDERS, "depth": DEPTHS}


def build(b: ProblemBuilder, name: str, p: dict[str, object]) -> None:
    """Add the GEMM task ``name`` with parameters ``p`` (already checked) to ``b``."""
    M, N, K = int(p["M"]), int(p["N"]), int(p["K"])
    dtype, order = str(p["dtype"]), str(p["order"])
    a, bt, c = str(p["a"]), str(p["b"]), str(p["out"])
    model = b.model
    matrix, vector = model.matrix, model.vector
    tile = matrix.tile
    elem = DTYPE_BYTES[dtype]
    b.tensor(a, (M, K), dtype, name, written=False)
    b.tensor(bt, (K, N), dtype, name, written=False)
    b.tensor(c, (M, N), dtype, name, written=True)
    b.task(name, Task(kind=KIND, space=((0, M), (0, N), (0, K)),
                      outputs={c: ((0, M), (0, N))}, params=dict(p)))
    ms = split(M, round_up(int(p["bm"]), tile))
    ns = split(N, round_up(int(p["bn"]), tile))
    ks = split(K, round_up(int(p["bk"]), tile))
    loaded: dict[str, Access] = {}
    #: per operand, (load op, first matrix op that reads it) in issue order
    streams: dict[str, list[tuple[str, str]]] = {"A": [], "B": []}
    fresh: list[tuple[str, str]] = []

    def load(operand: str, tensor: str, rows: Block, cols: Block, label: str) -> Access:
        """The buffer holding block ``rows x cols`` of ``tensor``, loaded on first use."""
        if label in loaded:
            return loaded[label]
        box = ((rows.lo, rows.hi), (cols.lo, cols.hi))
        value = box_tag(tensor, box)
        buffer = b.buffer(f"{name}.{operand}.{label}", matrix.memory,
                          round_up(rows.size, tile) * round_up(cols.size, tile) * elem)
        fresh.append((operand, b.op(f"{name}.ld{operand}.{label}", name,
                                    transfer_modes(model, model.load, b.bytes_of(tensor, box)),
                                    reads=(Access(tensor=tensor, box=box),),
                                    writes=(value_access(buffer, value),))))
        loaded[label] = value_access(buffer, value)
        return loaded[label]

    for m in ms:
        for n in ns:
            mn = f"m{m.index}.n{n.index}"
            acc = b.buffer(f"{name}.acc.{mn}", matrix.accumulator_memory,
                           round_up(m.size, tile) * round_up(n.size, tile)
                           * matrix.accumulator_bytes)
            previous: Access | None = None
            for k in ks:
                a_label = f"m{m.index}.k{k.index}" + (f".n{n.index}" if order == "nmk" else "")
                b_label = f"k{k.index}.n{n.index}" + (f".m{m.index}" if order == "mnk" else "")
                reads = [load("A", a, m, k, a_label), load("B", bt, k, n, b_label)]
                if previous is not None:
                    reads.append(previous)
                written = value_access(acc, f"acc({mn.replace('.', ',')})@k{k.index}")
                mm = b.op(f"{name}.mm.{mn}.k{k.index}", name,
                          (matrix_mode(model, m.size, n.size, k.size),),
                          reads=tuple(reads), writes=(written,),
                          space=((m.lo, m.hi), (n.lo, n.hi), (k.lo, k.hi)))
                for operand, op in fresh:
                    streams[operand].append((op, mm))
                fresh.clear()
                previous = written
            assert previous is not None
            box = ((m.lo, m.hi), (n.lo, n.hi))
            value = box_tag(c, box)
            out = b.buffer(f"{name}.C.{mn}", vector.memory, b.bytes_of(c, box))
            b.op(f"{name}.cvt.{mn}", name,
                 vector_modes(model, b.size_of(acc), VECTOR_PASSES["convert"],
                              max_units=1),
                 reads=(previous,), writes=(value_access(out, value),))
            b.op(f"{name}.st.{mn}", name,
                 transfer_modes(model, model.store, b.bytes_of(c, box)),
                 reads=(value_access(out, value),), writes=(Access(tensor=c, box=box),))
    for stream in streams.values():
        for pred, succ in depth_edges(stream, int(p["depth"])):
            b.edge(pred, succ)
