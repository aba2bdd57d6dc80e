"""RMSNorm ``Y[r, :] = X[r, :] / sqrt(mean(X[r, :]^2) + eps) * W`` over blocks of rows.

Row blocks are loaded, normalised on the vector engine (in one mode per unit count: two
units finish a block sooner) and stored; the weight vector ``W[cols]`` is loaded once and
read by every block (unless ``has_weight`` is 0: a norm without a learned scale, as some
exporters write it). The weight is read as stored (``weight_dtype``: an f16 norm may read
an f32 weight), and ``to`` gives the output another type (an f32 norm whose result is
cast to f16 in the same pass). ``eps`` does not change the schedule; it is kept in the
task's ``params`` so the problem still says what was computed.
"""

from __future__ import annotations

from typing import Any

from models.cost import VECTOR_PASSES, CostModel
from models.dtypes import DTYPE_BYTES
from models.ops.builder import ProblemBuilder
from models.ops.params import Param
from models.ops.rowwise import (
    ROW_PARAMS,
    SAME,
    UNITS_PARAM,
    Resident,
    build_rowwise,
    row_candidates,
    row_op_count,
)

__all__ = ["KIND", "PARAMS", "build", "candidates", "op_count"]

KIND = "rmsnorm"
PARAMS = {
    **ROW_PARAMS,
    "units": UNITS_PARAM,
    "eps": Param("number", 1e-6, minimum=0, help="added to the mean square"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
    "weight": Param("tensor", "{task}.W", help="tensor name of the [cols] weight"),
    "has_weight": Param("int", 1, minimum=0, help="0: no weight"),
    "weight_dtype": Param("str", SAME, choices=(SAME, *DTYPE_BYTES),
                          help="element type the weight is stored in"),
    "to": Param("str", SAME, choices=(SAME, *DTYPE_BYTES), help="element type of the output"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the RMSNorm task ``name`` with parameters ``p`` (already checked) to ``b``."""
    if int(p["has_weight"]) > 1:
        raise b.fail(f"has_weight must be 0 or 1, got {p['has_weight']}", "FORMAT")
    stored = None if p["weight_dtype"] == SAME else str(p["weight_dtype"])
    resident = ((Resident("W", str(p["weight"]), (int(p["cols"]),), stored),)
                if int(p["has_weight"]) else ())
    build_rowwise(b, name, KIND, p, compute=("norm", VECTOR_PASSES["rmsnorm"]),
                  resident=resident)


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """The values of each tunable parameter worth trying (see :func:`row_candidates`)."""
    return row_candidates(p, model, units=True)


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load, the norm and a store; the weight is loaded once."""
    return row_op_count(p, per_block=3, once=int(p["has_weight"]))
