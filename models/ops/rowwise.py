"""The skeleton shared by row-wise operators: load a block of whole rows, work, store.

``[rows, cols]`` is split into blocks of ``block_rows`` whole rows (the last block may be
shorter). Each block is loaded into the vector engine's memory, optionally transformed
by one vector op (which may read tensors loaded once for the whole task, such as the
RMSNorm weight, and a second operand loaded block by block beside the input, such as
the other summand of a residual add), and stored. The output may have another element
type than the input (``to``, a conversion); the vector op then streams the wider one.
The compute op of a block carries the block as its ``space``; an operator without
compute gives the load the ``space`` instead, so that every task's ops still partition
its iteration space.

Element-wise operators (``elementwise``, ``binary``) also take ``block_cols``: blocks of
``block_rows`` rows by ``block_cols`` columns, in column-block order (0, the default:
whole rows). Why: after a GEMM a block of whole rows needs every column tile the GEMM
writes, so it cannot start before the GEMM ends; a block of a few columns needs only
those tiles and runs beside the GEMM (a gated MLP's SiLU and product, measured in
docs/search.md, "Where the gap lies").

``depth`` bounds the input loads to that many blocks ahead of their first use
(:func:`~models.ops.builder.depth_edges`: 1 single, 2 double, 3 triple buffering, 0
unlimited). Operators with a vector compute op also take ``units``: how many vector
units each block's op uses (0, the default, offers every count and lets the search
choose). :func:`row_candidates` lists the configurations a tuner may try.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.cost import CostModel, transfer_modes, vector_copy_mode, vector_modes
from models.dtypes import DTYPE_BYTES
from models.formats import Access, Mode, Task
from models.ops.builder import DEPTHS, ProblemBuilder, box_tag, depth_edges, split, value_access
from models.ops.checks import require_vector_dtype
from models.ops.params import Param

__all__ = ["ROW_PARAMS", "COLS_PARAM", "SAME", "UNITS_PARAM", "ROW_BLOCKS", "Resident",
           "Beside", "build_rowwise", "row_candidates", "row_op_count"]

#: Parameters every row-wise operator takes.
ROW_PARAMS = {
    "rows": Param("int", minimum=1, help="rows of the input and output"),
    "cols": Param("int", minimum=1, help="columns (a block always holds whole rows)"),
    "x": Param("tensor", "{task}.X", help="input tensor name"),
    "out": Param("tensor", "{task}.Y", help="output tensor name"),
    "block_rows": Param("int", 64, minimum=1, help="rows per block"),
    "depth": Param("int", 0, minimum=0, help="input loads ahead of their use: 1 single, "
                                           "2 double, 3 triple buffering, 0 unlimited"),
}
#: The ``block_cols`` parameter of the element-wise operators (no row reduction).
COLS_PARAM = Param("int", 0, minimum=0, help="columns per block; 0: whole rows")
#: The ``units`` parameter of row-wise operators that compute on the vector engine.
UNITS_PARAM = Param("int", 0, minimum=0,
                    help="vector units per block op; 0 offers every count to the search")
#: Row-block sizes a tuner tries (capped at the task's rows).
ROW_BLOCKS = (16, 32, 64, 128, 256)


def row_candidates(p: dict[str, Any], model: CostModel, *,
                   units: bool) -> dict[str, tuple[Any, ...]]:
    """The values of each tunable parameter worth trying for a row-wise task.

    Block sizes from :data:`ROW_BLOCKS` capped at ``rows`` (one block holding every row
    is the largest that differs); unit counts 0 (search chooses), 1 and 2, up to what
    the vector engine has, when ``units`` says the operator computes on it.
    """
    rows = int(p["rows"])
    found = {"block_rows": tuple(sorted({min(size, rows) for size in ROW_BLOCKS})),
             "depth": DEPTHS}
    if units:
        found["units"] = tuple(u for u in (0, 1, 2) if u <= model.vector.max_units)
    return found


#: A type parameter's value meaning "the task's ``dtype``".
SAME = "same"


@dataclass(frozen=True, slots=True)
class Resident:
    """A tensor loaded once (op ``ld<label>``, buffer ``<task>.<label>``) and read by every
    compute op: a ``[cols]`` weight, or a ``[1]`` scalar."""

    label: str
    tensor: str
    shape: tuple[int, ...]
    #: its element type; None: the task's
    dtype: str | None = None


@dataclass(frozen=True, slots=True)
class Beside:
    """A second input loaded block by block beside the input (op ``ld<label>.b<i>``):
    ``[rows, cols]``, or ``[rows, 1]`` (one value per row)."""

    label: str
    tensor: str
    cols: int


def build_rowwise(b: ProblemBuilder, name: str, kind: str, p: dict[str, Any], *,
                  compute: tuple[str, int] | None, resident: tuple[Resident, ...] = (),
                  beside: Beside | None = None, vector_copy: bool = False) -> None:
    """Add a row-wise task. ``compute`` is ``(op label, vector passes per element)`` or
    None for a plain copy; ``resident`` tensors are loaded once and read by every compute
    op, ``beside`` is loaded per block and read by that block's op; ``vector_copy``
    offers the vector engine as an alternative mode for the DDR transfers (when the
    target allows it). ``p["to"]``, if present, is the output's element type."""
    rows, cols, dtype = int(p["rows"]), int(p["cols"]), str(p["dtype"])
    out_dtype = dtype if p.get("to", SAME) == SAME else str(p["to"])
    x, y = str(p["x"]), str(p["out"])
    model = b.model
    memory = model.vector.memory
    if compute is not None:
        require_vector_dtype(b, dtype)
        require_vector_dtype(b, out_dtype)
    b.tensor(x, (rows, cols), dtype, name, written=False)
    for extra in resident:
        b.tensor(extra.tensor, extra.shape, extra.dtype or dtype, name, written=False)
    if beside is not None:
        b.tensor(beside.tensor, (rows, beside.cols), dtype, name, written=False)
    b.tensor(y, (rows, cols), out_dtype, name, written=True)
    b.task(name, Task(kind=kind, space=((0, rows), (0, cols)),
                      outputs={y: ((0, rows), (0, cols))}, params=dict(p)))

    def transfer(engine_modes: tuple[Mode, ...], nbytes: int) -> tuple[Mode, ...]:
        extra = vector_copy_mode(model, nbytes) if vector_copy else None
        return engine_modes + ((extra,) if extra is not None else ())

    resident_reads = []
    for extra in resident:
        box = tuple((0, extent) for extent in extra.shape)
        nbytes = b.bytes_of(extra.tensor, box)
        read = value_access(b.buffer(f"{name}.{extra.label}", memory, nbytes),
                            box_tag(extra.tensor, box))
        b.op(f"{name}.ld{extra.label}", name, transfer_modes(model, model.load, nbytes),
             reads=(Access(tensor=extra.tensor, box=box),), writes=(read,))
        resident_reads.append(read)
    wanted = int(p.get("units", 0))
    if wanted > model.vector.max_units:
        raise b.fail(f"units {wanted} is more than the {model.vector.max_units} vector "
                     f"units of the target", "FIT")
    stream: list[tuple[str, str]] = []
    width = int(p.get("block_cols", 0)) or cols
    blocks = [(row, col) for col in split(cols, width)
              for row in split(rows, int(p["block_rows"]))]
    for block, col in blocks:
        label = f"b{block.index}" if width >= cols else f"b{block.index}c{col.index}"
        space = ((block.lo, block.hi), (col.lo, col.hi))
        nbytes = b.bytes_of(x, space)
        loaded = value_access(b.buffer(f"{name}.X.{label}", memory, nbytes),
                              box_tag(x, space))
        load = b.op(f"{name}.ldX.{label}", name,
                    transfer(transfer_modes(model, model.load, nbytes), nbytes),
                    reads=(Access(tensor=x, box=space),), writes=(loaded,),
                    space=space if compute is None else None)
        loads = [load]
        reads = [loaded, *resident_reads]
        if beside is not None:
            box = ((block.lo, block.hi), (col.lo, col.hi) if beside.cols == cols
                   else (0, beside.cols))
            size = b.bytes_of(beside.tensor, box)
            reads.append(value_access(b.buffer(f"{name}.{beside.label}.{label}", memory, size),
                                      box_tag(beside.tensor, box)))
            loads.append(b.op(f"{name}.ld{beside.label}.{label}", name,
                              transfer_modes(model, model.load, size),
                              reads=(Access(tensor=beside.tensor, box=box),),
                              writes=(reads[-1],)))
        out_bytes = nbytes * DTYPE_BYTES[out_dtype] // DTYPE_BYTES[dtype]
        result, first_use = loaded, None
        if compute is not None:
            op_label, passes = compute
            result = value_access(b.buffer(f"{name}.Y.{label}", memory, out_bytes),
                                  box_tag(y, space))
            wider = max((dtype, out_dtype), key=DTYPE_BYTES.__getitem__)
            modes = vector_modes(model, max(nbytes, out_bytes), passes, dtype=wider)
            if wanted:
                modes = tuple(m for m in modes if m.lanes[model.vector.lane] == wanted)
            first_use = b.op(f"{name}.{op_label}.{label}", name, modes,
                             reads=tuple(reads), writes=(result,), space=space)
        store = b.op(f"{name}.st.{label}", name,
                     transfer(transfer_modes(model, model.store, out_bytes), out_bytes),
                     reads=(result,), writes=(Access(tensor=y, box=space),))
        stream.extend((op, first_use or store) for op in loads)
    for pred, succ in depth_edges(stream, int(p["depth"])):
        b.edge(pred, succ)


def row_op_count(p: dict[str, Any], *, per_block: int, once: int = 0) -> int:
    """Ops of a row-wise task: ``per_block`` per block (a load, a store, a compute op, a
    per-block side load), plus ``once`` (resident loads)."""
    cols = int(p["cols"])
    width = int(p.get("block_cols", 0)) or cols
    blocks = -(-int(p["rows"]) // int(p["block_rows"])) * -(-cols // width)
    return per_block * blocks + once
