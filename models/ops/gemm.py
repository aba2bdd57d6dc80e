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

Batched (``batch`` > 1): ``C[b] = A[b] @ B[b]`` for every ``b``, the batches stacked
along the rows of 2-D tensors (A ``[batch*M, K]``, B ``[batch*K, N]``, C ``[batch*M, N]``),
which is how a batched ``MatMul`` of ``[..., M, K]`` tensors lies in memory; with
``b_batch = 0`` every batch shares one ``B[K, N]`` (a weight), loaded as for one GEMM.
The iteration space is ``[batch*M, N, K]``; no block crosses a batch boundary.
``b_col0`` / ``b_cols``: B is columns ``[b_col0, b_col0 + N)`` of a weight stored with
``b_cols`` columns (one part of a fused projection such as Phi-3's ``qkv_proj``).
``b_bits`` = 8 or 4: B (a weight) is stored quantised, int8 (an ``i8`` tensor) or int4
(a ``u8`` tensor holding two values per byte along K, stored transposed ``[N, K/2]``, as
ONNX Runtime's ``MatMulNBits`` packs it): each B block streams from DDR at its stored
width (1 or 0.5 bytes per element), lands in a buffer of the vector engine's memory, and
a vector op dequantises it into the matrix engine's ``dtype`` block
(``VECTOR_PASSES["dequantize"]`` passes per element of the dequantised block: an
assumption, as every pass count). The scales (and zero points) are not loaded: per block
of 32 int4 values they add 1/16 byte per element, left out.
``trans_a`` / ``trans_b`` = 1 read an operand stored transposed (A ``[K, M]``, B
``[N, K]``, per batch): the load moves the same bytes with a 2-D descriptor into the
matrix engine's tile layout, at the same cost (an assumption, as for every rate).

Element types: those the target's matrix engine lists (``costs.matrix.dtypes``; on
Hexagon f16 and i8, i8 accumulating in i32); anything else, f32 above all, is refused
(rule ``DTYPE``): f32 runs on the vector engine only.

``depth`` bounds each operand stream (A loads, B loads, in issue order) to that many
loads ahead of their first use (:func:`~models.ops.builder.depth_edges`): 1, 2, 3 are
single, double and triple buffering; 0 (the default) leaves the scheduler free.
:func:`candidates` lists the configurations a tuner may try.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.cost import VECTOR_PASSES, CostModel, matrix_mode, transfer_modes, vector_modes
from models.dtypes import DTYPE_BYTES
from models.formats import Access, Box, Task
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
from models.ops.checks import require_matrix_dtype, require_vector_dtype
from models.ops.params import Param

__all__ = ["KIND", "PARAMS", "ORDERS", "BLOCKS", "Operand", "build", "candidates",
           "accumulate", "convert_and_store", "op_count"]

KIND = "gemm"
ORDERS = ("mnk", "nmk", "kmn")
PARAMS = {
    "M": Param("int", minimum=1, help="rows of A and C (per batch)"),
    "N": Param("int", minimum=1, help="columns of B and C"),
    "K": Param("int", minimum=1, help="columns of A, rows of B (the reduction)"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type of A, B, C"),
    "a": Param("tensor", "{task}.A", help="tensor name of A"),
    "b": Param("tensor", "{task}.B", help="tensor name of B"),
    "out": Param("tensor", "{task}.C", help="tensor name of C"),
    "batch": Param("int", 1, minimum=1, help="independent products, stacked along rows"),
    "b_batch": Param("int", 1, minimum=0, help="1: B has a block per batch; 0: one B "
                                               "shared by every batch"),
    "trans_a": Param("int", 0, minimum=0, help="1: A is stored transposed ([K, M])"),
    "trans_b": Param("int", 0, minimum=0, help="1: B is stored transposed ([N, K])"),
    "b_col0": Param("int", 0, minimum=0, help="first of B's stored columns this product "
                                              "uses (a fused projection's part)"),
    "b_cols": Param("int", 0, minimum=0, help="columns B is stored with; 0: N"),
    "b_bits": Param("int", 0, minimum=0, help="0: B stored in dtype; 8 or 4: "
                                                       "stored quantised, dequantised "
                                                       "after each load"),
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


@dataclass(frozen=True, slots=True)
class Operand:
    """Where a logical ``[rows, cols]`` matrix lies in a stored 2-D tensor: from row
    ``row0`` and column ``col0``, or transposed (stored ``[cols, rows]``)."""

    tensor: str
    row0: int = 0
    col0: int = 0
    transposed: bool = False
    #: logical elements per stored element along the stored columns (2: int4 packed)
    pack: int = 1

    def box(self, rows: Block, cols: Block) -> Box:
        """The stored region holding logical block ``rows x cols``."""
        if self.transposed:
            rows, cols = cols, rows
        return ((self.row0 + rows.lo, self.row0 + rows.hi),
                (self.col0 + cols.lo // self.pack, self.col0 + -(-cols.hi // self.pack)))


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


def accumulate(b: ProblemBuilder, name: str, label: str, m: Block, n: Block,
               ks: list[Block], operands: list[tuple[Access, Access]], dtype: str,
               spaces: list[Box] | None) -> tuple[Access, int]:
    """The matrix ops of output block ``label``: one per K block, each reading its two
    operand blocks (``operands[k]``, already loaded) and the previous partial sum, with
    ``spaces[k]`` as its space (None: the ops carry none), chained through one
    accumulator buffer (values ``acc(label)@k0``, ``@k1`` ...). Returns the last value
    and the accumulator's size in bytes."""
    matrix = b.model.matrix
    rate = matrix.rate(dtype)
    assert rate is not None
    tile = matrix.tile
    size = round_up(m.size, tile) * round_up(n.size, tile) * rate.accumulator_bytes
    acc = b.buffer(f"{name}.acc.{label}", matrix.accumulator_memory, size)
    previous: Access | None = None
    for j, k in enumerate(ks):
        reads = list(operands[j])
        if previous is not None:
            reads.append(previous)
        written = value_access(acc, f"acc({label.replace('.', ',')})@k{k.index}")
        b.op(f"{name}.mm.{label}.k{k.index}", name,
             (matrix_mode(b.model, m.size, n.size, k.size, dtype),),
             reads=tuple(reads), writes=(written,),
             space=None if spaces is None else spaces[j])
        previous = written
    assert previous is not None
    return previous, size


def convert_and_store(b: ProblemBuilder, name: str, label: str, acc: Access, acc_size: int,
                      out: str, box: Box, dtype: str) -> None:
    """Convert a finished accumulator to ``dtype`` on the vector engine (one unit), then
    store it to region ``box`` of tensor ``out``."""
    model = b.model
    value = box_tag(out, box)
    buffer = b.buffer(f"{name}.C.{label}", model.vector.memory, b.bytes_of(out, box))
    b.op(f"{name}.cvt.{label}", name,
         vector_modes(model, acc_size, VECTOR_PASSES["convert"], max_units=1, dtype=dtype),
         reads=(acc,), writes=(value_access(buffer, value),))
    b.op(f"{name}.st.{label}", name, transfer_modes(model, model.store, b.bytes_of(out, box)),
         reads=(value_access(buffer, value),), writes=(Access(tensor=out, box=box),))


def build(b: ProblemBuilder, name: str, p: dict[str, object]) -> None:
    """Add the GEMM task ``name`` with parameters ``p`` (already checked) to ``b``."""
    M, N, K = int(p["M"]), int(p["N"]), int(p["K"])
    batch = int(p["batch"])
    dtype, order = str(p["dtype"]), str(p["order"])
    a, bt, c = str(p["a"]), str(p["b"]), str(p["out"])
    flags = {key: int(p[key]) for key in ("b_batch", "trans_a", "trans_b")}
    for key, value in flags.items():
        if value > 1:
            raise b.fail(f"{key} must be 0 or 1, got {value}", "FORMAT")
    require_matrix_dtype(b, dtype)
    require_vector_dtype(b, dtype)
    shared_b = batch > 1 and not flags["b_batch"]
    b_count = 1 if shared_b else batch
    model = b.model
    matrix = model.matrix
    tile = matrix.tile
    elem = DTYPE_BYTES[dtype]
    b.tensor(a, (batch * K, M) if flags["trans_a"] else (batch * M, K), dtype, name,
             written=False)
    b_col0, b_cols = int(p["b_col0"]), int(p["b_cols"]) or N
    if b_col0 + N > b_cols:
        raise b.fail(f"columns {b_col0}..{b_col0 + N} of B lie outside its {b_cols} "
                     f"columns", "SHAPE")
    bits = int(p["b_bits"])
    if bits not in (0, 4, 8):
        raise b.fail(f"b_bits must be 0, 4 or 8, got {bits}", "FORMAT")
    pack = 2 if bits == 4 else 1
    if pack > 1 and not flags["trans_b"]:
        raise b.fail("an int4 B (b_bits = 4) is stored transposed, packed along K: "
                     "trans_b must be 1", "FORMAT")
    b_dtype = {0: dtype, 8: "i8", 4: "u8"}[bits]
    b.tensor(bt, (b_count * b_cols, -(-K // pack)) if flags["trans_b"] else (b_count * K, b_cols),
             b_dtype, name, written=False)
    b.tensor(c, (batch * M, N), dtype, name, written=True)
    b.task(name, Task(kind=KIND, space=((0, batch * M), (0, N), (0, K)),
                      outputs={c: ((0, batch * M), (0, N))}, params=dict(p)))
    ms = split(M, round_up(int(p["bm"]), tile))
    ns = split(N, round_up(int(p["bn"]), tile))
    ks = split(K, round_up(int(p["bk"]), tile))
    loaded: dict[str, Access] = {}
    #: per operand, (load op, first matrix op that reads it) in issue order
    streams: dict[str, list[tuple[str, str]]] = {"A": [], "B": []}
    fresh: list[tuple[str, str]] = []

    def load(operand: str, where: Operand, rows: Block, cols: Block, label: str) -> Access:
        """The buffer holding logical block ``rows x cols`` of an operand, loaded on first
        use."""
        if label in loaded:
            return loaded[label]
        box = where.box(rows, cols)
        value = box_tag(where.tensor, box)
        size = round_up(rows.size, tile) * round_up(cols.size, tile) * elem
        stored = b.bytes_of(where.tensor, box)
        quantised = operand == "B" and bits > 0
        target = (f"{name}.{operand}q.{label}", model.vector.memory, stored) if quantised \
            else (f"{name}.{operand}.{label}", matrix.memory, size)
        buffer = b.buffer(*target)
        fresh.append((operand, b.op(f"{name}.ld{operand}.{label}", name,
                                    transfer_modes(model, model.load, stored),
                                    reads=(Access(tensor=where.tensor, box=box),),
                                    writes=(value_access(buffer, value),))))
        loaded[label] = value_access(buffer, value)
        if quantised:  # dequantise into the matrix engine's type
            wide = b.buffer(f"{name}.{operand}.{label}", matrix.memory, size)
            b.op(f"{name}.dq{operand}.{label}", name,
                 vector_modes(model, rows.size * cols.size * elem,
                              VECTOR_PASSES["dequantize"], dtype=dtype),
                 reads=(loaded[label],), writes=(value_access(wide, f"dq({value})"),))
            loaded[label] = value_access(wide, f"dq({value})")
        return loaded[label]

    for i in range(batch):
        prefix = f"b{i}." if batch > 1 else ""
        a_at = Operand(a, row0=i * (K if flags["trans_a"] else M),
                       transposed=bool(flags["trans_a"]))
        b_row0 = 0 if shared_b else i * (b_cols if flags["trans_b"] else K)
        b_at = Operand(bt, row0=b_row0 + (b_col0 if flags["trans_b"] else 0),
                       col0=0 if flags["trans_b"] else b_col0,
                       transposed=bool(flags["trans_b"]), pack=pack)
        b_prefix = "" if shared_b else prefix
        for m in ms:
            for n in ns:
                mn = f"{prefix}m{m.index}.n{n.index}"

                pairs = []
                for k in ks:
                    a_label = (f"{prefix}m{m.index}.k{k.index}"
                               + (f".n{n.index}" if order == "nmk" else ""))
                    b_label = (f"{b_prefix}k{k.index}.n{n.index}"
                               + (f".{prefix}m{m.index}" if order == "mnk" else ""))
                    pairs.append((load("A", a_at, m, k, a_label),
                                  load("B", b_at, k, n, b_label)))
                    for operand, op in fresh:
                        streams[operand].append((op, f"{name}.mm.{mn}.k{k.index}"))
                    fresh.clear()
                spaces = [((i * M + m.lo, i * M + m.hi), (n.lo, n.hi), (k.lo, k.hi))
                          for k in ks]
                acc, size = accumulate(b, name, mn, m, n, ks, pairs, dtype, spaces)
                convert_and_store(b, name, mn, acc, size, c,
                                  ((i * M + m.lo, i * M + m.hi), (n.lo, n.hi)), dtype)
    for stream in streams.values():
        for pred, succ in depth_edges(stream, int(p["depth"])):
            b.edge(pred, succ)


def op_count(p: dict[str, object], model: CostModel) -> int:
    """The ops :func:`build` adds, from the block counts alone: per batch and output block
    a matrix op per K block, a convert and a store; the loads that ``order`` shares (see
    the module docstring)."""
    tile = model.matrix.tile
    nm, nn, nk = (-(-int(p[dim]) // round_up(int(p[block]), tile))
                  for dim, block in (("M", "bm"), ("N", "bn"), ("K", "bk")))
    batch, order = int(p["batch"]), str(p["order"])
    b_count = 1 if batch > 1 and not int(p["b_batch"]) else batch
    a_loads = batch * nm * nk * (nn if order == "nmk" else 1)
    b_loads = batch * nm * nk * nn if order == "mnk" else b_count * nk * nn
    dequantise = b_loads if int(p["b_bits"]) else 0
    return batch * nm * nn * (nk + 2) + a_loads + b_loads + dequantise
