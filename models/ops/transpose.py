"""A layout conversion: ``Y = transpose(X, perm)`` of an N-D view, stored as 2-D rows.

``X`` is read as the row-major view ``shape`` of its stored ``[*, x_cols]`` tensor and
``Y`` is stored as ``[*, out_cols]`` (by default each view's last dimension; an ONNX
graph whose ``Reshape`` follows or precedes the transpose stores it otherwise, see
:mod:`models.ops.views`). The output is split into blocks of ``block`` indices of its
first dimension; each block is one load of the input regions it needs, then one store.
How it costs:

- ``perm`` keeps the last dimension in place (``1,0,2``: heads <-> tokens): the copy
  engine gathers rows of whole last-dimension runs with a 2-D descriptor, so a block is
  a load and a store, no compute (the load carries the block as its ``space``);
- ``perm`` moves the last dimension (``0,2,1``: K -> K^T): the elements themselves are
  transposed by a vector op between the load and the store (one mode per unit count).

Any element type (a layout conversion does no arithmetic); a vector transpose needs one
the target's vector engine lists.
"""

from __future__ import annotations

import math
from typing import Any

from models.cost import VECTOR_PASSES, CostModel, transfer_modes, vector_modes
from models.dtypes import DTYPE_BYTES
from models.formats import Access, Box, Task
from models.ops.builder import ProblemBuilder, box_tag, split, value_access
from models.ops.checks import require_vector_dtype
from models.ops.params import Param
from models.ops.rowwise import UNITS_PARAM
from models.ops.views import parse_ints, stored_boxes

__all__ = ["KIND", "PARAMS", "BLOCK_BYTES", "build", "candidates", "op_count"]

KIND = "transpose"
#: The bytes of output a block holds when ``block`` is 0 (automatic).
BLOCK_BYTES = 65536
PARAMS = {
    "shape": Param("str", help="the input view's shape, comma-separated: 128,32,64"),
    "perm": Param("str", help="output dimension i is input dimension perm[i]: 1,0,2"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
    "x": Param("tensor", "{task}.X", help="input tensor name"),
    "out": Param("tensor", "{task}.Y", help="output tensor name"),
    "x_cols": Param("int", 0, minimum=0, help="row length of the stored input "
                                             "(0: the view's last dimension)"),
    "out_cols": Param("int", 0, minimum=0, help="row length of the stored output "
                                               "(0: the output's last dimension)"),
    "block": Param("int", 0, minimum=0, help="output first-dimension indices per block "
                                            f"(0: about {BLOCK_BYTES} bytes)"),
    "units": UNITS_PARAM,
}


def _layout(b: ProblemBuilder, p: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The checked ``shape`` and ``perm``; InputError names the parameter."""
    try:
        shape, perm = parse_ints(str(p["shape"])), parse_ints(str(p["perm"]))
    except ValueError as error:
        raise b.fail(str(error), "FORMAT") from None
    if min(shape) < 1:
        raise b.fail(f"shape {p['shape']!r} has a dimension below 1", "FORMAT")
    if sorted(perm) != list(range(len(shape))):
        raise b.fail(f"perm {p['perm']!r} is not a permutation of the {len(shape)} "
                     f"dimensions of shape {p['shape']!r}", "FORMAT")
    return shape, perm


def _cols(b: ProblemBuilder, key: str, value: int, default: int, total: int) -> int:
    cols = value or default
    if total % cols:
        raise b.fail(f"{key} {cols} does not divide the {total} elements", "SHAPE")
    return cols


def _per_block(p: dict[str, Any], out_shape: tuple[int, ...]) -> int:
    """Output first-dimension indices per block: ``block``, or about :data:`BLOCK_BYTES`."""
    slice_bytes = math.prod(out_shape[1:]) * DTYPE_BYTES[str(p["dtype"])]
    return int(p["block"]) or max(1, BLOCK_BYTES // slice_bytes)


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the transpose task ``name`` with parameters ``p`` (already checked) to ``b``."""
    shape, perm = _layout(b, p)
    out_shape = tuple(shape[d] for d in perm)
    total = math.prod(shape)
    dtype, x, y = str(p["dtype"]), str(p["x"]), str(p["out"])
    x_cols = _cols(b, "x_cols", int(p["x_cols"]), shape[-1], total)
    out_cols = _cols(b, "out_cols", int(p["out_cols"]), out_shape[-1], total)
    shuffles = perm[-1] != len(shape) - 1
    if shuffles:
        require_vector_dtype(b, dtype)
    model = b.model
    memory = model.vector.memory
    b.tensor(x, (total // x_cols, x_cols), dtype, name, written=False)
    b.tensor(y, (total // out_cols, out_cols), dtype, name, written=True)
    b.task(name, Task(kind=KIND, space=tuple((0, extent) for extent in out_shape),
                      outputs={y: ((0, total // out_cols), (0, out_cols))}, params=dict(p)))
    slice_bytes = math.prod(out_shape[1:]) * DTYPE_BYTES[dtype]
    per_block = _per_block(p, out_shape)
    wanted = int(p["units"])
    if wanted > model.vector.max_units:
        raise b.fail(f"units {wanted} is more than the {model.vector.max_units} vector "
                     f"units of the target", "FIT")
    for block in split(out_shape[0], per_block):
        label = f"b{block.index}"
        space: Box = ((block.lo, block.hi),) + tuple((0, e) for e in out_shape[1:])
        source: list[tuple[int, int]] = [(0, 0)] * len(shape)
        for j, d in enumerate(perm):
            source[d] = space[j]
        reads = tuple(Access(tensor=x, box=box)
                      for box in stored_boxes(shape, tuple(source), x_cols))
        writes = tuple(Access(tensor=y, box=box)
                       for box in stored_boxes(out_shape, space, out_cols))
        nbytes = block.size * slice_bytes
        loaded = value_access(b.buffer(f"{name}.X.{label}", memory, nbytes),
                              box_tag(x, tuple(source)))
        b.op(f"{name}.ldX.{label}", name, transfer_modes(model, model.load, nbytes),
             reads=reads, writes=(loaded,), space=None if shuffles else space)
        result = loaded
        if shuffles:
            result = value_access(b.buffer(f"{name}.Y.{label}", memory, nbytes),
                                  box_tag(y, space))
            modes = vector_modes(model, nbytes, VECTOR_PASSES["transpose"], dtype=dtype)
            if wanted:
                modes = tuple(m for m in modes if m.lanes[model.vector.lane] == wanted)
            b.op(f"{name}.tr.{label}", name, modes, reads=(loaded,), writes=(result,),
                 space=space)
        b.op(f"{name}.st.{label}", name, transfer_modes(model, model.store, nbytes),
             reads=(result,), writes=writes)


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """Blocks of 1, 4, 16 and 64 first-dimension indices (capped at the dimension), and
    the automatic size."""
    try:
        first = parse_ints(str(p["shape"]))[parse_ints(str(p["perm"]))[0]]
    except (ValueError, IndexError):
        return {}
    return {"block": tuple(sorted({0} | {min(size, first) for size in (1, 4, 16, 64)}))}


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per block a load and a store, and a vector transpose between them when the last
    dimension moves; 0 for a ``shape`` or ``perm`` that :func:`build` refuses."""
    try:
        shape, perm = parse_ints(str(p["shape"])), parse_ints(str(p["perm"]))
        out_shape = tuple(shape[d] for d in perm)
    except (ValueError, IndexError):
        return 0
    if not out_shape or min(out_shape) < 1:
        return 0
    blocks = -(-out_shape[0] // _per_block(p, out_shape))
    return blocks * (3 if perm[-1] != len(shape) - 1 else 2)
