"""ONNX import: a model file becomes a workload (tasks of the operator library).

``import_onnx(path, dims, target, unknown)`` reads the graph (the ``onnx`` extra: ``pip
install 'npu-schedsearch[onnx]'``) without its weights, binds symbolic dimensions to the
values given (``--dim seq=128``), folds everything computable from constants and
dimensions (onnxscript's constant folder), recognises the patterns exporters emit
(RMSNorm, SiLU, rotary embeddings, attention with its mask, repeat-kv and KV cache) and
maps each remaining node to a task; it returns the workload and an :class:`ImportSummary`
of what became of every node. docs/onnx.md has the mapping and the choices.

Modules: :mod:`~models.onnx.graph` (reading, dimensions, shapes, element types),
:mod:`~models.onnx.fold` (folding), :mod:`~models.onnx.patterns` (fusions),
:mod:`~models.onnx.lower` (views, storage and the mapping to tasks),
:mod:`~models.onnx.summary` (the table).
"""

from __future__ import annotations

from models.onnx.lower import SUPPORTED, UNKNOWN, import_onnx, load_onnx_workload
from models.onnx.summary import ImportSummary

__all__ = ["SUPPORTED", "UNKNOWN", "ImportSummary", "import_onnx", "load_onnx_workload"]
