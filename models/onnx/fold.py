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
repeats shape inference as it goes. Where it leaves a node whose inputs are all
constants (its own evaluation of ``ConstantOfShape`` fails on the ``Constant`` its
``Shape`` folding writes, in TorchScript exports), ONNX's reference evaluator
(:class:`onnx.reference.ReferenceEvaluator`) evaluates that node and the folder runs
again. No evaluator is written here; this module only says what may be folded:

- no node that reads an initializer whose data lives in an external file (weights are
  never read; the file need not exist) or that holds more than :data:`BOOKKEEPING`
  elements (a weight, even inline: the cost model needs its shape, not its value);
- no dequantisation (``DequantizeLinear``, ``MatMulNBits``): the quantised weight must
  stay quantised, since it streams from DDR at its stored width;
- results up to :data:`FOLD_LIMIT` elements (a causal mask of 2,048 positions squared).

What remains is returned with, per ONNX op type, how many nodes folding removed.
"""

from __future__ import annotations

import contextlib
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
#: Folding passes at most (each folds what the previous one made constant).
PASSES = 4
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


def _weights(model: Any) -> set[str]:
    """Initializers folding must not read: external data, or more than BOOKKEEPING
    elements."""
    return {init.name for init in model.graph.initializer
            if init.data_location == 1 or math.prod(init.dims) > BOOKKEEPING}


def _folder_pass(model: Any, weights: set[str]) -> Any:
    """One round of onnxscript's folder (repeated while it changes something)."""
    import onnx
    import onnx_ir as ir
    from onnxscript import optimizer

    def should_fold(node: Any) -> bool | None:
        if node.op_type in KEEP:
            return False
        if any(value is not None and value.name in weights for value in node.inputs):
            return False
        return None

    # static shapes everywhere let the folder fold every Shape; inference starts afresh,
    # since what a previous round (or the exporter) wrote may hold unknown dimensions
    model.graph.ClearField("value_info")
    with contextlib.suppress(Exception):  # inference errors vary; the folder infers too
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    graph = ir.serde.deserialize_model(model)
    if graph.functions:
        optimizer.inline(graph)
    # a pass turns Shape into a Constant of ints that only the next pass folds on
    for _ in range(PASSES):
        result = optimizer.fold_constants(
            graph, onnx_shape_inference=True, input_size_limit=FOLD_LIMIT,
            output_size_limit=FOLD_LIMIT, should_fold=should_fold)
        optimizer.remove_unused_nodes(graph)
        if not result.modified:
            break
    return ir.serde.serialize_model(graph)


def _reference_pass(model: Any, weights: set[str]) -> int:
    """Fold, with ONNX's reference evaluator, the nodes of the default domain whose
    inputs are all constants and that onnxscript's folder left (its evaluation of some
    ops fails on the constants its own ``Shape`` folding writes); returns how many."""
    import numpy
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    graph = model.graph
    opset = {o.domain or "": o.version for o in model.opset_import}.get("", 1)
    known = {init.name: numpy_helper.to_array(init) for init in graph.initializer
             if init.name not in weights}
    kept, folded = [], 0
    for node in graph.node:
        inputs = [name for name in node.input if name]
        if (node.domain not in ("", "ai.onnx") or node.op_type in KEEP
                or not all(name in known for name in inputs)
                or any(known[name].size > FOLD_LIMIT for name in inputs)):
            kept.append(node)
            continue
        try:
            with numpy.errstate(all="ignore"):  # 1/0 on constants is inf, as at run time
                values = ReferenceEvaluator(node, opsets={"": opset}).run(
                    None, {name: known[name] for name in inputs})
        except Exception:  # an op the reference evaluator cannot run stays a node
            kept.append(node)
            continue
        if any(getattr(v, "size", FOLD_LIMIT + 1) > FOLD_LIMIT for v in values):
            kept.append(node)
            continue
        for name, value in zip(node.output, values, strict=False):
            known[name] = value
            graph.initializer.append(numpy_helper.from_array(value, name))
        folded += 1
    del graph.node[:]
    graph.node.extend(kept)
    return folded


def fold(model: Any) -> Folded:
    """``model`` (an ``onnx.ModelProto`` whose dimensions are bound) with every subgraph
    of constants and dimensions folded and every node nobody uses removed."""
    before = _op_counts(model.graph)
    # the folder warns about every external tensor it sees; none of them is ever read
    logger = logging.getLogger("onnxscript")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        weights = _weights(model)  # the model's own; what folding writes may be read
        for _ in range(PASSES):
            model = _folder_pass(model, weights)
            if not _reference_pass(model, weights):
                break
    finally:
        logger.setLevel(level)
    after = _op_counts(model.graph)
    return Folded(model, {op: n for op, n in (before - after).items() if n > 0})
