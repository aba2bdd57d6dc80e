"""The search engine: from a problem and a target to a legal schedule with a short makespan.

:mod:`schedsearch.engine.search` is the entry (``solve``, ``solve_report``). The rest is the
machinery it runs: the instance and dependency graph (``instance``, ``hazards``), the list
scheduler (``orders``, ``serial``, ``portfolio``, ``fallback``), CP-SAT (``cpsat``), LNS (``lns``),
justified sampling (``justify``), the mirrored problem (``mirror``), buffer placement
(``placement``, ``offsets``), the time budget (``timebudget``), problem slicing (``slicing``)
and the lower bounds that solve LPs and CP-SAT (``bounds``).

Layer: imports only :mod:`models` and itself; never a feature, the CLI or the checker.
"""
