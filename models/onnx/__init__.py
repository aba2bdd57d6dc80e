"""ONNX import: a model file becomes a workload (tasks of the operator library).

``load_onnx_workload(path, dims, target)`` reads the graph (the ``onnx`` package, an
extra: ``pip install 'npu-schedsearch[onnx]'``), binds symbolic dimensions to the values
given (``--dim seq=128``), infers every shape with ONNX shape inference, recognises the
patterns exporters emit (SiLU as ``Mul(x, Sigmoid(x))``; RMSNorm decomposed into ``Pow,
ReduceMean, Add, Sqrt, Div/Reciprocal, Mul``) and maps each node to a task
(:mod:`models.onnx.lower`). Only shapes matter: weights need not be present.

Modules: :mod:`~models.onnx.graph` (reading, dimensions, shapes, element types),
:mod:`~models.onnx.patterns` (fusions), :mod:`~models.onnx.lower` (views, storage and
the mapping to tasks).
"""

from __future__ import annotations

from models.onnx.lower import SUPPORTED, load_onnx_workload

__all__ = ["SUPPORTED", "load_onnx_workload"]
