"""The skeleton shared by row-wise operators: load a block of whole rows, work, store.

``[rows, cols]`` is split into blocks of ``block_rows`` whole rows (the last block may be
shorter). Each block is loaded into the vector engine's memory, optionally transformed
by one vector op (which may read a vector loaded once for the whole task, such as the
RMSNorm weight), and stored. The compute op of a block carries the block as its
``space``; an operator without compute gives the load the ``space`` instead, so that
every task's ops still partition its iteration space.
"""

from __future__ import annotations

from typing import Any

from models.cost import transfer_modes, vector_copy_mode, vector_modes
from models.formats import Access, Mode, Task
from models.ops.builder import ProblemBuilder, box_tag, split, value_access
from models.ops.params import Param

__all__ = ["ROW_PARAMS", "build_rowwise"]

#: Parameters every row-wise operator takes.
ROW_PARAMS = {
    "rows": Param("int", minimum=1, help="rows of the input and output"),
    "cols": Param("int", minimum=1, help="columns (a block always holds whole rows)"),
    "x": Param("tensor", "{task}.X", help="input tensor name"),
    "out": Param("tensor", "{task}.Y", help="output tensor name"),
    "block_rows": Param("int", 64, minimum=1, help="rows per block"),
}


def build_rowwise(b: ProblemBuilder, name: str, kind: str, p: dict[str, Any], *,
                  compute: tuple[str, int] | None, weight: str | None = None,
                  vector_copy: bool = False) -> None:
    """Add a row-wise task. ``compute`` is ``(op label, vector passes per element)`` or
    None for a plain copy; ``weight`` names a ``[cols]`` tensor loaded once and read by
    every compute op; ``vector_copy`` offers the vector engine as an alternative mode
    for the DDR transfers (when the target allows it)."""
    rows, cols, dtype = int(p["rows"]), int(p["cols"]), str(p["dtype"])
    x, y = str(p["x"]), str(p["out"])
    model = b.model
    memory = model.vector.memory
    b.tensor(x, (rows, cols), dtype, name, written=False)
    if weight is not None:
        b.tensor(weight, (cols,), dtype, name, written=False)
    b.tensor(y, (rows, cols), dtype, name, written=True)
    b.task(name, Task(kind=kind, space=((0, rows), (0, cols)),
                      outputs={y: ((0, rows), (0, cols))}, params=dict(p)))

    def transfer(engine_modes: tuple[Mode, ...], nbytes: int) -> tuple[Mode, ...]:
        extra = vector_copy_mode(model, nbytes) if vector_copy else None
        return engine_modes + ((extra,) if extra is not None else ())

    weight_read = None
    if weight is not None:
        box = ((0, cols),)
        weight_read = value_access(b.buffer(f"{name}.W", memory, b.bytes_of(weight, box)),
                                   box_tag(weight, box))
        b.op(f"{name}.ldW", name, transfer_modes(model, model.load, b.bytes_of(weight, box)),
             reads=(Access(tensor=weight, box=box),), writes=(weight_read,))
    for block in split(rows, int(p["block_rows"])):
        label = f"b{block.index}"
        space = ((block.lo, block.hi), (0, cols))
        nbytes = b.bytes_of(x, space)
        loaded = value_access(b.buffer(f"{name}.X.{label}", memory, nbytes),
                              box_tag(x, space))
        b.op(f"{name}.ldX.{label}", name,
             transfer(transfer_modes(model, model.load, nbytes), nbytes),
             reads=(Access(tensor=x, box=space),), writes=(loaded,),
             space=space if compute is None else None)
        result = loaded
        if compute is not None:
            op_label, passes = compute
            result = value_access(b.buffer(f"{name}.Y.{label}", memory, nbytes),
                                  box_tag(y, space))
            reads = (loaded,) if weight_read is None else (loaded, weight_read)
            b.op(f"{name}.{op_label}.{label}", name, vector_modes(model, nbytes, passes),
                 reads=reads, writes=(result,), space=space)
        b.op(f"{name}.st.{label}", name,
             transfer(transfer_modes(model, model.store, nbytes), nbytes),
             reads=(result,), writes=(Access(tensor=y, box=space),))
