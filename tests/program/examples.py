"""The bundled examples' searched schedules and their lowerings, solved once per session."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from models.formats import schedule_to_dict
from models.workload import example_names, load_problem_input
from schedsearch.engine.search import solve
from schedsearch.program import Lowering, lower_report

#: Seconds of search per example: enough for the search's own stages to run.
SOLVE_SECONDS = 0.3


@cache
def searched(name: str) -> tuple[dict[str, Any], Lowering]:
    """The schedule document the search writes for example ``name``, and its lowering
    (every bundled example must get one: a refusal fails the test that asked)."""
    problem, target = load_problem_input(name, None)
    schedule = solve(problem, target, time_limit=SOLVE_SECONDS)
    return json.loads(json.dumps(schedule_to_dict(schedule))), lower_report(schedule)


#: Every bundled example but the two Llama decoder blocks: they are the Qwen blocks' graph
#: (the same 14 tasks and kinds, decode and prefill) at 2-3 times the ops, and took a
#: third of this folder's time without a case of lowering the Qwen blocks lack.
LARGER_TWINS = frozenset({"llama-3.2-1b-decode-v75", "llama-3.2-1b-prefill-v75"})
EXAMPLES = [name for name in example_names() if name not in LARGER_TWINS]
