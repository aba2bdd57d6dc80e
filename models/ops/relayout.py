"""A layout conversion ``Y = X`` between ``row`` and ``tiled`` (:mod:`models.layouts`).

The conversion is an explicit task with its own cost, never a free assumption inside
another kernel. Row blocks (``block_rows`` whole rows) go DDR -> on-chip -> DDR, and the
layout changes on the way in one of two ways (``engine``):

- ``dma``: the load is a 2-D descriptor that gathers the block into the other layout
  (:func:`models.layouts.strided_modes`, the strided rate); the store is contiguous.
  The load carries the block's ``space``.
- ``vector``: a contiguous load, one vector pass of ``relayout_passes`` per element that
  rewrites the block in the other layout (one mode per unit count, carrying the
  ``space``), and a contiguous store.

``src`` and ``dst`` name the two layouts and must differ (rule ``LAYOUT``).
"""

from __future__ import annotations

from typing import Any

from models.cost import CostModel, transfer_modes, vector_modes
from models.dtypes import DTYPE_BYTES
from models.formats import Access, Task
from models.layouts import RELAYOUT_KIND, Layout, layout_costs, strided_modes
from models.ops.builder import ProblemBuilder, box_tag, split, value_access
from models.ops.params import Param
from models.ops.rowwise import ROW_BLOCKS, row_op_count

__all__ = ["KIND", "PARAMS", "ENGINES", "build", "candidates", "op_count"]

KIND = RELAYOUT_KIND
ENGINES = ("dma", "vector")
_LAYOUTS = tuple(layout.value for layout in Layout)
PARAMS = {
    "rows": Param("int", minimum=1, help="rows of the input and output"),
    "cols": Param("int", minimum=1, help="columns"),
    "x": Param("tensor", "{task}.X", help="input tensor name (in layout src)"),
    "out": Param("tensor", "{task}.Y", help="output tensor name (in layout dst)"),
    "src": Param("str", "row", choices=_LAYOUTS, help="layout of the input"),
    "dst": Param("str", "tiled", choices=_LAYOUTS, help="layout of the output"),
    "engine": Param("str", "dma", choices=ENGINES,
                    help="dma: a 2-D descriptor load; vector: a vector-engine pass"),
    "block_rows": Param("int", 64, minimum=1, help="rows per block"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the conversion task ``name`` with parameters ``p`` (already checked) to ``b``."""
    if p["src"] == p["dst"]:
        raise b.fail(f"src and dst are both {p['src']!r}: nothing to convert", "LAYOUT")
    rows, cols, dtype = int(p["rows"]), int(p["cols"]), str(p["dtype"])
    x, y = str(p["x"]), str(p["out"])
    model = b.model
    costs = layout_costs(b.target)
    memory = model.vector.memory
    b.tensor(x, (rows, cols), dtype, name, written=False)
    b.tensor(y, (rows, cols), dtype, name, written=True)
    b.task(name, Task(kind=KIND, space=((0, rows), (0, cols)),
                      outputs={y: ((0, rows), (0, cols))}, params=dict(p)))
    by_dma = p["engine"] == "dma"
    for block in split(rows, int(p["block_rows"])):
        label = f"b{block.index}"
        space = ((block.lo, block.hi), (0, cols))
        nbytes = b.bytes_of(x, space)
        loaded = value_access(b.buffer(f"{name}.X.{label}", memory, nbytes),
                              box_tag(x, space) + ("@" + str(p["dst"]) if by_dma else ""))
        b.op(f"{name}.ld.{label}", name,
             strided_modes(model, costs, nbytes) if by_dma
             else transfer_modes(model, model.load, nbytes),
             reads=(Access(tensor=x, box=space),), writes=(loaded,),
             space=space if by_dma else None)
        result = loaded
        if not by_dma:
            result = value_access(b.buffer(f"{name}.Y.{label}", memory, nbytes),
                                  box_tag(y, space))
            b.op(f"{name}.cv.{label}", name,
                 vector_modes(model, nbytes, costs.relayout_passes, dtype=dtype),
                 reads=(loaded,), writes=(result,), space=space)
        b.op(f"{name}.st.{label}", name, transfer_modes(model, model.store, nbytes),
             reads=(result,), writes=(Access(tensor=y, box=space),))


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """The values worth trying: both engines and the row-block sizes of row-wise kinds."""
    rows = int(p["rows"])
    return {"engine": ENGINES,
            "block_rows": tuple(sorted({min(size, rows) for size in ROW_BLOCKS}))}


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load and a store, and a vector pass between them unless the DMA
    engine converts on the way in."""
    return row_op_count(p, per_block=2 if p["engine"] == "dma" else 3)
