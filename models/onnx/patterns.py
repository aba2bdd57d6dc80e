"""Patterns that exporters emit for one operation, fused back into one node.

- SiLU: ``Mul(x, Sigmoid(x))`` (either operand order) -> ``SiLU(x)``.
- RMSNorm as older exporters (and ``torch.onnx`` for a hand-written RMSNorm) decompose
  it: ``Pow(x, 2)`` (or ``Mul(x, x)``) -> ``ReduceMean`` over the last axis -> ``Add(eps)``
  -> ``Sqrt`` -> ``Div(x, .)``, or ``Reciprocal`` / ``Div(1, .)`` then ``Mul(x, .)``; then
  optionally ``Mul`` by a weight -> ``RMSNorm(x, weight)``.

A pattern matches only when every intermediate value is used by the pattern alone (and
is no graph output), so fusing never hides a value another node needs. Fused nodes keep
the name of the node that produces their output.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from models.onnx.graph import Graph, Node

__all__ = ["SILU", "RMSNORM", "fuse"]

#: Op types of the fused nodes (not ONNX op types).
SILU, RMSNORM = "SiLU", "RMSNorm(pattern)"


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


def _rmsnorm(index: _Index, mean: Node) -> tuple[Node, list[Node]] | None:
    if mean.op_type != "ReduceMean" or not mean.attrs.get("keepdims", 1):
        return None
    square = index.producer.get(mean.inputs[0])
    if square is None or not index.only_use(mean.inputs[0], mean):
        return None
    squares = ((square.op_type == "Pow" and _is_number(index.constant(square.inputs[1]), 2.0))
               or (square.op_type == "Mul" and square.inputs[0] == square.inputs[1]))
    if not squares:
        return None
    x = square.inputs[0]
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
    matched = [square, mean, add, sqrt, step]
    if step.op_type == "Div" and step.inputs[0] == x:
        normed = step
    else:
        if step.op_type == "Div" and not _is_number(index.constant(step.inputs[0]), 1.0):
            return None
        normed = index.single(step.outputs[0], ("Mul",))
        if normed is None or _other(normed, step.outputs[0]) != x:
            return None
        matched.append(normed)
    inputs: tuple[str, ...] = (x,)
    last = normed
    scale = index.single(normed.outputs[0], ("Mul",))
    cols = (index.graph.shapes.get(x) or (0,))[-1]
    if scale is not None:
        weight = _other(scale, normed.outputs[0])
        if weight in index.graph.inputs and index.graph.shapes.get(weight) == (cols,):
            inputs, last = (x, weight), scale
            matched.append(scale)
    fused = Node(last.name, RMSNORM, inputs, last.outputs,
                 {"epsilon": float(eps.reshape(-1)[0])}, last.label)
    return fused, matched


def fuse(graph: Graph) -> list[Node]:
    """The graph's nodes with every SiLU and decomposed-RMSNorm pattern fused, in an
    order where each node follows the producers of its inputs."""
    nodes = list(graph.nodes)
    for matcher, anchor in ((_rmsnorm, "ReduceMean"), (_silu, "Mul")):
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
            replaced[id(matched[-1])] = fused
        nodes = [replaced.get(id(n), n) for n in nodes if replaced.get(id(n), n) is not None]
    return nodes
