"""The plain list schedule: the simplest legal scheduler, as a baseline for the search.

What a new user would write first (ready ops in problem order, first fitting mode,
first-fit addresses, no look-ahead: see :mod:`schedsearch.engine.plain`), and what the
search must never lose to. The search runs this very function before its portfolio,
whatever the limit, and keeps its answer, so the guarantee holds by construction;
``bench_memory --versus-list`` prints the comparison at each limit.
"""

from __future__ import annotations

from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.plain import plain_list_schedule
from schedsearch.engine.solution import Solution

__all__ = ["list_schedule"]


def list_schedule(inst: Instance, dag: Dag) -> Solution | None:
    """The plain list schedule of ``inst``, or None when it deadlocks (nothing runs and
    no ready op fits). ``dag`` must have no barrier nodes."""
    return plain_list_schedule(inst, dag).solution
