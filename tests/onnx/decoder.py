"""A Llama-style decoder layer written with ``onnx.helper`` the way exporters write it.

Shape arithmetic on ``Shape`` of the input, a causal mask from ``Range``, ``LessOrEqual``
and ``Where``, rotary tables from ``Range``, ``Cos`` and ``Sin``, transformers' RMSNorm
(Casts to f32 and back, ``Reciprocal``, the weight after the Cast), rotate-half with
``Slice``, ``Neg`` and ``Concat``, repeat-kv with ``Expand`` and ``Reshape``, and with
``past`` the KV cache as inputs joined by ``Concat``. Weights are zero initializers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["decoder_layer"]

F16, F32, I64 = TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.INT64


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def const(self, value: object, dtype: type = np.int64) -> str:
        self.count += 1
        name = f"c{self.count}"
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def weight(self, name: str, shape: list[int]) -> str:
        self.inits.append(numpy_helper.from_array(np.zeros(shape, np.float16), name))
        return name

    def op(self, op_type: str, inputs: list[str], name: str = "", **attrs: object) -> str:
        self.count += 1
        out = f"{name or op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def rmsnorm(self, x: str, cols: int, name: str) -> str:
        xf = self.op("Cast", [x], to=F32)
        sq = self.op("Pow", [xf, self.const(2.0, np.float32)])
        mean = self.op("ReduceMean", [sq, self.const([-1])], keepdims=1)
        var = self.op("Add", [mean, self.const(1e-5, np.float32)])
        root = self.op("Sqrt", [var])
        inv = self.op("Reciprocal", [root])
        normed = self.op("Mul", [xf, inv])
        back = self.op("Cast", [normed], to=F16)
        return self.op("Mul", [self.weight(f"{name}.weight", [cols]), back], name=name)

    def linear(self, x: str, n: int, k: int, name: str) -> str:
        weight = self.weight(f"{name}.weight", [n, k])
        return self.op("MatMul", [x, self.op("Transpose", [weight], perm=[1, 0])], name=name)

    def rope(self, x: str, cos: str, sin: str, half: int) -> str:
        first = self.op("Slice", [x, self.const([0]), self.const([half]), self.const([3])])
        second = self.op("Slice", [x, self.const([half]), self.const([2 * half]),
                                   self.const([3])])
        rotated = self.op("Concat", [self.op("Neg", [second]), first], axis=-1)
        return self.op("Add", [self.op("Mul", [x, cos]),
                               self.op("Mul", [rotated, sin])])


def decoder_layer(tmp: Path, *, hidden: int = 256, heads: int = 4, kv_heads: int = 2,
                  intermediate: int = 512, past: int = 0, window: int = 0,
                  name: str = "layer") -> str:
    """Write the layer to ``tmp/<name>.onnx``: input ``x`` ``[1, seq, hidden]`` (``seq``
    symbolic), with ``past`` > 0 inputs ``past_key``/``past_value`` ``[1, kv_heads, past,
    head_dim]`` and outputs ``present_key``/``present_value``; with ``window`` > 0 the
    cache as Phi-3 writes it: the last ``window`` rows (``Slice``) of the past and of the
    present keys and values."""
    g = _Graph()
    d = hidden // heads
    group = heads // kv_heads
    # shape arithmetic: the token count and the positions, from the input's shape
    seq = g.op("Gather", [g.op("Shape", ["x"]), g.const(1)], axis=0)
    start = (g.op("Gather", [g.op("Shape", ["past_key"]), g.const(2)], axis=0) if past
             else g.const(0))
    stop = g.op("Add", [seq, start])
    positions = g.op("Range", [start, stop, g.const(1)])
    # rotary tables [1, 1, seq, d]
    inv_freq = g.const(1.0 / 10000 ** (np.arange(0, d, 2) / d), np.float32)
    pos_f = g.op("Unsqueeze", [g.op("Cast", [positions], to=F32), g.const([1])])
    freqs = g.op("Mul", [pos_f, g.op("Unsqueeze", [inv_freq, g.const([0])])])
    emb = g.op("Concat", [freqs, freqs], axis=-1)
    tables = [g.op("Unsqueeze", [g.op("Cast", [g.op(fn, [emb])], to=F16), g.const([0, 1])])
              for fn in ("Cos", "Sin")]
    # causal mask [1, 1, seq, past + seq]: keys at or before each query's position
    keys = g.op("Range", [g.const(0), stop, g.const(1)])
    allowed = g.op("LessOrEqual", [g.op("Unsqueeze", [keys, g.const([0])]),
                                   g.op("Unsqueeze", [positions, g.const([1])])])
    mask = g.op("Unsqueeze", [g.op("Where", [allowed, g.const(0.0, np.float16),
                                             g.const(-65504.0, np.float16)]),
                              g.const([0, 1])])
    h = g.rmsnorm("x", hidden, "input_layernorm")

    def heads_of(x: str, count: int) -> str:
        shaped = g.op("Reshape", [x, g.op("Concat", [g.const([1]), g.op("Unsqueeze", [
            seq, g.const([0])]), g.const([count, d])], axis=0)])
        return g.op("Transpose", [shaped], perm=[0, 2, 1, 3])

    q = g.rope(heads_of(g.linear(h, hidden, hidden, "q_proj"), heads), *tables, d // 2)
    k = g.rope(heads_of(g.linear(h, kv_heads * d, hidden, "k_proj"), kv_heads), *tables,
               d // 2)
    v = heads_of(g.linear(h, kv_heads * d, hidden, "v_proj"), kv_heads)
    outputs = []
    def last_rows(x: str, out: str = "") -> str:  # x[:, :, -window:]
        args = [x, g.const([-window]), g.const([2 ** 62]), g.const([2])]
        if not out:
            return g.op("Slice", args)
        g.nodes.append(helper.make_node("Slice", args, [out], name=out))
        return out

    if past:
        cached = [last_rows(c) if window else c for c in ("past_key", "past_value")]
        k = g.op("Concat", [cached[0], k], axis=2)
        v = g.op("Concat", [cached[1], v], axis=2)
        for x, out in ((k, "present_key"), (v, "present_value")):
            if window:
                last_rows(x, out)
            else:
                g.nodes.append(helper.make_node("Identity", [x], [out]))
        outputs = [("present_key", [1, kv_heads, "total", d]),
                   ("present_value", [1, kv_heads, "total", d])]
    elif window:
        for x, out in ((k, "present_key"), (v, "present_value")):
            last_rows(x, out)
        outputs = [(n, [1, kv_heads, "seq", d]) for n in ("present_key", "present_value")]

    def repeat(x: str) -> str:
        shape = g.op("Shape", [x])
        expanded = g.op("Expand", [g.op("Unsqueeze", [x, g.const([2])]), g.op("Concat", [
            g.op("Slice", [shape, g.const([0]), g.const([2])]), g.const([group]),
            g.op("Slice", [shape, g.const([2]), g.const([4])])], axis=0)])
        return g.op("Reshape", [expanded, g.const([1, heads, -1, d])])

    scores = g.op("MatMul", [q, g.op("Transpose", [repeat(k)], perm=[0, 1, 3, 2])])
    scaled = g.op("Mul", [scores, g.const(d ** -0.5, np.float16)])
    probs = g.op("Softmax", [g.op("Cast", [g.op("Add", [scaled, mask])], to=F32)], axis=-1)
    attn = g.op("MatMul", [g.op("Cast", [probs], to=F16), repeat(v)])
    merged = g.op("Reshape", [g.op("Transpose", [attn], perm=[0, 2, 1, 3]),
                              g.const([1, -1, hidden])])
    h2 = g.op("Add", ["x", g.linear(merged, hidden, hidden, "o_proj")])
    h3 = g.rmsnorm(h2, hidden, "post_attention_layernorm")
    gate = g.linear(h3, intermediate, hidden, "gate_proj")
    act = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
    down = g.linear(g.op("Mul", [act, g.linear(h3, intermediate, hidden, "up_proj")]),
                    hidden, intermediate, "down_proj")
    g.nodes.append(helper.make_node("Add", [h2, down], ["y"], name="residual"))
    inputs = [helper.make_tensor_value_info("x", F16, [1, "seq", hidden])]
    if past:
        inputs += [helper.make_tensor_value_info(n, F16, [1, kv_heads, "past", d])
                   for n in ("past_key", "past_value")]
    graph = helper.make_graph(g.nodes, name, inputs, [
        helper.make_tensor_value_info("y", F16, [1, "seq", hidden]),
        *(helper.make_tensor_value_info(n, F16, s) for n, s in outputs)], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    path = tmp / f"{name}.onnx"
    onnx.save(model, path)
    return str(path)
