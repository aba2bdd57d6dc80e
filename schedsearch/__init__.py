"""Search static schedules for NPU engines, and weigh them against today's paths.

- :func:`solve`: a problem and a target to a legal schedule with a short makespan;
- :func:`compare`: the four execution paths of one problem, scored by one cost model;
- :func:`select`: the saved plan whose domain holds for a request, or the fallback;
- :func:`tune`: tile sizes, vector units and buffer depths chosen jointly;
- :func:`lower`: a schedule to the program a runtime executes (queues and waits);
- :func:`chain`: paths A, B and C of each producer -> consumer edge of a workload;
- :func:`whatif`: the gain of idealising one resource at a time, then all together.

``chain`` and ``whatif`` are defined in ``schedsearch.chains.paths`` and
``schedsearch.idealise``, where their result types live too.

The functions are imported on first use (PEP 562), so that importing one submodule, as
each command of the ``schedsearch`` tool does, does not load every library of the others.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["solve", "compare", "select", "tune", "lower", "chain", "whatif"]

#: Public name -> (module, attribute).
_EXPORTS = {
    "solve": ("schedsearch.engine.search", "solve"),
    "compare": ("schedsearch.paths", "compare"),
    "select": ("schedsearch.plans", "select"),
    "tune": ("schedsearch.tuning.joint", "tune"),
    "lower": ("schedsearch.program", "lower"),
    "chain": ("schedsearch.chains.paths", "chain_paths"),
    "whatif": ("schedsearch.idealise", "whatif"),
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'schedsearch' has no attribute {name!r}")
    module, attribute = _EXPORTS[name]
    from schedsearch.shadowing import shadowing_file, shadowing_message

    hidden = shadowing_file()
    if hidden is not None:  # else: "No module named 'models.errors'; 'models' is not a package"
        raise ImportError(shadowing_message(hidden))
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
