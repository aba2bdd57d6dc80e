"""Folding an exported graph: everything computable from constants and dimensions.

An exported decoder layer is mostly bookkeeping: ``Shape -> Gather -> Concat`` shape
arithmetic, position ranges, causal masks (``Range``, ``LessOrEqual``, ``Where``...),
rotary tables (``Cos``, ``Sin`` of positions times the inverse frequencies). Once the
user's dimensions are fixed (``--dim seq=128``), all of it is constant. ONNX shape
inference alone does not get there (its data propagation stops at ``Range``), so the
graph is folded by onnxscript's constant folder (:func:`onnxscript.optimizer.fold_constants`):
it is the folder ``torch.onnx.export`` itself runs, works on onnx-ir's in-memory model
(where a missing external weight is a lazy tensor, never read), folds ``Shape`` from
static shapes, evaluates every other node with ONNX's reference implementations, and
repeats shape inference as it goes. No evaluator is written here; this module only says
what may be folded:

- no node that reads an initializer whose data lives in an external file (weights are
  never read; the file need not exist) or that holds more than :data:`BOOKKEEPING`
  elements (a weight, even inline: the cost model needs its shape, not its value);
- no dequantisation (``DequantizeLinear``, ``MatMulNBits``): the quantised weight must
  stay quantised, since it streams from DDR at its stored width;
- results up to :data:`FOLD_LIMIT` elements (a causal mask of 2,048 positions squared).

What remains is returned with, per ONNX op type, how many nodes folding removed.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

__all__ = ["BOOKKEEPING", "FOLD_LIMIT", "Folded", "fold"]

#: Largest initializer (elements) that folding may read: inverse rotary frequencies
#: (head_dim / 2), shape constants, epsilons. Anything larger is a weight.
BOOKKEEPING = 256
#: Largest tensor (elements) folding may read or produce: a [2048, 2048] mask.
FOLD_LIMIT = 1 << 22
#: Op types never folded, whatever their inputs: dequantisation keeps the stored width.
KEEP = frozenset({"DequantizeLinear", "MatMulNBits", "QuantizeLinear", "DynamicQuantizeLinear"})


@dataclass(frozen=True, slots=True)
class Folded:
    """The folded model and, per ONNX op type, how many of its nodes folding removed
    (``Constant`` nodes included: they become initializers)."""

    model: Any
    folded: dict[str, int]


def _op_counts(graph: Any) -> Counter[str]:
    return Counter(node.op_type for node in graph.node)


def fold(model: Any) -> Folded:
    """``model`` (an ``onnx.ModelProto`` whose dimensions are bound) with every subgraph
    of constants and dimensions folded and every node nobody uses removed."""
    import onnx_ir as ir
    from onnxscript import optimizer

    before = _op_counts(model.graph)
    graph = ir.serde.deserialize_model(model)
    weights = {init.name for init in model.graph.initializer
               if init.data_location == 1 or math.prod(init.dims) > BOOKKEEPING}

    def should_fold(node: Any) -> bool | None:
        if node.op_type in KEEP:
            return False
        if any(value is not None and value.name in weights for value in node.inputs):
            return False
        return None

    if graph.functions:
        optimizer.inline(graph)
    # the folder warns about every external tensor it sees; none of them is ever read
    logger = logging.getLogger("onnxscript")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        optimizer.fold_constants(graph, onnx_shape_inference=True,
                                 input_size_limit=FOLD_LIMIT, output_size_limit=FOLD_LIMIT,
                                 should_fold=should_fold)
        optimizer.remove_unused_nodes(graph)
    finally:
        logger.setLevel(level)
    folded_model = ir.serde.serialize_model(graph)
    after = _op_counts(folded_model.graph)
    return Folded(folded_model, {op: n for op, n in (before - after).items() if n > 0})

