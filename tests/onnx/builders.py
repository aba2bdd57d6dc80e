"""Small ONNX models built in the test with ``onnx.helper``: only shapes, zero weights."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

from models.onnx import load_onnx_workload
from models.targets import load_target
from models.workload import Workload, tile

F16, F32 = TensorProto.FLOAT16, TensorProto.FLOAT
Shape = Sequence[int | str]


def initializer(name: str, shape: Sequence[int], dtype: int = F16,
                value: float | Sequence[int] | None = None) -> onnx.TensorProto:
    """A constant tensor: zeros, a number, or (int64) a list such as a Reshape shape."""
    if dtype == TensorProto.INT64:
        return helper.make_tensor(name, dtype, shape, list(value or []))
    array = np.full(shape, 0 if value is None else value,
                    dtype=np.float16 if dtype == F16 else np.float32)
    return helper.make_tensor(name, dtype, shape, array.tobytes(), raw=True)


def save(tmp: Path, nodes: list[onnx.NodeProto], inputs: Mapping[str, Shape],
         outputs: Mapping[str, Shape], initializers: Sequence[onnx.TensorProto] = (),
         *, dtype: int = F16, out_dtype: int | None = None, opset: int = 17,
         name: str = "m") -> str:
    """Write the model to ``tmp/<name>.onnx`` and return its path; inputs are ``dtype``,
    outputs ``out_dtype`` (default ``dtype``)."""
    outs = dtype if out_dtype is None else out_dtype
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(n, dtype, list(s)) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, outs, list(s)) for n, s in outputs.items()],
        list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid("com.microsoft", 1)])
    path = tmp / f"{name}.onnx"
    onnx.save(model, path)
    return str(path)


def tasks(path: str, **dims: int) -> list[tuple[str, dict[str, Any]]]:
    """``(kind, params)`` of each task the model imports to."""
    return [(task.kind, task.params) for task in load_onnx_workload(path, dims).tasks]


def tiled(path: str, target: str = "hexagon-v75", **dims: int):
    workload: Workload = load_onnx_workload(path, dims, target)
    return tile(workload, load_target(target))


def node(op: str, inputs: list[str], outputs: list[str], name: str = "",
         domain: str = "", **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, inputs, outputs, name=name or None, domain=domain or None,
                            **attrs)
