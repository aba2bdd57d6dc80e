"""The skeleton shared by row-wise operators: load a block of whole rows, work, store.

``[rows, cols]`` is split into blocks of ``block_rows`` whole rows (the last block may be
shorter). Each block is loaded into the vector engine's memory, optionally transformed
by one vector op (which may read a vector loaded once for the whole task, such as the
RMSNorm weight), and stored. The compute op of a block carries the block as its
``space``; an operator without compute gives the load the ``space`` instead, so that
every task's ops still partition its iteration space.

``depth`` bounds the input loads to that many blocks ahead of their first use
(:func:`~models.ops.builder.depth_edges`: 1 single, 2 double, 3 triple buffering, 0
unlimited). Operators with a vector compute op also take ``units``: how many vector
units each block's op uses (0, the default, offers every count and lets the search
choose). :func:`row_candidates` lists the configurations a tuner may try.
"""

from __future__ import annotations

from typing import Any

from models.cost import CostModel, transfer_modes, vector_copy_mode, vector_modes
from models.formats import Access, Mode, Task
from models.ops.builder import DEPTHS, ProblemBuilder, box_tag, depth_edges, split, value_access
from models.ops.params import Param

__all__ = ["ROW_PARAMS", "UNITS_PARAM", "ROW_BLOCKS", "build_rowwise", "row_candidates"]

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
    wanted = int(p.get("units", 0))
    if wanted > model.vector.max_units:
        raise b.fail(f"units {wanted} is more than the {model.vector.max_units} vector "
                     f"units of the target", "FIT")
    stream: list[tuple[str, str]] = []
    for block in split(rows, int(p["block_rows"])):
        label = f"b{block.index}"
        space = ((block.lo, block.hi), (0, cols))
        nbytes = b.bytes_of(x, space)
        loaded = value_access(b.buffer(f"{name}.X.{label}", memory, nbytes),
                              box_tag(x, space))
        load = b.op(f"{name}.ldX.{label}", name,
                    transfer(transfer_modes(model, model.load, nbytes), nbytes),
                    reads=(Access(tensor=x, box=space),), writes=(loaded,),
                    space=space if compute is None else None)
        result, first_use = loaded, None
        if compute is not None:
            op_label, passes = compute
            result = value_access(b.buffer(f"{name}.Y.{label}", memory, nbytes),
                                  box_tag(y, space))
            reads = (loaded,) if weight_read is None else (loaded, weight_read)
            modes = vector_modes(model, nbytes, passes)
            if wanted:
                modes = tuple(m for m in modes if m.lanes[model.vector.lane] == wanted)
            first_use = b.op(f"{name}.{op_label}.{label}", name, modes,
                             reads=reads, writes=(result,), space=space)
        store = b.op(f"{name}.st.{label}", name,
                     transfer(transfer_modes(model, model.store, nbytes), nbytes),
                     reads=(result,), writes=(Access(tensor=y, box=space),))
        stream.append((load, first_use or store))
    for pred, succ in depth_edges(stream, int(p["depth"])):
        b.edge(pred, succ)
