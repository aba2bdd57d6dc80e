"""Patterns that exporters emit for one operation, fused back into one node.

- SiLU: ``Mul(x, Sigmoid(x))`` (either operand order) -> ``SiLU(x)``.
- RMSNorm decomposed: ``Pow(x, 2)`` (or ``Mul(x, x)``) -> ``ReduceMean`` over the last
  axis -> ``Add(eps)`` -> ``Sqrt`` -> ``Div(x, .)``, or ``Reciprocal`` / ``Div(1, .)``
  then ``Mul(x, .)``; optionally a ``Cast`` to f32 before and a ``Cast`` back after (as
  transformers computes it), then optionally ``Mul`` by a ``[cols]`` weight, in either
  operand order, the weight itself possibly behind a ``Cast``, the ``Cast`` back possibly
  after the weight ``Mul`` (Gemma-2 scales by its folded ``1 + weight`` in f32) ->
  ``RMSNorm(x[, weight])``.
- A weight transposed for a product: ``MatMul(a, Transpose(W))`` of a 2-D initializer
  ``W`` -> ``MatMul`` with ``transB`` (the GEMM reads ``W`` transposed; nothing is copied).
- An int8 product (ONNX Runtime's QDQ node unit, w8a8): ``QuantizeLinear(MatMul(
  DequantizeLinear(xq), DequantizeLinear(W)))`` of an int8 activation ``xq`` and a 2-D
  int8 initializer ``W``, quantised back to int8 -> ``MatMul(xq, W)`` writing the
  ``QuantizeLinear``'s int8 output: the product runs in int8 on the matrix engine and
  requantises its accumulator in the conversion it makes anyway, as ONNX Runtime's own
  QDQ fusion (``QLinearMatMul``) and its NPU providers run it. ``xq``'s
  ``DequantizeLinear`` stays for any other reader.
- A quantised weight: ``MatMul(a, DequantizeLinear(W))`` of an int8 initializer ``W``
  (ONNX Runtime's QDQ form, the activation not quantised) -> ``MatMul(a, W)`` with
  ``b_bits`` 8: the GEMM streams ``W`` at its stored width and dequantises each block on
  the vector engine.
- A fused projection: a product of a weight read only by ``Slice`` nodes along its last
  axis (Phi-3's ``qkv_proj`` and ``gate_up_proj``) -> one ``MatMul`` per slice, reading
  its columns of the weight (``b_col0``).
- Rotary embedding: ``x * cos + rotate_half(x) * sin``, ``rotate_half(x)`` being
  ``Concat(Neg(Slice(x, d/2:)), Slice(x, :d/2))`` -> ``RoPE(x, cos, sin)``; ``x`` may be
  a whole ``Slice`` of the heads (TorchScript's Phi-3: ``q[..., :rotary_dim]``).
- Attention: ``MatMul(Q, Transpose(K))`` -> scalings (``Mul``/``Div``, on the product or
  on Q and K) -> an additive mask (``Add``) or a ``Where`` -> ``Softmax`` over the last
  axis (Casts around it allowed) -> ``MatMul(., V)`` -> ``Transpose`` back to tokens ->
  ``Attention(q, k, v[, k_cache, v_cache])``. Q, K and V are traced back through the
  head views (``Reshape``, ``Transpose``, ``Unsqueeze``), repeat-kv (``Unsqueeze``,
  ``Expand``, ``Reshape``: a view, every query head of a group reads its KV head) and
  the KV-cache ``Concat`` of a graph input (or of a whole ``Slice`` of one) with the
  new keys (the cache is read from DDR; the new rows are what the projection, or the
  rotary embedding, writes); a present cache that is a whole ``Slice`` of them is a view. ONNX's own
  ``Attention`` (opset 23) on 4-D operands is traced the same way.

A pattern matches only when every intermediate value is used by the pattern alone (and
is no graph output, except the cache ``Concat``, whose output is the present cache), so
fusing never hides a value another node needs. Fused nodes keep the name of the node
that produces their output."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from models.onnx.graph import Graph, Node

__all__ = ["SILU", "RMSNORM", "ROPE", "ATTENTION", "fuse"]

#: Op types of the fused nodes (not ONNX op types).
SILU, RMSNORM = "SiLU", "RMSNorm(pattern)"
ROPE, ATTENTION = "RoPE(pattern)", "Attention(pattern)"
#: ONNX's element type int8 (``TensorProto.INT8``).
_INT8 = 3


class _Index:
    """Who produces and who consumes each value."""

    def __init__(self, graph: Graph, nodes: list[Node]) -> None:
        self.graph = graph
        self.producer = {out: node for node in nodes for out in node.outputs}
        self.consumers: dict[str, list[Node]] = defaultdict(list)
        for node in nodes:
            for name in node.inputs:
                self.consumers[name].append(node)

    def only_use(self, value: str, node: Node) -> bool:
        """``value`` is read by ``node`` alone and is not a graph output."""
        return ([id(n) for n in self.consumers[value]] == [id(node)]
                and value not in self.graph.outputs)

    def single(self, value: str, op_types: tuple[str, ...]) -> Node | None:
        """The one consumer of ``value`` if it has one of ``op_types``."""
        users = self.consumers[value]
        if len(users) == 1 and users[0].op_type in op_types and value not in self.graph.outputs:
            return users[0]
        return None

    def constant(self, name: str) -> Any:
        return self.graph.constants.get(name)


def _other(node: Node, value: str) -> str:
    a, b = node.inputs[:2]
    return b if a == value else a


def _is_number(value: Any, wanted: float) -> bool:
    return value is not None and value.size == 1 and float(value.reshape(-1)[0]) == wanted


def _silu(index: _Index, mul: Node) -> tuple[Node, list[Node]] | None:
    if mul.op_type != "Mul" or len(mul.inputs) != 2:
        return None
    for s in mul.inputs:
        sigmoid = index.producer.get(s)
        if (sigmoid is not None and sigmoid.op_type == "Sigmoid"
                and _other(mul, s) == sigmoid.inputs[0] and index.only_use(s, mul)):
            fused = Node(mul.name, SILU, (sigmoid.inputs[0],), mul.outputs, {}, mul.label)
            return fused, [sigmoid, mul]
    return None


def _closed(index: _Index, matched: list[Node], last: Node,
            allowed: frozenset[str] = frozenset()) -> bool:
    """Every value ``matched`` produces, the output of ``last`` aside, is read only by
    matched nodes and is no graph output (``allowed`` values may be graph outputs or be
    read by views elsewhere)."""
    ids = {id(n) for n in matched}
    for node in matched:
        if node is last:
            continue
        for out in node.outputs:
            if out in allowed:
                continue
            if out in index.graph.outputs or any(id(n) not in ids
                                                 for n in index.consumers[out]):
                return False
    return True


def _through_cast(index: _Index, value: str) -> tuple[str, list[Node]]:
    """``value``, or the input of the ``Cast`` producing it."""
    node = index.producer.get(value)
    if node is not None and node.op_type == "Cast":
        return node.inputs[0], [node]
    return value, []


def _rmsnorm(index: _Index, mean: Node) -> tuple[Node, list[Node]] | None:
    if mean.op_type != "ReduceMean" or not mean.attrs.get("keepdims", 1):
        return None
    square = index.producer.get(mean.inputs[0])
    if square is None:
        return None
    squares = ((square.op_type == "Pow" and _is_number(index.constant(square.inputs[1]), 2.0))
               or (square.op_type == "Mul" and square.inputs[0] == square.inputs[1]))
    if not squares:
        return None
    x = square.inputs[0]
    source, cast_in = _through_cast(index, x)
    rank = len(index.graph.shapes.get(x) or ())
    axes = mean.attrs.get("axes")
    if axes is None and len(mean.inputs) > 1:
        found = index.constant(mean.inputs[1])
        axes = None if found is None else [int(a) for a in found.reshape(-1)]
    if not rank or axes is None or [a % rank for a in axes] != [rank - 1]:
        return None
    add = index.single(mean.outputs[0], ("Add",))
    if add is None:
        return None
    eps = index.constant(_other(add, mean.outputs[0]))
    sqrt = index.single(add.outputs[0], ("Sqrt",))
    if sqrt is None or eps is None or eps.size != 1:
        return None
    step = index.single(sqrt.outputs[0], ("Div", "Reciprocal"))
    if step is None:
        return None
    matched = [*cast_in, square, mean, add, sqrt, step]
    if step.op_type == "Div" and step.inputs[0] == x:
        normed = step
    else:
        if step.op_type == "Div" and not _is_number(index.constant(step.inputs[0]), 1.0):
            return None
        normed = index.single(step.outputs[0], ("Mul",))
        if normed is None or _other(normed, step.outputs[0]) != x:
            return None
        matched.append(normed)
    last = normed
    cast_out = index.single(normed.outputs[0], ("Cast",))
    if cast_out is not None:
        matched.append(cast_out)
        last = cast_out
    inputs: tuple[str, ...] = (source,)
    scale = index.single(last.outputs[0], ("Mul",))
    cols = (index.graph.shapes.get(x) or (0,))[-1]
    if scale is not None:
        weight, cast_w = _through_cast(index, _other(scale, last.outputs[0]))
        if (weight in index.graph.inputs and index.graph.shapes.get(weight) == (cols,)
                and (not cast_w or index.only_use(cast_w[0].outputs[0], scale))):
            inputs = (source, weight)
            matched += [*cast_w, scale]
            last = scale
    if cast_in and cast_out is None:  # scaled in f32, then back (Gemma-2: by 1 + weight)
        back = index.single(last.outputs[0], ("Cast",))
        if back is not None and int(back.attrs.get("to", 0)) == index.graph.types.get(source):
            matched.append(back)
            last = back
    if not _closed(index, matched, last):
        return None
    fused = Node(last.name, RMSNORM, inputs, last.outputs,
                 {"epsilon": float(eps.reshape(-1)[0])}, last.label)
    return fused, matched


def _weight_transpose(index: _Index, matmul: Node) -> tuple[Node, list[Node]] | None:
    if matmul.op_type != "MatMul" or len(matmul.inputs) != 2:
        return None
    transpose = index.producer.get(matmul.inputs[1])
    if transpose is None or transpose.op_type != "Transpose":
        return None
    weight = transpose.inputs[0]
    perm = [int(p) for p in transpose.attrs.get("perm", (1, 0))]
    if (weight not in index.graph.inputs or len(index.graph.shapes.get(weight) or ()) != 2
            or perm != [1, 0] or not index.only_use(transpose.outputs[0], matmul)):
        return None
    fused = Node(matmul.name, "MatMul", (matmul.inputs[0], weight), matmul.outputs,
                 {"transB": 1}, matmul.label)
    return fused, [transpose, matmul]


def _quantised_weight(index: _Index, matmul: Node, types: tuple[int, ...]) -> Node | None:
    """The ``DequantizeLinear`` of a 2-D initializer of ``types`` that only ``matmul``
    reads, as its B."""
    if matmul.op_type != "MatMul" or len(matmul.inputs) != 2:
        return None
    dq = index.producer.get(matmul.inputs[1])
    if dq is None or dq.op_type != "DequantizeLinear":
        return None
    weight = dq.inputs[0]
    if (weight not in index.graph.inputs or len(index.graph.shapes.get(weight) or ()) != 2
            or index.graph.types.get(weight) not in types
            or not index.only_use(dq.outputs[0], matmul)):
        return None
    return dq


def _int8_product(index: _Index, q: Node) -> tuple[Node, list[Node]] | None:
    out = q.outputs[0]
    matmul = index.producer.get(q.inputs[0])
    if (matmul is None or index.graph.types.get(out) != _INT8
            or not index.only_use(q.inputs[0], q)):
        return None
    dq_w = _quantised_weight(index, matmul, (_INT8,))
    dq_a = index.producer.get(matmul.inputs[0])
    if (dq_w is None or dq_a is None or dq_a.op_type != "DequantizeLinear"
            or index.graph.types.get(dq_a.inputs[0]) != _INT8):
        return None
    fused = Node(q.name, "MatMul", (dq_a.inputs[0], dq_w.inputs[0]), q.outputs, {},
                 matmul.label)
    return fused, [dq_w, matmul, q]


def _dequantised_weight(index: _Index, matmul: Node) -> tuple[Node, list[Node]] | None:
    dq = _quantised_weight(index, matmul, (2, 3))  # uint8, int8
    if dq is None:
        return None
    weight = dq.inputs[0]
    fused = Node(matmul.name, "MatMul", (matmul.inputs[0], weight), matmul.outputs,
                 {"b_bits": 8}, matmul.label)
    return fused, [dq, matmul]


def _slice_half(index: _Index, value: str, x: str) -> tuple[int, int, Node] | None:
    """``(start, end)`` along the last axis of a ``Slice`` of ``x`` producing ``value``."""
    node = index.producer.get(value)
    if node is None or node.op_type != "Slice" or node.inputs[0] != x or len(node.inputs) < 3:
        return None
    rank = len(index.graph.shapes.get(x) or ())
    found = [index.constant(name) if name else None for name in node.inputs[1:5]]
    if any(v is None or v.size != 1 for v in found[:2]) or not rank:
        return None
    axes = found[2] if len(found) > 2 and found[2] is not None else None
    if axes is not None and (axes.size != 1 or int(axes.reshape(-1)[0]) % rank != rank - 1):
        return None
    if len(found) > 3 and found[3] is not None and int(found[3].reshape(-1)[0]) != 1:
        return None
    cols = (index.graph.shapes.get(x) or (0,))[-1]
    start, end = (int(v.reshape(-1)[0]) for v in found[:2])
    return max(0, start if start >= 0 else cols + start), min(cols, end), node


def _rope(index: _Index, add: Node) -> tuple[Node, list[Node]] | None:
    if add.op_type != "Add" or len(add.inputs) != 2:
        return None
    products = [index.producer.get(v) for v in add.inputs]
    if any(p is None or p.op_type != "Mul" for p in products):
        return None
    for plain, turned in (products, products[::-1]):
        for x in plain.inputs:
            cos = _other(plain, x)
            for rotated in turned.inputs:
                concat = index.producer.get(rotated)
                if concat is None or concat.op_type != "Concat" or len(concat.inputs) != 2:
                    continue
                neg = index.producer.get(concat.inputs[0])
                if neg is None or neg.op_type != "Neg":
                    continue
                second, first = (_slice_half(index, neg.inputs[0], x),
                                 _slice_half(index, concat.inputs[1], x))
                cols = (index.graph.shapes.get(x) or (0,))[-1]
                if (second is None or first is None or cols % 2
                        or first[:2] != (0, cols // 2) or second[:2] != (cols // 2, cols)):
                    continue
                matched = [first[2], second[2], neg, concat, plain, turned, add]
                source, whole = x, index.producer.get(x)
                if (whole is not None and whole.op_type == "Slice"  # TorchScript: x[..., :d]
                        and index.graph.shapes.get(whole.inputs[0]) == index.graph.shapes.get(x)):
                    source = whole.inputs[0]
                    matched.insert(0, whole)
                if not _closed(index, matched, add):
                    continue
                fused = Node(add.name, ROPE, (source, cos, _other(turned, rotated)),
                             add.outputs, {}, add.label)
                return fused, matched
    return None


#: Op types a head view may pass through when tracing attention's operands back.
_HEAD_VIEWS = ("Reshape", "Transpose", "Unsqueeze", "Squeeze", "Identity", "Expand")


def _scalar_scale(index: _Index, node: Node | None) -> bool:
    if node is None or node.op_type not in ("Mul", "Div"):
        return False
    found = index.constant(node.inputs[1])
    return found is not None and found.size == 1


def _trace(index: _Index, value: str, walked: list[Node]) -> str:
    """Walk back from ``value`` through scalings, Casts and head views; returns the first
    value produced otherwise (a projection, a rotary embedding, a cache Concat, an
    input)."""
    while True:
        node = index.producer.get(value)
        if node is None:
            return value
        if node.op_type in _HEAD_VIEWS or node.op_type == "Cast" or _scalar_scale(index, node):
            walked.append(node)
            value = node.inputs[0]
            continue
        return value


def _swaps_last_two(node: Node) -> bool:
    perm = [int(p) for p in node.attrs.get("perm", ())]
    rank = len(perm)
    return rank >= 2 and perm == [*range(rank - 2), rank - 1, rank - 2]


def _sanitised(index: _Index, probs: str, walked: list[Node]) -> str:
    """Past the Casts after the softmax and sdpa's ``Where(IsNaN(p), 0, p)``."""
    while True:
        cast = index.single(probs, ("Cast",))
        if cast is not None:
            walked.append(cast)
            probs = cast.outputs[0]
            continue
        users = index.consumers[probs]
        isnan = next((n for n in users if n.op_type == "IsNaN"), None)
        where = next((n for n in users if n.op_type == "Where"), None)
        if (len(users) == 2 and isnan is not None and where is not None
                and where.inputs[0] == isnan.outputs[0] and where.inputs[2] == probs
                and index.only_use(isnan.outputs[0], where)):
            walked += [isnan, where]
            probs = where.outputs[0]
            continue
        return probs


def _cache(index: _Index, value: str, walked: list[Node]) -> tuple[str, str, int]:
    """``(new rows, cache input or "", past length)`` of a traced K or V."""
    node = index.producer.get(value)
    if node is None or node.op_type != "Concat" or len(node.inputs) != 2:
        return value, "", 0
    past, whole = node.inputs[0], index.producer.get(node.inputs[0])
    if (whole is not None and whole.op_type == "Slice"  # Phi-3: past[:, :, -window:]
            and index.graph.shapes.get(whole.inputs[0]) == index.graph.shapes.get(past)):
        past = whole.inputs[0]
    shape = index.graph.shapes.get(past) or ()
    rank = len(shape)
    if past in index.graph.inputs and rank == 4 and int(node.attrs.get("axis", 0)) % rank == 2:
        walked += [node] if past == node.inputs[0] else [whole, node]
        return _trace(index, node.inputs[1], walked), past, shape[2]
    return value, "", 0


def _mask_of(index: _Index, value: str, walked: list[Node]) -> tuple[str, str, float]:
    """Walk back from the softmax input through Casts, scalings, an additive mask or a
    Where, and a soft-capping ``c * Tanh(. / c)`` (Gemma-2); returns the scores value (the
    product of Q and K), the mask value and the cap (0: none)."""
    mask, cap = "", 0.0
    while True:
        node = index.producer.get(value)
        if node is None:
            return value, mask, cap
        if node.op_type == "Tanh" and not cap:
            scale = index.producer.get(node.inputs[0])
            if not _scalar_scale(index, scale):
                return value, mask, cap
            assert scale is not None
            found = float(index.constant(scale.inputs[1]).reshape(-1)[0])
            cap = abs(found if scale.op_type == "Div" else 1 / found) if found else 0.0
            if not cap:
                return value, mask, cap
            walked.append(node)
            value = node.inputs[0]
        elif node.op_type == "Cast" or _scalar_scale(index, node):
            walked.append(node)
            value = node.inputs[0]
        elif node.op_type == "Add" and not mask:
            shapes = [index.graph.shapes.get(v) for v in node.inputs]
            main = 0 if shapes[0] == index.graph.shapes.get(node.outputs[0]) else 1
            walked.append(node)
            mask, value = node.inputs[1 - main], node.inputs[main]
        elif node.op_type == "Where" and not mask:
            walked.append(node)
            own = index.graph.shapes.get(node.outputs[0])
            main = 1 if index.graph.shapes.get(node.inputs[1]) == own else 2
            mask, value = node.inputs[0], node.inputs[main]
        else:
            return value, mask, cap


def _back_to_tokens(index: _Index, out: str, walked: list[Node]) -> Node | None:
    """The ``Transpose`` (perm 0, 2, 1, 3) that brings an attention result back to
    tokens, ``[1, q_len, heads, d]``, past reshapes that keep the head dimension (to the
    same shape, or from query groups ``[1, kv_heads, group * q_len, d]`` to heads)."""
    last = (index.graph.shapes.get(out) or (0,))[-1]
    step = index.single(out, ("Reshape", "Identity"))
    while step is not None and (index.graph.shapes.get(step.outputs[0]) or (0,))[-1] == last:
        walked.append(step)
        out = step.outputs[0]
        step = index.single(out, ("Reshape", "Identity"))
    back = index.single(out, ("Transpose",))
    if (back is None or [int(p) for p in back.attrs.get("perm", ())] != [0, 2, 1, 3]
            or len(index.graph.shapes.get(back.outputs[0]) or ()) != 4):
        return None
    walked.append(back)
    return back


def _sliced_out(index: _Index, value: str, walked: list[Node]) -> bool:
    """``value`` is read by ``walked`` nodes and by whole ``Slice``s giving graph outputs,
    at least one (Phi-3's present cache: ``states[:, :, -window:]`` of a shorter cache)."""
    ids = {id(n) for n in walked}
    others = [n for n in index.consumers[value] if id(n) not in ids]
    return bool(others) and all(
        n.op_type == "Slice" and n.outputs[0] in index.graph.outputs
        and index.graph.shapes.get(n.outputs[0]) == index.graph.shapes.get(value) is not None
        for n in others)


def _fused_attention(index: _Index, last: Node, walked: list[Node], q: str, k_heads: str,
                     v_heads: str, mask: str, causal: int,
                     softcap: float = 0.0) -> tuple[Node, list[Node]] | None:
    """The attention node for traced operands (``last``, the transpose back to tokens,
    gives ``[1, q_len, heads, d]``); the new keys and values may be joined to a cache
    input by a ``Concat``."""
    k, k_cache, past = _cache(index, k_heads, walked)
    v, v_cache, past_v = _cache(index, v_heads, walked)
    if past != past_v or bool(k_cache) != bool(v_cache):
        return None
    _, q_len, heads, head_dim = index.graph.shapes.get(last.outputs[0]) or (0, 0, 0, 0)
    # repeat-kv: the Expand's input is [1, kv_heads, 1, keys, head_dim]; without one, K
    # has its own head count (ONNX Attention groups the heads itself)
    expands = [index.graph.shapes.get(n.inputs[0]) or () for n in walked
               if n.op_type == "Expand"]
    k_shape = index.graph.shapes.get(k_heads) or ()
    kv_heads = (expands[0][1] if expands and len(expands[0]) == 5
                else k_shape[1] if len(k_shape) == 4 else heads)
    if not head_dim or not kv_heads or heads % kv_heads:
        return None
    # every walked node's value stays inside the match, but the present cache (a cache
    # Concat, or a view of the new keys or values) may be a graph output
    allowed = frozenset(n.outputs[0] for n in walked
                        if n.op_type == "Concat" or (n.op_type in _HEAD_VIEWS and (
                            n.outputs[0] in index.graph.outputs
                            or _sliced_out(index, n.outputs[0], walked))))
    if not _closed(index, walked, last, allowed):
        return None
    attrs = {"heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "q_len": q_len,
             "past": past, "mask": mask, "causal": causal, "softcap": softcap}
    fused = Node(last.name, ATTENTION, (q, k, v, k_cache, v_cache), last.outputs, attrs,
                 last.label)
    return fused, walked


def _attention(index: _Index, softmax: Node) -> tuple[Node, list[Node]] | None:
    shape = index.graph.shapes.get(softmax.outputs[0]) or ()
    if softmax.op_type != "Softmax" or len(shape) != 4:
        return None
    if int(softmax.attrs.get("axis", -1)) % 4 != 3:
        return None
    walked: list[Node] = [softmax]
    probs = _sanitised(index, softmax.outputs[0], walked)
    pv = index.single(probs, ("MatMul",))
    if pv is None or pv.inputs[0] != probs:
        return None
    walked.append(pv)
    back = _back_to_tokens(index, pv.outputs[0], walked)
    if back is None:
        return None
    scores, mask, cap = _mask_of(index, softmax.inputs[0], walked)
    qk = index.producer.get(scores)
    if qk is None or qk.op_type != "MatMul":
        return None
    walked.append(qk)
    q = _trace(index, qk.inputs[0], walked)
    # K reaches the product transposed in its last two axes: one such Transpose among
    # the scalings and views it passes (sdpa's decomposition reshapes to 3-D around it)
    start = len(walked)
    k_heads = _trace(index, qk.inputs[1], walked)
    swaps = [n for n in walked[start:] if n.op_type == "Transpose"]
    if len(swaps) != 1 or not _swaps_last_two(swaps[0]):
        return None
    v_heads = _trace(index, pv.inputs[1], walked)
    return _fused_attention(index, back, walked, q, k_heads, v_heads, mask, -1, cap)


def _onnx_attention(index: _Index, node: Node) -> tuple[Node, list[Node]] | None:
    """ONNX ``Attention`` (opset 23) on 4-D ``[1, heads, q_len, d]`` operands, its
    result brought back to tokens; its own cache inputs and outputs are not handled."""
    shape = index.graph.shapes.get(node.outputs[0]) or ()
    if (node.op_type != "Attention" or len(shape) != 4 or len(node.inputs) < 3
            or any(node.inputs[4:]) or any(node.outputs[1:])
            or float(node.attrs.get("softcap", 0.0)) != 0.0):
        return None
    walked = [node]
    back = _back_to_tokens(index, node.outputs[0], walked)
    if back is None:
        return None
    q = _trace(index, node.inputs[0], walked)
    k_heads = _trace(index, node.inputs[1], walked)
    v_heads = _trace(index, node.inputs[2], walked)
    mask = node.inputs[3] if len(node.inputs) > 3 else ""
    causal = 1 if int(node.attrs.get("is_causal", 0)) else -1
    return _fused_attention(index, back, walked, q, k_heads, v_heads, mask, causal)


def _split_products(index: _Index, nodes: list[Node],
                    sources: dict[str, tuple[str, ...]]) -> list[Node]:
    """Each product of a 2-D weight whose output only ``Slice`` nodes read, each a range
    of its last axis (a fused projection: Phi-3's ``qkv_proj``, ``gate_up_proj``),
    becomes one product per slice reading its columns of the weight (``b_col0``)."""
    replaced: dict[int, list[Node]] = {}
    used = {node.name for node in nodes}
    for matmul in nodes:
        if matmul.op_type != "MatMul" or matmul.outputs[0] in index.graph.outputs:
            continue
        weight = matmul.inputs[1]
        shape = index.graph.shapes.get(weight) or ()
        users = index.consumers[matmul.outputs[0]]
        if weight not in index.graph.inputs or len(shape) != 2 or not users:
            continue
        total = shape[0] if matmul.attrs.get("transB") else shape[1]
        parts = [part for user in users
                 for part in _column_ranges(index, user, matmul.outputs[0], total)]
        if any(part is None for part in parts):
            continue
        split = []
        for i, part in enumerate(parts):
            assert part is not None
            name, suffix = f"{matmul.name}_part{i}", 2
            while name in used:
                name, suffix = f"{matmul.name}_part{i}_{suffix}", suffix + 1
            used.add(name)
            split.append(Node(name, "MatMul", matmul.inputs, (part[2],),
                              {**matmul.attrs, "b_col0": part[0], "b_cols": total},
                              matmul.label))
            sources[name] = ("MatMul",) if i == 0 else ()
        for user in users:
            sources[split[0].name] += (user.op_type,)
        replaced[id(matmul)] = split
        for user in users:
            replaced[id(user)] = []
    return [new for node in nodes for new in replaced.get(id(node), [node])]


def _column_ranges(index: _Index, node: Node, value: str,
                   total: int) -> list[tuple[int, int, str] | None]:
    """``(start, end, output)`` per output of a ``Slice`` (step 1) or ``Split`` of
    ``value`` along its last axis; ``[None]`` for any other reader."""
    rank = len(index.graph.shapes.get(value) or ())
    if node.inputs[0] != value or not rank:
        return [None]
    if node.op_type == "Slice":
        found = _slice_half(index, node.outputs[0], value)
        if found is None or found[0] >= found[1] or found[1] > total:
            return [None]
        return [(found[0], found[1], node.outputs[0])]
    if node.op_type == "Split" and int(node.attrs.get("axis", 0)) % rank == rank - 1:
        ranges: list[tuple[int, int, str] | None] = []
        start = 0
        for out in node.outputs:
            width = (index.graph.shapes.get(out) or (0,))[-1]
            if not width:
                return [None]
            ranges.append((start, start + width, out))
            start += width
        return ranges if start == total else [None]
    return [None]


def fuse(graph: Graph) -> tuple[list[Node], dict[str, tuple[str, ...]]]:
    """The graph's nodes with every pattern of the module docstring fused, in an order
    where each node follows the producers of its inputs; and per fused node (by name)
    the op types of the nodes it stands for."""
    nodes = list(graph.nodes)
    sources: dict[str, tuple[str, ...]] = {}
    steps = ((_rmsnorm, "ReduceMean"), (_silu, "Mul"), (_weight_transpose, "MatMul"),
             (_int8_product, "QuantizeLinear"), (_dequantised_weight, "MatMul"),
             (_rope, "Add"), (_attention, "Softmax"), (_onnx_attention, "Attention"))
    for matcher, anchor in steps:
        index = _Index(graph, nodes)
        if matcher is _rope:  # after the weight transposes, before what reads the projections
            nodes = _split_products(index, nodes, sources)
            index = _Index(graph, nodes)
        replaced: dict[int, Node | None] = {}
        for node in nodes:
            if node.op_type != anchor or id(node) in replaced:
                continue
            found = matcher(index, node)
            if found is None or any(id(n) in replaced for n in found[1]):
                continue
            fused, matched = found
            for n in matched:
                replaced[id(n)] = None
            producer = next(n for n in matched if n.outputs[:1] == fused.outputs[:1])
            replaced[id(producer)] = fused
            sources[fused.name] = tuple(op for n in matched
                                        for op in sources.pop(n.name, (n.op_type,)))
        nodes = [replaced.get(id(n), n) for n in nodes if replaced.get(id(n), n) is not None]
    return nodes, sources
