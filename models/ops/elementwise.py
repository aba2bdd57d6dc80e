"""An element-wise activation ``Y = f(X)`` (SiLU by default) on the vector engine.

Blocks (of whole rows, or of ``block_cols`` columns) are loaded, transformed by one
vector op (one mode per unit count) and stored. ``fn`` selects the activation and with
it the vector passes per element.
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
    build_rowwise,
    row_candidates,
    row_op_count,
)

__all__ = ["KIND", "PARAMS", "FUNCTIONS", "build", "candidates", "op_count"]

KIND = "elementwise"
FUNCTIONS = ("silu", "gelu", "relu", "sigmoid", "tanh")
PARAMS = {
    **ROW_PARAMS,
    "block_cols": COLS_PARAM,
    "units": UNITS_PARAM,
    "fn": Param("str", "silu", choices=FUNCTIONS, help="the activation"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the element-wise task ``name`` with parameters ``p`` (already checked) to ``b``."""
    build_rowwise(b, name, KIND, p, compute=(str(p["fn"]), VECTOR_PASSES[str(p["fn"])]))


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """The values of each tunable parameter worth trying (see :func:`row_candidates`)."""
    return row_candidates(p, model, units=True)


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load, the activation and a store."""
    return row_op_count(p, per_block=3)
