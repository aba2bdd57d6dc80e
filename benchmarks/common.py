"""What every benchmark module shares: where the public data lives, and how figures leave.

Each benchmark is a module with a ``main(argv) -> int`` that prints a readable table and,
with ``--json PATH``, writes its figures as one JSON object, so that the runner can start
it in a process of its own (clean peak RSS) and still collect every figure.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["REPO", "external_dir", "in_fresh_process", "write_figures"]

#: The repository root (this file is ``<repo>/benchmarks/common.py``).
REPO = Path(__file__).resolve().parent.parent


def external_dir(option: str | None = None) -> Path | None:
    """The public data folder (``--external``, else ``$NPU_BENCH_EXTERNAL``, else
    ``<repo>/../shared/external``, else the ``python -m benchmarks.data fetch`` cache), or
    None when it is absent: benchmarks on public data then skip cleanly, saying how to
    get it (:func:`benchmarks.data.skip_reason`). The data is read in place and never
    copied into the repository."""
    from benchmarks.data import locate

    return locate(option)


def write_figures(path: str | os.PathLike[str] | None, figures: dict[str, Any]) -> None:
    """Write ``figures`` as JSON to ``path`` (nothing when ``path`` is None)."""
    if path is not None:
        Path(path).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


def in_fresh_process(case: Callable[[Any, Any], None], argument: Any) -> dict[str, Any]:
    """The row ``case(argument, queue)`` puts on its queue, run in a spawned process, so
    that the peak RSS it reports is its own and no earlier import is warm."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=case, args=(argument, queue))
    process.start()
    row = queue.get()
    process.join()
    return row
