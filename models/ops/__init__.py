"""The operator library: each module tiles one kind of task into problem ops.

Every module has ``KIND``, ``PARAMS`` (a dict of :class:`~models.ops.params.Param`),
``build(builder, task_name, params)`` and ``op_count(params, model) -> int``: how many
ops ``build`` would add, computed from the parameters alone (no tiling), so that a
workload too large to tile is refused before any memory is spent on it
(:data:`models.workload.MAX_OPS`). :data:`KINDS` maps a kind to its module.
"""

from __future__ import annotations

from types import ModuleType

from models.ops import (
    attention,
    binary,
    cast,
    copy,
    elementwise,
    gather,
    gemm,
    layernorm,
    relayout,
    rmsnorm,
    rope,
    softmax,
    transpose,
    vector,
)

__all__ = ["KINDS"]

#: Task kind -> operator module.
KINDS: dict[str, ModuleType] = {m.KIND: m for m in (gemm, rmsnorm, elementwise, copy,
                                                    relayout, softmax, layernorm, binary,
                                                    cast, transpose, attention, rope, gather,
                                                    vector)}
