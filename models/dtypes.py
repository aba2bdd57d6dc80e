"""Element types a workload may name, and their sizes in bytes."""

from __future__ import annotations

__all__ = ["DTYPE_BYTES"]

#: Bytes per element of each element type.
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "u8": 1, "i16": 2, "i32": 4}
