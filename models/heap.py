"""Python's cycle collector paused while large acyclic data is built.

Why: tiling a layer, restricting a mix's kernels or writing schedules of thousands of
ops for the checker allocate hundreds of thousands of small objects, none in cycles,
and each collection walks the whole growing heap: on a 10,000-op layer collections took
about half of tiling's time (``python benchmarks/bench_prepare.py``), on the bench mix a
third of the command's CPU after its imports. Reference counting still frees
everything, and garbage in cycles made during a pause is collected by the next
collection after it. The searches (whose length has no bound) run with the collector.
The checker pauses it the same way with its own code (it shares none with this package).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cycles_uncollected"]


@contextmanager
def cycles_uncollected() -> Iterator[None]:
    """The cycle collector paused for the block (restored as it was)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
