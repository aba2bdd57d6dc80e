"""The search as stages run by one loop (:func:`.base.run_stages`), in the order of
:data:`PIPELINE`:

1. :class:`.constructive.Constructive`: the list schedule, or CP-SAT as the last resort;
2. :class:`.constructive.TasksInSequence`: the tasks one after another, each searched
   alone;
3. :class:`.improvement.Improvement`: :class:`.improvement.WholeModel`,
   :class:`.improvement.Justify` and :class:`.improvement.Lns`, on what the secondary
   objective leaves;
4. :class:`.constructive.FinalComparison`: the tasks in sequence if still shorter;
5. :class:`.secondary.PeakMemory`: the secondary objective.

Each stage's share of the budget is a field of
:class:`~schedsearch.engine.params.SearchParams`.
"""

from __future__ import annotations

from schedsearch.engine.stages.base import (
    Found,
    SearchContext,
    SearchState,
    Stage,
    run_stages,
)
from schedsearch.engine.stages.constructive import (
    Constructive,
    FinalComparison,
    TasksInSequence,
)
from schedsearch.engine.stages.improvement import Improvement, Justify, Lns, WholeModel
from schedsearch.engine.stages.secondary import PeakMemory

__all__ = ["PIPELINE", "Found", "SearchContext", "SearchState", "Stage", "run_stages",
           "Constructive", "TasksInSequence", "Improvement", "WholeModel", "Justify", "Lns",
           "FinalComparison", "PeakMemory"]

#: The stages of every solve, in order.
PIPELINE: tuple[Stage, ...] = (
    Constructive(),
    TasksInSequence(),
    Improvement((WholeModel(), Justify(), Lns())),
    FinalComparison(),
    PeakMemory(),
)
