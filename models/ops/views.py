"""Regions of an N-D view of a tensor stored as 2-D rows, as boxes of the stored tensor.

Tensors are stored row-major as ``[elements / cols, cols]``. A view reads the same
elements with another shape (an ONNX ``Reshape`` is one); a box of the view is a set of
runs of consecutive elements, and :func:`stored_boxes` turns it into the fewest boxes of
the stored tensor it can find by merging runs that continue each other: a head's
``[S, 1, 64]`` slice of a ``[S, 32, 64]`` view of ``[S, 2048]`` is the one box
``[0:S, 64h:64h+64]``.
"""

from __future__ import annotations

import itertools
import math

from models.formats import Box

__all__ = ["stored_boxes", "parse_ints"]


def parse_ints(text: str) -> tuple[int, ...]:
    """``"128,32,64"`` -> ``(128, 32, 64)``; ValueError if it is not such a list."""
    parts = text.split(",")
    if not all(part.strip().isdigit() for part in parts):
        raise ValueError(f"expected comma-separated whole numbers, got {text!r}")
    return tuple(int(part) for part in parts)


def stored_boxes(shape: tuple[int, ...], box: Box, cols: int) -> list[Box]:
    """The boxes of the stored ``[prod(shape) / cols, cols]`` tensor that hold exactly the
    elements of ``box`` of the row-major view ``shape``, in storage order."""
    rank = len(shape)
    # the innermost dimensions the box covers whole are one contiguous run with the
    # first dimension (from the inside) that it covers only in part
    split_at = rank - 1
    while split_at > 0 and box[split_at] == (0, shape[split_at]):
        split_at -= 1
    inner = math.prod(shape[split_at + 1:])
    run = (box[split_at][1] - box[split_at][0]) * inner
    strides = [math.prod(shape[d + 1:]) for d in range(rank)]
    pieces: list[tuple[int, int, int]] = []  # (row, col lo, col hi)
    for index in itertools.product(*(range(lo, hi) for lo, hi in box[:split_at])):
        flat = sum(i * s for i, s in zip(index, strides, strict=False))
        flat += box[split_at][0] * strides[split_at]
        left = run
        while left:
            row, col = divmod(flat, cols)
            take = min(left, cols - col)
            pieces.append((row, col, col + take))
            flat += take
            left -= take
    boxes: list[list[int]] = []  # [row lo, row hi, col lo, col hi]
    for row, lo, hi in pieces:
        last = boxes[-1] if boxes else None
        if last is not None and last[1] == row and (last[2], last[3]) == (lo, hi):
            last[1] = row + 1
        else:
            boxes.append([row, row + 1, lo, hi])
    return [((r0, r1), (c0, c1)) for r0, r1, c0, c1 in boxes]
