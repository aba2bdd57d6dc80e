"""Rotary position embedding ``Y = X * cos + rotate_half(X) * sin`` over blocks of rows.

``X`` is ``[rows, cols]`` with each row a token and ``cols = heads * head_dim``, the way
a Q or K projection leaves it; ``cos`` and ``sin`` are ``[table_rows, head_dim]`` tables
(one row per position), loaded once and read by every block (a decode step's table is a
single row). Row blocks are loaded, rotated on the vector engine and stored. Priced by
bytes and passes like every vector kernel: :data:`PASSES` per element (an assumption:
the two products, the sum, and the half swap with its negation as one shuffle pass).
"""

from __future__ import annotations

from typing import Any

from models.cost import CostModel
from models.dtypes import DTYPE_BYTES
from models.ops.builder import ProblemBuilder
from models.ops.params import Param
from models.ops.rowwise import (
    ROW_PARAMS,
    UNITS_PARAM,
    Resident,
    build_rowwise,
    row_candidates,
    row_op_count,
)

__all__ = ["KIND", "PARAMS", "PASSES", "build", "candidates", "op_count"]

KIND = "rope"
#: Vector passes per element: x*cos, rotate_half(x)*sin, the sum, the half swap.
PASSES = 4
PARAMS = {
    **ROW_PARAMS,
    "units": UNITS_PARAM,
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
    "head_dim": Param("int", minimum=2, help="elements per head (a table row)"),
    "table_rows": Param("int", minimum=1, help="rows of the cos and sin tables"),
    "cos": Param("tensor", "{task}.cos", help="cos table [table_rows, head_dim]"),
    "sin": Param("tensor", "{task}.sin", help="sin table [table_rows, head_dim]"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the rotary-embedding task ``name`` with parameters ``p`` (already checked)."""
    table = (int(p["table_rows"]), int(p["head_dim"]))
    build_rowwise(b, name, KIND, p, compute=("rope", PASSES),
                  resident=(Resident("cos", str(p["cos"]), table),
                            Resident("sin", str(p["sin"]), table)))


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """The values of each tunable parameter worth trying (see :func:`row_candidates`)."""
    return row_candidates(p, model, units=True)


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load, the rotation and a store; each table is loaded once."""
    return row_op_count(p, per_block=3, once=2)
