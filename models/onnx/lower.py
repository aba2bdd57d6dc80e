"""Mapping an ONNX graph onto the operator library's tasks.

Storage: every tensor lies in DDR as 2-D rows, ``[elements / cols, cols]``, where
``cols`` is the last dimension of the shape it is produced with (a graph input or
initializer: its own shape; a 1-D weight stays ``[n]``). ``Reshape``, ``Squeeze``,
``Unsqueeze``, ``Flatten`` and ``Identity`` are views: no op, the same storage seen with
another shape. A node reading a view must see the storage's rows unchanged (the same
last dimension), except a ``Transpose``, which reads any view (see
:mod:`models.ops.transpose`), and whose output is stored the way the node reading it
wants (so ``Transpose -> Reshape -> MatMul``, the usual attention layout, costs one
transpose and nothing more).

Graph inputs and initializers are ``input`` tensors, graph outputs ``output``, the rest
``temp`` (the builder derives these roles from who writes and reads each tensor).

Node -> task: ``MatMul`` (batched leading dimensions; a 2-D ``B`` shared by every batch)
and ``Gemm`` (``transA``, ``transB``; a bias ``C`` becomes an ``add``) -> ``gemm``;
``RMSNormalization``, ``SimplifiedLayerNormalization`` and the decomposed pattern ->
``rmsnorm``; ``LayerNormalization`` -> ``layernorm``; ``Softmax`` (last axis) ->
``softmax``; ``Add``, ``Sub``, ``Mul``, ``Div`` -> ``binary`` (the second operand full,
a row, a column or a scalar; the broadcast one may come first); ``Sigmoid``, ``Relu``,
``Gelu``, ``Tanh`` and the SiLU pattern -> ``elementwise``; ``Transpose`` ->
``transpose``; ``Cast`` -> ``cast``; ``MatMulNBits`` and ``MatMul`` of a
``DequantizeLinear``'d int8 weight -> ``gemm`` streaming the weight at its stored width
(``b_bits``); a QDQ int8 product (int8 activation and weight, int8 result) -> ``gemm``
in ``i8``; other ``QuantizeLinear`` / ``DequantizeLinear`` of an activation -> ``cast``;
the rotary pattern -> ``rope`` (reading the projection's token-major storage: the head
``Transpose`` before it is a view); the attention pattern -> ``attention`` (its cache
``Concat`` reads the past input from DDR; the new rows are its producer's); an embedding
``Gather`` -> ``gather``; an f32 product on a matrix engine without f32 -> ``cast``,
``gemm`` in f16, ``cast``. Nodes no graph output depends on once patterns are fused (a
mask built from an input, the ``DequantizeLinear`` of an activation only int8 products
read) are listed as unused. Anything else: one line naming the node,
its op type and this list (rule ``ONNX``), or with ``unknown="vector"`` a generic
``vector`` task. Blocks are those of the bundled decoder layers (a row block at most their
largest, :data:`ROW_BLOCK_BYTES`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.cost import cost_model
from models.dtypes import DTYPE_BYTES
from models.errors import InputError
from models.onnx.graph import ONNX_DTYPES, OTHER_BYTES, Graph, Node, Value, read_graph
from models.onnx.patterns import ATTENTION, RMSNORM, ROPE, SILU, fuse
from models.onnx.summary import ImportSummary
from models.ops import KINDS
from models.ops.params import read_params
from models.targets import load_target
from models.workload_data import Workload, WorkloadTask

__all__ = ["SUPPORTED", "UNKNOWN", "VIEWS", "DEFAULT_TARGET", "import_onnx", "load_onnx_workload",
           "lower"]

#: Op types that are views of their first input (no op).
VIEWS = ("Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity")
_ACTIVATIONS = {"Sigmoid": "sigmoid", "Relu": "relu", "Gelu": "gelu", "Tanh": "tanh",
                SILU: "silu"}
_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div"}
_RMSNORMS = ("RMSNormalization", "SimplifiedLayerNormalization", RMSNORM)
#: The target of an imported model when no --target is given.
DEFAULT_TARGET = "hexagon-v75"
#: Row blocks of imported row-wise tasks and key/query blocks of imported attention: the
#: blocks the bundled decoder layers use (models/examples/decoders.py), so that an
#: imported layer tiles as the bundled one does.
ROW_BLOCK, ATTENTION_BLOCK = 64, 128
#: The largest row block of the bundled layers, 64 rows of Llama-3.2-1B's 8,192 f16
#: intermediate columns (1 MiB): a row-wise task over wider or f32 rows gets half the rows
#: per block until a block fits, so that no buffer outgrows the bundled layers' (three
#: 2 MiB buffers of one f32 product stalled list scheduling in an 8 MiB VTCM).
ROW_BLOCK_BYTES = 64 * 8192 * 2
#: GEMM blocks of imported products (as the bundled layers: 128 rows, one 32-row tile
#: for a decode step, 256 columns, 512 reductions).
GEMM_BLOCKS = {"bn": 256, "bk": 512}
_ROW_KINDS = ("rmsnorm", "layernorm", "softmax", "binary", "elementwise", "cast", "rope")
#: Element-wise kinds that may run in column blocks (no row reduction).
_COLUMN_KINDS = ("elementwise", "binary")
#: The outcome of a node no graph output depends on once patterns are fused.
UNUSED = "unused (no output depends on it once patterns are fused)"
#: Op types that a fused pattern passes through without computing (views of its data).
_VIEW_LIKE = ("Reshape", "Transpose", "Unsqueeze", "Squeeze", "Identity", "Expand",
              "Concat")


@dataclass
class _Lowering:
    """The state of one import: tensor storage and the tasks made so far."""

    graph: Graph
    #: the element types the target's matrix engine takes (f32 products run in f16
    #: where it takes f16 and not f32)
    matrix: tuple[str, ...] = ()
    alias: dict[str, str] = field(default_factory=dict)
    cols: dict[str, int] = field(default_factory=dict)
    tasks: list[WorkloadTask] = field(default_factory=list)
    #: element types tasks declare for their outputs where they differ from the graph's
    declared: dict[str, str] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)

    def fail(self, node: Node, message: str) -> InputError:
        return InputError(f"node {node.label!r} ({node.op_type}): {message}",
                          source=self.graph.source, rule="ONNX")

    def storage(self, name: str) -> str:
        while name in self.alias:
            name = self.alias[name]
        return name

    def read(self, node: Node, index: int) -> tuple[str, Value]:
        """The storage tensor and the value of input ``index``; the view must keep the
        storage's rows."""
        value = self.graph.value(node.inputs[index], node)
        root = self.storage(value.name)
        view_cols = value.shape[-1] if value.shape else 1
        if self.cols.get(root, view_cols) != view_cols:
            raise self.fail(node, f"reads {value.name!r} through a view that changes its rows "
                                  f"({self.cols[root]} -> {view_cols} columns); only a "
                                  f"Transpose reads such a view")
        return root, value

    def add(self, node: Node, kind: str, params: dict[str, Any], suffix: str = "") -> None:
        """A task of ``kind`` for ``node``, with the blocks of the bundled layers."""
        name = node.name + suffix
        if name in self.names:
            raise self.fail(node, f"two tasks would be named {name!r}")
        self.names.add(name)
        if kind == "gemm":
            params = {"bm": 128 if int(params["M"]) > 32 else 32, **GEMM_BLOCKS, **params}
        elif "rows" in params and kind in _ROW_KINDS:
            params = {"block_rows": _block_rows(params), **params}
        checked = read_params(KINDS[kind].PARAMS, params, name, f"$.nodes[{name!r}]",
                              self.graph.source)
        self.tasks.append(WorkloadTask(name, kind, checked))


def _block_rows(params: Mapping[str, Any]) -> int:
    """:data:`ROW_BLOCK` rows, halved while a block of the widest element type the task
    reads or writes is larger than :data:`ROW_BLOCK_BYTES`; at most ``rows``."""
    width = int(params["cols"]) * max(DTYPE_BYTES.get(str(params.get(key)), 2)
                                      for key in ("dtype", "to"))
    block = ROW_BLOCK
    while block > 1 and block * width > ROW_BLOCK_BYTES:
        block //= 2
    return min(block, int(params["rows"]))


def _rows_cols(shape: tuple[int, ...]) -> tuple[int, int]:
    return (math.prod(shape[:-1]), shape[-1]) if shape else (1, 1)


def _form(shape: tuple[int, ...], out: tuple[int, ...]) -> str | None:
    """How a binary operand of ``shape`` broadcasts to ``out``: none, row, col, scalar."""
    padded = (1,) * (len(out) - len(shape)) + tuple(shape)
    if padded == out:
        return "none"
    if all(d == 1 for d in padded):
        return "scalar"
    if all(d == 1 for d in padded[:-1]) and padded[-1] == out[-1]:
        return "row"
    if padded[-1] == 1 and padded[:-1] == out[:-1]:
        return "col"
    return None


def _gemm(low: _Lowering, node: Node) -> None:
    (a, va), (b, vb) = low.read(node, 0), low.read(node, 1)
    out = low.graph.value(node.outputs[0], node)
    params: dict[str, Any] = {"dtype": out.dtype, "a": a, "b": b}
    if node.op_type == "Gemm":
        ta, tb = int(node.attrs.get("transA", 0)), int(node.attrs.get("transB", 0))
        (M, K), N = (va.shape[::-1] if ta else va.shape), vb.shape[0 if tb else 1]
        params.update(M=M, N=N, K=K, trans_a=ta, trans_b=tb)
    else:
        if len(va.shape) < 2 or len(vb.shape) < 2:
            raise low.fail(node, "a 1-D MatMul operand is not supported")
        K, N = vb.shape[-2:]
        if node.attrs.get("transB"):  # a weight read transposed (patterns: weight transpose)
            (N, K), params["trans_b"] = vb.shape, 1
        if node.attrs.get("b_bits"):  # an int8 weight behind DequantizeLinear (patterns)
            params["b_bits"] = int(node.attrs["b_bits"])
        if "b_col0" in node.attrs:  # one part of a fused projection (patterns)
            N = out.shape[-1]
            params.update(b_col0=node.attrs["b_col0"], b_cols=node.attrs["b_cols"])
        if math.prod(vb.shape[:-2]) == 1:  # one B for every row of A
            params.update(M=math.prod(va.shape[:-1]), N=N, K=K)
        elif va.shape[:-2] == vb.shape[:-2]:
            params.update(M=va.shape[-2], N=N, K=K, batch=math.prod(va.shape[:-2]))
        else:
            raise low.fail(node, f"batch dimensions {list(va.shape[:-2])} and "
                                 f"{list(vb.shape[:-2])} differ (broadcast batches are not "
                                 f"supported)")
    bias = node.inputs[2] if node.op_type == "Gemm" and len(node.inputs) > 2 else ""
    if not bias and out.dtype == "f32" and "f32" not in low.matrix and "f16" in low.matrix:
        _gemm_in_f16(low, node, params, va, out)
        return
    if not bias:
        low.add(node, "gemm", {**params, "out": low.storage(out.name)})
        return
    product = f"{node.name}.product"
    low.add(node, "gemm", {**params, "out": product}, "_mm")
    c, vc = low.read(node, 2)
    form = _form(vc.shape, out.shape)
    if form is None:
        raise low.fail(node, f"bias of shape {list(vc.shape)} does not broadcast by rows "
                             f"or columns to {list(out.shape)}")
    rows, cols = _rows_cols(out.shape)
    low.add(node, "binary", {"rows": rows, "cols": cols, "dtype": out.dtype, "fn": "add",
                             "x": product, "y": c, "broadcast": form,
                             "out": low.storage(out.name)})


def _matmul_nbits(low: _Lowering, node: Node) -> None:
    """ONNX Runtime's ``MatMulNBits(a, B, scales[, zero points])``: ``B`` is ``[N, K]``
    quantised to ``bits`` (4 or 8), packed along K -> a ``gemm`` reading it transposed
    at its stored width (``b_bits``), dequantising each block."""
    a, va = low.read(node, 0)
    out = low.graph.value(node.outputs[0], node)
    bits, K, N = (int(node.attrs.get(key, 0)) for key in ("bits", "K", "N"))
    weight = node.inputs[1]
    if bits not in (4, 8) or weight not in low.graph.inputs or va.shape[-1:] != (K,):
        raise low.fail(node, f"only 4- or 8-bit weights of a graph initializer, K = {K} "
                             f"matching A's last dimension, are supported (bits {bits})")
    if out.dtype not in low.matrix:
        raise low.fail(node, f"the matrix engine takes no {out.dtype}")
    low.add(node, "gemm", {"dtype": out.dtype, "a": a, "b": weight, "M": math.prod(
        va.shape[:-1]), "N": N, "K": K, "trans_b": 1, "b_bits": bits,
        "out": low.storage(out.name)})


def _quantise(low: _Lowering, node: Node) -> None:
    """``QuantizeLinear`` / ``DequantizeLinear`` of an activation: a ``cast`` to the
    output's type (the scale and zero point ride in the same pass)."""
    x, vx = low.read(node, 0)
    out = low.graph.value(node.outputs[0], node)
    rows, cols = _rows_cols(out.shape)
    low.add(node, "cast", {"rows": rows, "cols": cols, "dtype": vx.dtype, "to": out.dtype,
                           "x": x, "out": low.storage(out.name)})


def _gemm_in_f16(low: _Lowering, node: Node, params: dict[str, Any], va: Value,
                 out: Value) -> None:
    """An f32 product on a matrix engine without f32 runs in f16: an activation the graph
    holds in f32 is converted (a ``cast`` task), an f32 weight streams as f16, and the
    product is converted back to f32 for whoever reads it."""
    a = str(params["a"])
    if low.declared.get(a, va.dtype) == "f32":
        cols = low.cols.get(a, va.shape[-1])
        low.add(node, "cast", {"rows": math.prod(va.shape) // cols, "cols": cols,
                               "dtype": "f32", "to": "f16", "x": a,
                               "out": f"{node.name}.a16"}, "_a16")
        a = f"{node.name}.a16"
    b = str(params["b"])
    if b not in low.graph.inputs and low.declared.get(b, "f32") == "f32":
        raise low.fail(node, "an f32 product of two activations: the matrix engine takes "
                             "no f32 (export in f16)")
    low.add(node, "gemm", {**params, "dtype": "f16", "a": a, "b": b,
                           "out": f"{node.name}.f16"}, "_f16")
    rows, cols = _rows_cols(out.shape)
    low.add(node, "cast", {"rows": rows, "cols": cols, "dtype": "f16", "to": "f32",
                           "x": f"{node.name}.f16", "out": low.storage(out.name)})


def _binary(low: _Lowering, node: Node) -> None:
    (a, va), (b, vb) = low.read(node, 0), low.read(node, 1)
    out = low.graph.value(node.outputs[0], node)
    forms = _form(va.shape, out.shape), _form(vb.shape, out.shape)
    if forms[0] == "none":
        x, y, form, swap = a, b, forms[1], 0
    elif forms[1] == "none":
        x, y, form, swap = b, a, forms[0], 1
    else:
        raise low.fail(node, f"neither operand has the output's shape {list(out.shape)} "
                             f"({list(va.shape)}, {list(vb.shape)})")
    if form is None:
        raise low.fail(node, f"shapes {list(va.shape)} and {list(vb.shape)} broadcast other "
                             f"than by a row, a column or a scalar")
    rows, cols = _rows_cols(out.shape)
    low.add(node, "binary", {"rows": rows, "cols": cols, "dtype": out.dtype,
                             "fn": _BINARY[node.op_type], "x": x, "y": y, "broadcast": form,
                             "swap": swap, "out": low.storage(out.name)})


def _last_axis(low: _Lowering, node: Node, rank: int, default: int) -> None:
    axis = int(node.attrs.get("axis", default))
    if rank and axis % rank != rank - 1:
        raise low.fail(node, f"axis {axis} is not the last axis (only row-wise "
                             f"normalisations are supported)")


def _rowwise(low: _Lowering, node: Node) -> None:
    x, vx = low.read(node, 0)
    out = low.graph.value(node.outputs[0], node)
    rows, cols = _rows_cols(out.shape)
    params: dict[str, Any] = {"rows": rows, "cols": cols, "dtype": vx.dtype, "x": x,
                              "out": low.storage(out.name)}
    op = node.op_type
    if op in _ACTIVATIONS:
        low.add(node, "elementwise", {**params, "fn": _ACTIVATIONS[op]})
    elif op == "Softmax":
        _last_axis(low, node, len(vx.shape), -1)
        low.add(node, "softmax", params)
    elif op == "Cast":
        low.add(node, "cast", {**params, "to": out.dtype})
    else:
        _last_axis(low, node, len(vx.shape), -1)
        if "epsilon" in node.attrs:
            params["eps"] = float(node.attrs["epsilon"])
        if len(node.inputs) < 2 or not node.inputs[1]:
            if op == "LayerNormalization":
                raise low.fail(node, "a LayerNormalization without a scale input")
            low.add(node, "rmsnorm", {**params, "has_weight": 0})
            return
        weight, vw = low.read(node, 1)
        if op == "LayerNormalization":
            bias = len(node.inputs) > 2 and bool(node.inputs[2])
            extra = {"bias": low.read(node, 2)[0]} if bias else {"has_bias": 0}
            low.add(node, "layernorm", {**params, "weight": weight, **extra})
        else:  # the weight as stored (f32 beside f16 activations: TorchScript, Gemma-2)
            stored = {"weight_dtype": vw.dtype} if vw.dtype != vx.dtype else {}
            if out.dtype != vx.dtype:  # an f32 input (a residual) cast back in the norm
                stored["to"] = out.dtype
            low.add(node, "rmsnorm", {**params, "weight": weight, **stored})


def _head_read(low: _Lowering, node: Node, index: int) -> tuple[str, Value]:
    """The storage and value of input ``index`` of a rotary or attention node, which read
    the token-major storage of a head view (no rows check: they read per head)."""
    value = low.graph.value(node.inputs[index], node)
    return low.storage(value.name), value


def _rope(low: _Lowering, node: Node) -> None:
    (x, vx), (cos, vc), (sin, _) = (_head_read(low, node, i) for i in range(3))
    head_dim = vx.shape[-1] if vx.shape else 1
    head_major = len(vx.shape) == 4 and x != vx.name
    rows = vx.shape[2] if head_major else math.prod(vx.shape[:-1])
    cols = vx.shape[1] * head_dim if head_major else head_dim
    table_rows = math.prod(vc.shape[:-1]) if vc.shape else 1
    if (vc.shape[-1:] != (head_dim,) or table_rows not in (1, rows)
            or low.graph.shapes.get(sin) != low.graph.shapes.get(cos)):
        raise low.fail(node, f"rotary tables of shape {list(vc.shape)} do not match "
                             f"{rows} positions of {head_dim} elements")
    out = node.outputs[0]
    low.add(node, "rope", {"rows": rows, "cols": cols, "dtype": vx.dtype,
                           "head_dim": head_dim, "table_rows": table_rows, "x": x,
                           "cos": cos, "sin": sin, "out": out})
    low.cols[out] = cols


def _causal(low: _Lowering, node: Node) -> int:
    """1 if the attention's mask is the causal one (or is not a folded table: then it is
    priced as causal), 0 if it masks nothing; ``causal`` from the node if it says."""
    if int(node.attrs.get("causal", -1)) >= 0:
        return int(node.attrs["causal"])
    table = low.graph.tables.get(str(node.attrs["mask"]))
    if table is None or table.ndim < 2:
        return 1
    keep = table > -1e4 if table.dtype.kind == "f" else table.astype(bool)
    keep = keep.reshape(-1, *keep.shape[-2:])[0]
    if keep.all():
        return 0
    return 1


def _attention(low: _Lowering, node: Node) -> None:
    q, k, v, k_cache, v_cache = node.inputs
    vq = low.graph.value(q, node)
    a = node.attrs
    params: dict[str, Any] = {
        "heads": a["heads"], "kv_heads": a["kv_heads"], "head_dim": a["head_dim"],
        "q_len": a["q_len"], "past": a["past"], "causal": _causal(low, node),
        "dtype": vq.dtype, "q": low.storage(q), "k": low.storage(k), "v": low.storage(v),
        "out": node.outputs[0], "block_q": ATTENTION_BLOCK, "block_kv": ATTENTION_BLOCK,
        "softcap": float(a.get("softcap", 0.0))}
    if a["past"]:
        params.update(k_cache=k_cache, v_cache=v_cache)
    low.add(node, "attention", params)
    low.cols[node.outputs[0]] = a["heads"] * a["head_dim"]
    low.declared[node.outputs[0]] = vq.dtype


def _gather(low: _Lowering, node: Node) -> None:
    table, ids = node.inputs[:2]
    shape = low.graph.shapes.get(table) or ()
    if (table not in low.graph.inputs or len(shape) != 2
            or int(node.attrs.get("axis", 0)) != 0):
        raise low.fail(node, "only a row lookup (axis 0) in a 2-D table input, an "
                             "embedding, is supported")
    vt = low.graph.value(table, node)
    rows = math.prod(low.graph.shapes.get(ids) or (1,))
    low.add(node, "gather", {"rows": rows, "cols": shape[1], "table_rows": shape[0],
                             "dtype": vt.dtype, "table": table,
                             "out": low.storage(node.outputs[0]),
                             "block_rows": min(ROW_BLOCK, rows)})


def _generic(low: _Lowering, node: Node) -> None:
    """A node nobody mapped, priced as one vector pass over its bytes (``--unknown
    vector``)."""
    def storage(name: str) -> tuple[int, int, str, int]:
        if low.graph.shapes.get(name) is None:
            low.graph.value(name, node)  # InputError: no static shape
        root = low.storage(name)
        shape = low.graph.shapes.get(root) or low.graph.shapes.get(name) or ()
        elem = low.graph.types.get(name, 0)
        if elem in ONNX_DTYPES:
            elements = math.prod(shape)
            cols = low.cols.get(root, shape[-1] if shape else 1)
            return (elements // cols, cols, ONNX_DTYPES[elem],
                    elements * DTYPE_BYTES[ONNX_DTYPES[elem]])
        nbytes = max(1, math.ceil(math.prod(shape) * OTHER_BYTES.get(elem, 1.0)))
        return 1, nbytes, "u8", nbytes

    inputs = [name for name in node.inputs if name]
    if not inputs or not node.outputs:
        raise low.fail(node, "a node without inputs or outputs cannot be priced")
    x_rows, x_cols, x_dtype, _ = storage(inputs[0])
    rows, cols, dtype, _ = storage(node.outputs[0])
    in_bytes = sum(storage(name)[3] for name in inputs)
    low.add(node, "vector", {"op_type": node.op_type, "in_bytes": in_bytes,
                             "x_rows": x_rows, "x_cols": x_cols, "x_dtype": x_dtype,
                             "rows": rows, "cols": cols, "dtype": dtype,
                             "x": low.storage(inputs[0]), "out": node.outputs[0]})
    low.alias.pop(node.outputs[0], None)
    low.cols[node.outputs[0]] = cols


def _transpose(low: _Lowering, node: Node, out_cols: int) -> None:
    x = low.graph.value(node.inputs[0], node)
    root = low.storage(x.name)
    perm = [int(p) for p in node.attrs.get("perm", range(len(x.shape))[::-1])]
    keep = [d for d in range(len(x.shape)) if x.shape[d] != 1] or [0]
    shape = [x.shape[d] for d in keep] if len(keep) > 1 or x.shape[keep[0]] != 1 else [1]
    order = [keep.index(d) for d in perm if d in keep]
    out = low.graph.value(node.outputs[0], node)
    low.add(node, "transpose", {"shape": ",".join(map(str, shape)),
                                "perm": ",".join(map(str, order)), "dtype": x.dtype,
                                "x": root, "out": low.storage(out.name),
                                "x_cols": low.cols.get(root, x.shape[-1] if x.shape else 1),
                                "out_cols": out_cols})


#: Op type -> how it is lowered (views and Transpose are handled apart).
_LOWER: dict[str, Callable[[_Lowering, Node], None]] = {
    "MatMul": _gemm, "Gemm": _gemm, **{op: _binary for op in _BINARY},
    **{op: _rowwise for op in (*_ACTIVATIONS, "Softmax", "Cast", "LayerNormalization",
                                *_RMSNORMS)},
    ROPE: _rope, ATTENTION: _attention, "Gather": _gather, "MatMulNBits": _matmul_nbits,
    "QuantizeLinear": _quantise, "DequantizeLinear": _quantise}
#: The op types an imported model may use (the fused patterns aside).
SUPPORTED = tuple(sorted({*_LOWER, *VIEWS, "Transpose", "Constant"}
                         - {SILU, RMSNORM, ROPE, ATTENTION}))
#: What ``--unknown`` accepts: refuse an unmapped node, or price it as a vector pass.
UNKNOWN = ("error", "vector")


def _transpose_cols(low: _Lowering, nodes: list[Node], transpose: Node) -> int:
    """How the output of ``transpose`` is stored: as the first non-view node that reads
    it (through views) sees its rows; its own last dimension if none does."""
    own = low.graph.value(transpose.outputs[0], transpose)
    names = {transpose.outputs[0]}
    for node in nodes:
        if node.op_type in VIEWS and node.inputs[0] in names:
            names.update(node.outputs)
    for node in nodes:
        if node.op_type not in VIEWS and node.op_type != "Transpose":
            for name in node.inputs:
                if name in names:
                    shape = low.graph.value(name, node).shape
                    return shape[-1] if shape else 1
    return own.shape[-1] if own.shape else 1


def _head_views(nodes: list[Node]) -> set[int]:
    """The ``Transpose`` nodes from tokens to heads (perm 0, 2, 1, 3) read only by rotary
    embeddings: views, since the rotary embedding reads the tokens' storage per head."""
    readers: dict[str, list[Node]] = {}
    for node in nodes:
        for name in node.inputs:
            readers.setdefault(name, []).append(node)
    return {id(node) for node in nodes
            if node.op_type == "Transpose"
            and [int(p) for p in node.attrs.get("perm", ())] == [0, 2, 1, 3]
            and readers.get(node.outputs[0])
            and all(r.op_type == ROPE for r in readers[node.outputs[0]])}


def _live(graph: Graph, nodes: list[Node]) -> tuple[list[Node], list[Node]]:
    """The nodes some graph output depends on, and the others: once attention is fused,
    a mask built from an input (``attention_mask``: Cast, Equal, And, Where...) feeds
    nothing, since the attention kind computes its causal mask itself; once int8 products
    are fused, neither does the ``DequantizeLinear`` of an activation only they read."""
    needed = set(graph.outputs)
    live: list[Node] = []
    unused: list[Node] = []
    for node in reversed(nodes):
        if any(out in needed for out in node.outputs):
            live.append(node)
            needed.update(name for name in node.inputs if name)
        else:
            unused.append(node)
    return live[::-1], unused[::-1]


def _outcome(node: Node, low: _Lowering, made: int) -> str:
    if made == len(low.tasks):
        return "view"
    kinds = sorted({task.kind for task in low.tasks[made:]})
    return ", ".join(kinds)


def lower(graph: Graph, unknown: str = "error",
          matrix: tuple[str, ...] = ()) -> tuple[list[WorkloadTask], ImportSummary]:
    """The tasks of ``graph`` (see the module docstring) and what became of each node;
    InputError names the node. ``unknown="vector"`` prices a node of an op type nobody
    maps as a generic vector pass instead of refusing it; ``matrix`` lists the element
    types the target's matrix engine takes (an f32 product runs in f16 where it takes f16
    and not f32)."""
    low = _Lowering(graph, matrix)
    nodes, sources = fuse(graph)
    summary = ImportSummary(graph.source)
    for op_type, count in graph.folded.items():
        summary.add(op_type, "folded", count)
    for name in graph.inputs:
        shape = graph.shapes.get(name)
        if shape:
            low.cols[name] = shape[-1]
    nodes, unused = _live(graph, nodes)
    for node in unused:
        for op_type in sources.get(node.name, (node.op_type,)):
            summary.add(op_type, UNUSED)
    head_views = _head_views(nodes)
    for node in nodes:
        made = len(low.tasks)
        if (node.op_type in VIEWS or id(node) in head_views
                or (node.op_type == "Slice" and graph.shapes.get(node.inputs[0])
                    == graph.shapes.get(node.outputs[0]) is not None)):  # a whole slice
            low.alias[node.outputs[0]] = node.inputs[0]
        elif node.op_type == "Transpose":
            cols = _transpose_cols(low, nodes, node)
            _transpose(low, node, cols)
            low.cols[node.outputs[0]] = cols
        elif node.op_type in _LOWER:
            _LOWER[node.op_type](low, node)
            for out in node.outputs[:1]:
                if out not in low.cols:
                    shape = graph.value(out, node).shape
                    low.cols[out] = shape[-1] if shape else 1
        elif unknown == "vector":
            _generic(low, node)
            summary.add(node.op_type, "vector pass (--unknown vector)")
            continue
        else:
            raise InputError(f"node {node.label!r}: op type {node.op_type!r} is not supported; "
                             f"supported: {', '.join(SUPPORTED)} (schedsearch import "
                             f"--unknown vector prices it as a vector pass)",
                             source=graph.source, rule="ONNX")
        outcome = _outcome(node, low, made)
        for op_type in sources.get(node.name, (node.op_type,)):
            summary.add(op_type, "view" if op_type in _VIEW_LIKE and outcome != "view"
                        and node.name in sources else outcome)
    if not low.tasks:
        raise InputError("the model has no node to schedule (only views)",
                         source=graph.source, rule="ONNX")
    return _column_blocks(low.tasks), summary


def _column_blocks(tasks: list[WorkloadTask]) -> list[WorkloadTask]:
    """``tasks`` with the element-wise tasks that feed a product's A operand (directly or
    through other such tasks; a gated MLP's SiLU and product) in blocks of the product's
    rows by its reduction depth, as the bundled prefill layers
    (models/examples/decoders.py): each block then needs only the columns of the
    projections before it that it reads, and runs beside them. Only where the product
    has more than one 32-row tile (prefill); a task some other kind also reads keeps
    whole rows."""
    readers: dict[str, list[tuple[WorkloadTask, str]]] = {}
    for task in tasks:
        for key in ("a", "x", "y"):
            if isinstance(task.params.get(key), str):
                readers.setdefault(task.params[key], []).append((task, key))
    #: task -> (rows, columns) of the product tile its blocks follow
    tile: dict[str, tuple[int, int]] = {}
    for task in reversed(tasks):  # consumers come after their producers
        p = task.params
        if task.kind not in _COLUMN_KINDS or p.get("broadcast", "none") != "none":
            continue
        follows = [(int(r.params["bm"]), int(r.params["bk"])) if r.kind == "gemm" and key == "a"
                   else tile.get(r.name) for r, key in readers.get(str(p["out"]), [])]
        if follows and None not in follows:
            rows, depth = min(f[0] for f in follows), min(f[1] for f in follows)
            if rows > 32:
                tile[task.name] = (rows, depth)
    return [WorkloadTask(t.name, t.kind, {**t.params,
                                          "block_rows": min(tile[t.name][0], int(t.params["rows"])),
                                          "block_cols": tile[t.name][1]})
            if t.name in tile else t for t in tasks]


def import_onnx(path: str, dims: Mapping[str, int] | None = None,
                target: str = DEFAULT_TARGET, unknown: str = "error",
                ) -> tuple[Workload, ImportSummary]:
    """The workload of the ONNX model ``path`` on ``target`` (``dims`` binding its
    symbolic dimensions) and the summary of what became of each ONNX node."""
    if not Path(path).is_file():
        raise InputError("no such ONNX model file", source=path, rule="FILE")
    matrix = cost_model(load_target(target)).matrix.accepted()  # unknown target: refused
    try:
        import onnx  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError:
        raise InputError("reading .onnx models needs the onnx and onnxscript packages: "
                         "pip install 'npu-schedsearch[onnx]'", source=path,
                         rule="ONNX") from None
    graph = read_graph(path, dims or {})
    tasks, summary = lower(graph, unknown, tuple(matrix))
    return Workload(Path(path).stem, target, tuple(tasks), path), summary


def load_onnx_workload(path: str, dims: Mapping[str, int] | None = None,
                       target: str = DEFAULT_TARGET, unknown: str = "error") -> Workload:
    """The workload of the ONNX model ``path`` on ``target``, ``dims`` binding its
    symbolic dimensions."""
    return import_onnx(path, dims, target, unknown)[0]
