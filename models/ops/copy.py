"""A copy ``Y = X`` through on-chip memory: DDR -> on-chip -> DDR, block by block.

Each transfer runs on a copy engine (one mode per rate) or, where the target allows it,
driven by the vector engine itself (HVX loads and stores through L2 on Hexagon), which
frees the copy engines at a lower rate. The load of a block carries its ``space``.
"""

from __future__ import annotations

from typing import Any

from models.cost import CostModel
from models.dtypes import DTYPE_BYTES
from models.ops.builder import ProblemBuilder
from models.ops.params import Param
from models.ops.rowwise import ROW_PARAMS, build_rowwise, row_candidates, row_op_count

__all__ = ["KIND", "PARAMS", "build", "candidates", "op_count"]

KIND = "copy"
PARAMS = {
    **ROW_PARAMS,
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the copy task ``name`` with parameters ``p`` (already checked) to ``b``."""
    build_rowwise(b, name, KIND, p, compute=None, vector_copy=True)


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """The values of each tunable parameter worth trying (see :func:`row_candidates`)."""
    return row_candidates(p, model, units=False)


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load and a store."""
    return row_op_count(p, per_block=2)
