"""LayerNorm ``Y[r, :] = (X[r, :] - mean) / sqrt(var + eps) * W + B`` over blocks of rows.

As RMSNorm (:mod:`models.ops.rmsnorm`), with the mean subtracted and a bias added: the
weight ``W[cols]`` and the bias ``B[cols]`` (unless ``has_bias`` is 0) are loaded once
and read by every block.
``eps`` does not change the schedule; it is kept in the task's ``params``.
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
    Resident,
    build_rowwise,
    row_candidates,
    row_op_count,
)

__all__ = ["KIND", "PARAMS", "op_count", "build", "candidates"]

KIND = "layernorm"
PARAMS = {
    **ROW_PARAMS,
    "units": UNITS_PARAM,
    "eps": Param("number", 1e-5, minimum=0, help="added to the variance"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
    "weight": Param("tensor", "{task}.W", help="tensor name of the [cols] weight"),
    "bias": Param("tensor", "{task}.Bias", help="tensor name of the [cols] bias"),
    "has_bias": Param("int", 1, minimum=0, help="0: no bias"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the LayerNorm task ``name`` with parameters ``p`` (already checked) to ``b``."""
    cols = (int(p["cols"]),)
    if int(p["has_bias"]) > 1:
        raise b.fail(f"has_bias must be 0 or 1, got {p['has_bias']}", "FORMAT")
    resident = (Resident("W", str(p["weight"]), cols),)
    if int(p["has_bias"]):
        resident += (Resident("Bias", str(p["bias"]), cols),)
    build_rowwise(b, name, KIND, p, compute=("norm", VECTOR_PASSES["layernorm"]),
                  resident=resident)


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """The values of each tunable parameter worth trying (see :func:`row_candidates`)."""
    return row_candidates(p, model, units=True)


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load, the norm and a store; the weight and the bias loaded once."""
    return row_op_count(p, per_block=3, once=1 + int(p["has_bias"]))
