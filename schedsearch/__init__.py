"""Search static schedules for NPU engines, and weigh them against today's paths.

- :func:`solve`: a problem and a target to a legal schedule with a short makespan;
- :func:`compare`: the four execution paths of one problem, scored by one cost model;
- :func:`select`: the saved plan whose domain holds for a request, or the fallback;
- :func:`tune`: tile sizes, vector units and buffer depths chosen jointly;
- :func:`lower`: a schedule to the program a runtime executes (queues and waits);
- :func:`chain`: paths A, B and C of each producer -> consumer edge of a workload;
- :func:`whatif`: the gain of idealising one resource at a time, then all together.

``chain`` and ``whatif`` are also the names of the modules that define them
(``schedsearch.chain.paths``, ``schedsearch.whatif``): import their types with
``from schedsearch.whatif import WhatIf``, not ``import schedsearch.whatif as ...``.
"""

from schedsearch.api import solve
from schedsearch.chain.paths import chain_paths as chain
from schedsearch.paths import compare
from schedsearch.plans import select
from schedsearch.program import lower
from schedsearch.tuning.joint import tune
from schedsearch.whatif import whatif

__all__ = ["solve", "compare", "select", "tune", "lower", "chain", "whatif"]
