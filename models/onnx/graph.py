"""Reading an ONNX model into plain data: nodes, and a static shape and type per value.

Symbolic dimensions of the graph inputs are bound to the values given, then everything
computable from constants and dimensions is folded (:mod:`models.onnx.fold`), then ONNX
shape inference gives every remaining value its static shape. Weights are never read
(``load_external_data=False``): their shapes and element types are all that is needed.
Every refusal is one :class:`InputError` line naming the file and what is missing: rule
``DIM`` for a dimension (a symbolic one without a value, a value for a dimension the
model does not have), ``SHAPE`` for a tensor whose shape stays unknown, ``DTYPE`` for an
element type the library has no name for, ``ONNX`` for a file that is not a model.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from models.errors import InputError
from models.onnx.fold import Folded, fold

__all__ = ["Value", "Node", "Graph", "read_graph", "symbolic_inputs", "ONNX_DTYPES"]

#: Contrib ops (ONNX Runtime) whose first output has their first input's shape and type;
#: ONNX shape inference does not know them, so it sees an ``Identity`` in their place.
SHAPE_OF_INPUT = ("SimplifiedLayerNormalization",)
#: ONNX Runtime's quantised product ``MatMulNBits(A, B, scales)``: inference sees a
#: ``MatMul`` of ``A`` and a ``[K, N]`` probe input of A's type in its place.
MATMUL_NBITS = "MatMulNBits"
#: ONNX ``TensorProto`` element types -> the library's names (models.dtypes).
ONNX_DTYPES = {1: "f32", 10: "f16", 16: "bf16", 3: "i8", 2: "u8", 5: "i16", 6: "i32"}
#: Element types of integer and boolean bookkeeping (ids, positions, masks) and of
#: packed 4-bit weights: bytes per element, for the tensors no vector op computes on.
OTHER_BYTES = {7: 8.0, 9: 1.0, 12: 4.0, 13: 8.0, 4: 2.0, 11: 8.0, 21: 0.5, 22: 0.5}
_TASK_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class Value:
    """One tensor of the graph with its static shape and element type."""

    name: str
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True, slots=True)
class Node:
    """One node; ``name`` is unique and usable as a task name; missing optional inputs
    are ``""``."""

    name: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    #: the ONNX node name as written in the file (for messages)
    label: str = ""


@dataclass(frozen=True, slots=True)
class Graph:
    """The nodes in file order, the graph's inputs (with initializers and constants) and
    outputs, and what is known of constant tensors (small ones, for attributes such as
    an epsilon)."""

    source: str
    name: str
    nodes: tuple[Node, ...]
    inputs: frozenset[str]
    outputs: tuple[str, ...]
    constants: dict[str, Any]
    shapes: dict[str, tuple[int, ...] | None]
    types: dict[str, int]
    #: per ONNX op type, the nodes folding removed
    folded: dict[str, int] = field(default_factory=dict)
    #: the values of the constant tensors folding produced (masks, rotary tables)
    tables: dict[str, Any] = field(default_factory=dict)

    def value(self, name: str, node: Node) -> Value:
        """The value ``name`` as ``node`` uses it; InputError if its shape or type is not
        static or not known."""
        shape = self.shapes.get(name)
        if shape is None:
            raise InputError(f"tensor {name!r} (at node {node.label!r}, {node.op_type}) has no "
                             f"static shape after shape inference: give every symbolic "
                             f"dimension with --dim NAME=VALUE, or export with static shapes",
                             source=self.source, rule="SHAPE")
        elem = self.types.get(name, 0)
        if elem not in ONNX_DTYPES:
            raise InputError(f"tensor {name!r} (at node {node.label!r}, {node.op_type}) has "
                             f"ONNX element type {elem}, not one of "
                             f"{', '.join(ONNX_DTYPES.values())}", source=self.source,
                             rule="DTYPE")
        return Value(name, shape, ONNX_DTYPES[elem])


def _shape(type_proto: Any) -> tuple[tuple[int, ...] | None, int]:
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return None, tensor.elem_type
    dims = []
    for dim in tensor.shape.dim:
        if not dim.HasField("dim_value") or dim.dim_value < 1:
            return None, tensor.elem_type
        dims.append(dim.dim_value)
    return tuple(dims), tensor.elem_type


#: Arithmetic a symbolic dimension may be written with (exporters write ``past + 1``).
_DIM_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                  ast.FloorDiv: operator.floordiv}


def _symbols(text: str) -> set[str] | None:
    """The names a dimension expression uses; None if it is not one (``past + 1`` and
    ``seq`` are; anything but names, whole numbers and + - * // is not)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return {text}  # a name ONNX allows but Python does not parse: itself a symbol
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.BinOp) and type(node.op) in _DIM_OPERATORS:
            continue
        elif not isinstance(node, ast.Expression | ast.Load | ast.operator) and not (
                isinstance(node, ast.Constant) and isinstance(node.value, int)):
            return None
    return names


def _dim_value(text: str, dims: Mapping[str, int]) -> int | None:
    """The value of a dimension expression over ``dims``; None if it has none."""
    if text in dims:
        return dims[text]
    if not _symbols(text) or not _symbols(text) <= set(dims):  # type: ignore[operator]
        return None

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Name):
            return dims[node.id]
        if isinstance(node, ast.Constant):
            return int(node.value)
        assert isinstance(node, ast.BinOp)
        return _DIM_OPERATORS[type(node.op)](value(node.left), value(node.right))

    try:
        found = value(ast.parse(text, mode="eval"))
    except ZeroDivisionError:
        return None
    return found if found >= 1 else None


def symbolic_inputs(model: Any) -> dict[str, str]:
    """The symbolic dimensions of the graph inputs of ``model`` (an ``onnx.ModelProto``),
    each with the first input using it: the names ``--dim`` binds (``past + 1`` uses
    ``past``)."""
    initializers = {init.name for init in model.graph.initializer}
    symbols: dict[str, str] = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param"):
                for name in sorted(_symbols(dim.dim_param) or {dim.dim_param}):
                    symbols.setdefault(name, value.name)
    return symbols


def _bind(model: Any, dims: Mapping[str, int], source: str) -> None:
    """Set the symbolic dimensions of the graph inputs and outputs to the values given
    (an expression such as ``past + 1`` takes the value of its names); an output
    dimension without a value is cleared for shape inference to find."""
    initializers = {init.name for init in model.graph.initializer}
    symbols = symbolic_inputs(model)
    for name in dims:
        if name not in symbols:
            known = ", ".join(sorted(symbols)) or "none"
            raise InputError(f"--dim {name}: the model has no symbolic dimension {name!r} "
                             f"(its symbolic dimensions: {known})", source=source, rule="DIM")
    for name, used_by in symbols.items():
        if name not in dims:
            raise InputError(f"symbolic dimension {name!r} (of input {used_by!r}) has no "
                             f"value: give it with --dim {name}=VALUE", source=source,
                             rule="DIM")
    for value in (*model.graph.input, *model.graph.output):
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param"):
                found = _dim_value(dim.dim_param, dims)
                if found is not None:
                    dim.dim_value = found
                elif value.name not in initializers:
                    dim.Clear()


def _inferred(model: Any, path: str) -> Any:
    """``model`` with the value infos ONNX shape inference finds (contrib ops of
    :data:`SHAPE_OF_INPUT` seen as ``Identity``; the nodes themselves are kept)."""
    import onnx

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    # what the exporter wrote about intermediate values holds symbolic dimensions that
    # would stay symbolic: inference starts afresh from the bound inputs
    probe.graph.ClearField("value_info")
    types = {v.name: v.type.tensor_type.elem_type
             for v in (*probe.graph.input, *probe.graph.value_info, *probe.graph.output)}
    for i, node in enumerate(probe.graph.node):
        if node.op_type in SHAPE_OF_INPUT:
            node.op_type, node.domain = "Identity", ""
            del node.input[1:], node.output[1:], node.attribute[:]
        elif node.op_type == MATMUL_NBITS:
            attrs = {a.name: a.i for a in node.attribute}
            stand_in = f"__probe_{i}"
            probe.graph.input.append(onnx.helper.make_tensor_value_info(
                stand_in, types.get(node.input[0], onnx.TensorProto.FLOAT16),
                [attrs.get("K", 1), attrs.get("N", 1)]))
            node.op_type, node.domain = "MatMul", ""
            del node.input[1:], node.output[1:], node.attribute[:]
            node.input.append(stand_in)
    try:
        probe = onnx.shape_inference.infer_shapes(probe, strict_mode=False, data_prop=True)
    except Exception as error:  # inference errors are InferenceError or ValidationError
        raise InputError(f"ONNX shape inference failed: {error}".splitlines()[0], source=path,
                         rule="SHAPE") from None
    model.graph.ClearField("value_info")
    model.graph.value_info.extend(probe.graph.value_info)
    return model


def _folded(model: Any, path: str) -> Folded:
    try:
        return fold(model)
    except Exception as error:  # the folder raises whatever the graph's nodes provoke
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(f"folding constants failed: {message}", source=path,
                         rule="ONNX") from None


def read_graph(path: str, dims: Mapping[str, int]) -> Graph:
    """The graph of the model file ``path`` with ``dims`` bound, constants folded and
    shapes inferred."""
    import onnx
    from onnx import numpy_helper

    try:
        model = onnx.load(path, load_external_data=False)
    except Exception as error:  # onnx raises DecodeError, OSError, ValueError ...
        raise InputError(f"not a readable ONNX model: {error}", source=path,
                         rule="ONNX") from None
    _bind(model, dims, path)
    original = {init.name for init in model.graph.initializer}
    folded = _folded(model, path)
    model = _inferred(folded.model, path)
    graph = model.graph
    shapes: dict[str, tuple[int, ...] | None] = {}
    types: dict[str, int] = {}
    for value in (*graph.input, *graph.value_info, *graph.output):
        shapes[value.name], types[value.name] = _shape(value.type)
    constants: dict[str, Any] = {}
    tables: dict[str, Any] = {}
    for init in graph.initializer:
        shapes[init.name], types[init.name] = tuple(init.dims), init.data_type
        external = init.data_location == onnx.TensorProto.EXTERNAL
        if math.prod(init.dims) <= 16 and not external:  # an epsilon, a shape
            constants[init.name] = numpy_helper.to_array(init)
        if init.name not in original and not external:
            tables[init.name] = numpy_helper.to_array(init)
    inputs = {value.name for value in graph.input} | {init.name for init in graph.initializer}
    nodes = []
    used: set[str] = set()
    for index, node in enumerate(graph.node):
        base = _TASK_NAME.sub("_", node.name) or f"{node.op_type}_{index}"
        name, suffix = base, 2
        while name in used:
            name, suffix = f"{base}_{suffix}", suffix + 1
        used.add(name)
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "Constant" and "value" in attrs:
            tensor = attrs["value"]
            inputs.add(node.output[0])
            shapes[node.output[0]], types[node.output[0]] = tuple(tensor.dims), tensor.data_type
            constants[node.output[0]] = numpy_helper.to_array(tensor)
            continue
        nodes.append(Node(name, node.op_type, tuple(node.input), tuple(node.output), attrs,
                          node.name or name))
    return Graph(path, graph.name or "onnx", tuple(nodes), frozenset(inputs),
                 tuple(value.name for value in graph.output), constants, shapes, types,
                 folded.folded, tables)
