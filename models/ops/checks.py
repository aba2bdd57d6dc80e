"""Refusing an element type an engine does not take, with the types it does take.

The accepted types are the keys of the target's ``costs.<engine>.dtypes``
(:mod:`models.cost`); a task in another type is an InputError with rule ``DTYPE`` at the
task, so a user learns before any search that (say) an f32 GEMM has no matrix engine.
"""

from __future__ import annotations

from models.ops.builder import ProblemBuilder

__all__ = ["require_matrix_dtype", "require_vector_dtype"]


def require_matrix_dtype(b: ProblemBuilder, dtype: str) -> None:
    """InputError (``DTYPE``) unless the target's matrix engine takes ``dtype``."""
    accepted = b.model.matrix.accepted()
    if dtype not in accepted:
        raise b.fail(f"the matrix engine of {b.target.name} does not take {dtype}; it takes "
                     f"{', '.join(accepted)} ({dtype} work runs on the vector engine only)",
                     "DTYPE")


def require_vector_dtype(b: ProblemBuilder, dtype: str) -> None:
    """InputError (``DTYPE``) unless the target's vector engine takes ``dtype``."""
    accepted = b.model.vector.accepted()
    if dtype not in accepted:
        raise b.fail(f"the vector engine of {b.target.name} does not take {dtype}; it takes "
                     f"{', '.join(accepted)}", "DTYPE")
