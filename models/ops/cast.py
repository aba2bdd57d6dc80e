"""A conversion ``Y = X`` from one element type (``dtype``) to another (``to``).

Row blocks are loaded, converted on the vector engine (streaming the wider of the two
types; one mode per unit count) and stored in the new type. Both types must be ones
the target's vector engine lists.
"""

from __future__ import annotations

from typing import Any

from models.cost import VECTOR_PASSES, CostModel
from models.dtypes import DTYPE_BYTES
from models.ops.builder import ProblemBuilder
from models.ops.params import Param
from models.ops.rowwise import (
    ROW_PARAMS,
    UNITS_PARAM,
    build_rowwise,
    row_candidates,
    row_op_count,
)

__all__ = ["KIND", "PARAMS", "op_count", "build", "candidates"]

KIND = "cast"
PARAMS = {
    **ROW_PARAMS,
    "units": UNITS_PARAM,
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type of X"),
    "to": Param("str", choices=tuple(DTYPE_BYTES), help="element type of Y"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the conversion task ``name`` with parameters ``p`` (already checked) to ``b``."""
    build_rowwise(b, name, KIND, p, compute=("cast", VECTOR_PASSES["convert"]))


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """The values of each tunable parameter worth trying (see :func:`row_candidates`)."""
    return row_candidates(p, model, units=True)


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load, the conversion and a store."""
    return row_op_count(p, per_block=3)
