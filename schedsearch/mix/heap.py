"""Python's cycle collector paused while ``mix`` builds large acyclic data.

Why: restricting 150 kernels, keying them and writing three schedules of 3,000-3,600
ops for the checker allocate hundreds of thousands of small objects, none in cycles,
and each collection walks the whole heap (the tiled mix problems): on the bench mix
the collections were a third of the command's CPU after its imports (0.45 of 1.6 s).
Reference counting still frees everything, and garbage in cycles made during a pause
is collected by the next collection after it. The tiler (:mod:`models.workload`) and the
checker pause the collector the same way; the searches (whose length has no bound) run
with it, the list schedules given instead of a search (:mod:`.cuts`) without.
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
