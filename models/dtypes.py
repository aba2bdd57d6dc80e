"""Element types a workload may name, and their sizes in bytes.

``i8`` is int8 (ONNX ``INT8``), ``u8`` uint8, and so on. Which types an engine computes
in, and at what rate, is the target's to say (``costs.matrix.dtypes``,
``costs.vector.dtypes``, see :mod:`models.cost`): on the bundled targets int8 runs on the
matrix engine with int32 accumulators and f32 on the vector engine only.
"""

from __future__ import annotations

__all__ = ["DTYPE_BYTES"]

#: Bytes per element of each element type.
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "u8": 1, "i16": 2, "i32": 4}
