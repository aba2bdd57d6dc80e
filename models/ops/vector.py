"""A generic vector pass: what an imported node nobody mapped costs when the user asks
for it to be priced (``--unknown vector``) rather than refused.

The node's inputs and output are seen as bytes: a load of ``in_bytes`` into the vector
engine's memory, one pass over ``in_bytes + out_bytes`` on the vector engine, a store of
the output. It reads the tensor ``x`` (its first input, ``[x_rows, x_cols]``) and writes
``out`` (``[rows, cols]``); its other inputs are counted in ``in_bytes`` but not named.
An estimate by construction: the task's ``op_type`` says what it stands for.
"""

from __future__ import annotations

from typing import Any

from models.cost import CostModel, transfer_modes, vector_modes
from models.dtypes import DTYPE_BYTES
from models.formats import Access, Task
from models.ops.builder import ProblemBuilder, box_tag, value_access
from models.ops.params import Param

__all__ = ["KIND", "PARAMS", "build", "candidates", "op_count"]

KIND = "vector"
PARAMS = {
    "op_type": Param("str", "unknown", help="the ONNX op type this pass stands for"),
    "in_bytes": Param("int", minimum=1, help="bytes of every input together"),
    "x_rows": Param("int", minimum=1, help="rows of the first input"),
    "x_cols": Param("int", minimum=1, help="columns of the first input"),
    "x_dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="its element type"),
    "rows": Param("int", minimum=1, help="rows of the output"),
    "cols": Param("int", minimum=1, help="columns of the output"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="its element type"),
    "x": Param("tensor", "{task}.X", help="first input"),
    "out": Param("tensor", "{task}.Y", help="output"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the generic vector task ``name`` with parameters ``p`` (already checked)."""
    model = b.model
    memory = model.vector.memory
    x, out = str(p["x"]), str(p["out"])
    x_box = ((0, int(p["x_rows"])), (0, int(p["x_cols"])))
    box = ((0, int(p["rows"])), (0, int(p["cols"])))
    b.tensor(x, (int(p["x_rows"]), int(p["x_cols"])), str(p["x_dtype"]), name, written=False)
    b.tensor(out, (int(p["rows"]), int(p["cols"])), str(p["dtype"]), name, written=True)
    b.task(name, Task(kind=KIND, space=box, outputs={out: box}, params=dict(p)))
    in_bytes, out_bytes = int(p["in_bytes"]), b.bytes_of(out, box)
    loaded = value_access(b.buffer(f"{name}.X", memory, in_bytes), box_tag(x, x_box))
    b.op(f"{name}.ld", name, transfer_modes(model, model.load, in_bytes),
         reads=(Access(tensor=x, box=x_box),), writes=(loaded,))
    result = value_access(b.buffer(f"{name}.Y", memory, out_bytes), box_tag(out, box))
    b.op(f"{name}.pass", name, vector_modes(model, in_bytes + out_bytes, 1),
         reads=(loaded,), writes=(result,), space=box)
    b.op(f"{name}.st", name, transfer_modes(model, model.store, out_bytes),
         reads=(result,), writes=(Access(tensor=out, box=box),))


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """Nothing to tune."""
    return {}


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """A load, the pass and a store."""
    return 3
