"""Row gather ``Y[i, :] = TABLE[ids[i], :]`` (an embedding lookup) as DMA reads from DDR.

Which rows are read depends on the ids, known only when the model runs; the schedule
needs only how many bytes move. Each block of ``block_rows`` ids is one copy-engine op
that reads rows of the ``[table_rows, cols]`` table in DDR (its access names the whole
table: any row may be read) and writes them to the block's rows of ``Y`` in DDR, moving
``block_rows * cols`` elements. The ids themselves (a few bytes per row) are not
modelled.
"""

from __future__ import annotations

from typing import Any

from models.cost import CostModel, transfer_modes
from models.dtypes import DTYPE_BYTES
from models.formats import Access, Task
from models.ops.builder import ProblemBuilder, split
from models.ops.params import Param

__all__ = ["KIND", "PARAMS", "build", "candidates", "op_count"]

KIND = "gather"
PARAMS = {
    "rows": Param("int", minimum=1, help="ids looked up (rows of the output)"),
    "cols": Param("int", minimum=1, help="elements per table row"),
    "table_rows": Param("int", minimum=1, help="rows of the table"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
    "table": Param("tensor", "{task}.table", help="the table [table_rows, cols]"),
    "out": Param("tensor", "{task}.Y", help="output [rows, cols]"),
    "block_rows": Param("int", 64, minimum=1, help="ids per DMA op"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the gather task ``name`` with parameters ``p`` (already checked) to ``b``."""
    rows, cols, dtype = int(p["rows"]), int(p["cols"]), str(p["dtype"])
    table, out = str(p["table"]), str(p["out"])
    b.tensor(table, (int(p["table_rows"]), cols), dtype, name, written=False)
    b.tensor(out, (rows, cols), dtype, name, written=True)
    b.task(name, Task(kind=KIND, space=((0, rows), (0, cols)),
                      outputs={out: ((0, rows), (0, cols))}, params=dict(p)))
    whole = ((0, int(p["table_rows"])), (0, cols))
    for block in split(rows, int(p["block_rows"])):
        box = ((block.lo, block.hi), (0, cols))
        b.op(f"{name}.rows.b{block.index}", name,
             transfer_modes(b.model, b.model.load, b.bytes_of(out, box)),
             reads=(Access(tensor=table, box=whole),),
             writes=(Access(tensor=out, box=box),), space=box)


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """Blocks of 16 to 256 ids (capped at the rows)."""
    rows = int(p["rows"])
    return {"block_rows": tuple(sorted({min(s, rows) for s in (16, 64, 256)}))}


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """One op per block of ids."""
    return -(-int(p["rows"]) // int(p["block_rows"]))
