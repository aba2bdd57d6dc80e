"""Softmax over each row ``Y[r, :] = exp(X[r, :] - max) / sum(exp(X[r, :] - max))``.

Row-wise on the vector engine: a block always holds whole rows, since every output of a
row depends on all of its inputs (the row's maximum and sum). Element types: those the
target's vector engine lists (``costs.vector.dtypes``).
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

KIND = "softmax"
PARAMS = {
    **ROW_PARAMS,
    "units": UNITS_PARAM,
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the softmax task ``name`` with parameters ``p`` (already checked) to ``b``."""
    build_rowwise(b, name, KIND, p, compute=("softmax", VECTOR_PASSES["softmax"]))


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """The values of each tunable parameter worth trying (see :func:`row_candidates`)."""
    return row_candidates(p, model, units=True)


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load, the softmax and a store."""
    return row_op_count(p, per_block=3)
