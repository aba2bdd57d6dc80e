"""A checker report given beside a schedule (``trace`` and ``plot --violations``).

A report is only meaningful on the schedule it was made from: one of another schedule
names ops or buffers this one does not have, and its violations would land on the wrong
tracks (or nowhere). Such a report is refused, rule REPORT.
"""

from __future__ import annotations

from models.errors import InputError
from models.formats import Schedule
from schedsearch.trace import Violation, read_violations

__all__ = ["read_report_for", "check_report_names"]


def check_report_names(violations: list[Violation], schedule: Schedule,
                       report: str) -> None:
    """InputError (REPORT) if a violation names an op or buffer ``schedule`` lacks."""
    for i, violation in enumerate(violations):
        for kind, names, known in (("op", violation.ops, schedule.problem.ops),
                                   ("buffer", violation.buffers, schedule.problem.buffers)):
            unknown = next((name for name in names if name not in known), None)
            if unknown is not None:
                raise InputError(f"the report names {kind} {unknown!r}, which this schedule "
                                 f"does not have: it is the report of another schedule",
                                 source=report, path=f"$.violations[{i}].{kind}s",
                                 rule="REPORT")


def read_report_for(path: str, schedule: Schedule) -> list[Violation]:
    """The violations of the report at ``path``, checked to be ``schedule``'s."""
    violations = read_violations(path)
    check_report_names(violations, schedule, path)
    return violations
