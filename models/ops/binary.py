"""A binary element-wise op ``Y = X fn Z`` (add, sub, mul, div) with broadcasting.

``X`` is ``[rows, cols]``; the second operand ``Z`` (parameter ``y``) is one of:

- ``none``: ``[rows, cols]``, loaded block by block beside ``X``;
- ``row``: ``[cols]``, one row broadcast to every row, loaded once (a bias);
- ``col``: ``[rows, 1]``, one value per row, loaded block by block;
- ``scalar``: ``[1]``, loaded once.

``swap = 1`` computes ``Z fn X`` (the broadcast operand first, as in ``1 - x``); it does
not change the schedule. Row blocks are computed on the vector engine (one mode per
unit count). Element types: those the target's vector engine lists.
"""

from __future__ import annotations

from typing import Any

from models.cost import VECTOR_PASSES, CostModel
from models.dtypes import DTYPE_BYTES
from models.ops.builder import ProblemBuilder
from models.ops.params import Param
from models.ops.rowwise import (
    COLS_PARAM,
    ROW_PARAMS,
    UNITS_PARAM,
    Beside,
    Resident,
    build_rowwise,
    row_candidates,
    row_op_count,
)

__all__ = ["KIND", "PARAMS", "op_count", "FUNCTIONS", "BROADCASTS", "build", "candidates"]

KIND = "binary"
FUNCTIONS = ("add", "sub", "mul", "div")
BROADCASTS = ("none", "row", "col", "scalar")
PARAMS = {
    **ROW_PARAMS,
    "block_cols": COLS_PARAM,
    "units": UNITS_PARAM,
    "fn": Param("str", "add", choices=FUNCTIONS, help="the operation"),
    "y": Param("tensor", "{task}.Z", help="tensor name of the second operand"),
    "broadcast": Param("str", "none", choices=BROADCASTS,
                       help="shape of the second operand: none [rows, cols], row [cols], "
                            "col [rows, 1], scalar [1]"),
    "swap": Param("int", 0, minimum=0, help="1: compute y fn x instead of x fn y"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the binary task ``name`` with parameters ``p`` (already checked) to ``b``."""
    if int(p["swap"]) > 1:
        raise b.fail(f"swap must be 0 or 1, got {p['swap']}", "FORMAT")
    y, form, cols = str(p["y"]), str(p["broadcast"]), int(p["cols"])
    resident = {"row": (Resident("Z", y, (cols,)),), "scalar": (Resident("Z", y, (1,)),)}
    beside = {"none": Beside("Z", y, cols), "col": Beside("Z", y, 1)}
    fn = str(p["fn"])
    build_rowwise(b, name, KIND, p, compute=(fn, VECTOR_PASSES[fn]),
                  resident=resident.get(form, ()), beside=beside.get(form))


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """The values of each tunable parameter worth trying (see :func:`row_candidates`)."""
    return row_candidates(p, model, units=True)


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load, the op and a store, and a load of the second operand beside it
    (``none``, ``col``) or once for the task (``row``, ``scalar``)."""
    if p["broadcast"] in ("none", "col"):
        return row_op_count(p, per_block=4)
    return row_op_count(p, per_block=3, once=1)
