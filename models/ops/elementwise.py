"""An element-wise activation ``Y = f(X)`` (SiLU by default) on the vector engine.

Row blocks are loaded, transformed by one vector op (one mode per unit count) and
stored. ``fn`` selects the activation and with it the vector passes per element.
"""

from __future__ import annotations

from typing import Any

from models.cost import VECTOR_PASSES
from models.dtypes import DTYPE_BYTES
from models.ops.builder import ProblemBuilder
from models.ops.params import Param
from models.ops.rowwise import ROW_PARAMS, build_rowwise

__all__ = ["KIND", "PARAMS", "FUNCTIONS", "build"]

KIND = "elementwise"
FUNCTIONS = ("silu", "gelu", "relu")
PARAMS = {
    **ROW_PARAMS,
    "fn": Param("str", "silu", choices=FUNCTIONS, help="the activation"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the element-wise task ``name`` with parameters ``p`` (already checked) to ``b``."""
    build_rowwise(b, name, KIND, p, compute=(str(p["fn"]), VECTOR_PASSES[str(p["fn"])]))
