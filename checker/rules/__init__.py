"""The legality rules of FORMATS.md, one module per topic, in the order reports use.

Each rule is a function ``Model -> list[Violation]``. ``needs`` names the sections that
must be free of FORMAT faults for the rule to be judged at all: rules that conclude from
an absence (a gap in a partition, a read with no earlier write, the largest end) would
otherwise blame the schedule for what the document failed to say. Rules that only find
conflicts between elements run on whatever is usable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from checker.model import Model
from checker.report import Violation
from checker.rules.budgets import check_budgets
from checker.rules.coverage import check_coverage
from checker.rules.lanes import check_lane_overlap, check_units
from checker.rules.memory import check_alias, check_lifetime, check_mem_range
from checker.rules.ops import check_after, check_makespan, check_modes, check_names
from checker.rules.outputs import check_ddr_raw, check_outputs
from checker.rules.values import check_stale_reads, check_write_races

__all__ = ["Rule", "RULES"]


@dataclass(frozen=True, slots=True)
class Rule:
    codes: tuple[str, ...]
    check: Callable[[Model], list[Violation]]
    needs: frozenset[str] = frozenset()


RULES: tuple[Rule, ...] = (
    Rule(("OP_MISSING", "OP_UNKNOWN"), check_names),
    Rule(("MODE", "DURATION"), check_modes),
    Rule(("UNITS",), check_units),
    Rule(("LANE_OVERLAP",), check_lane_overlap),
    Rule(("BUDGET",), check_budgets),
    Rule(("AFTER",), check_after),
    Rule(("COVERAGE",), check_coverage, frozenset({"tasks", "ops"})),
    Rule(("OUTPUT",), check_outputs, frozenset({"tensors", "tasks", "ops"})),
    Rule(("DDR_RAW",), check_ddr_raw),
    Rule(("MEM_RANGE",), check_mem_range),
    Rule(("ALIAS",), check_alias),
    Rule(("LIFETIME",), check_lifetime),
    Rule(("STALE_READ",), check_stale_reads,
         frozenset({"buffers", "ops", "schedule.ops"})),
    Rule(("WRITE_RACE",), check_write_races),
    Rule(("MAKESPAN",), check_makespan, frozenset({"ops", "schedule.ops"})),
)
