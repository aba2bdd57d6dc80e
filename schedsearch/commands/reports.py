"""A checker report given beside a schedule (``trace`` and ``plot --violations``).

A report is only meaningful on the schedule it was made from: one of another schedule
counts other ops or buffers in its ``stats`` (a legal report names none), or names ops or
buffers this one does not have, and its violations would land on the wrong tracks (or
nowhere). Such a report is refused, rule REPORT.
"""

from __future__ import annotations

from models.errors import InputError
from models.formats import Schedule
from models.jsonio import load_json_file
from schedsearch.trace import Violation, violations_from_dict

__all__ = ["read_report_for", "check_report_names", "check_report_counts"]

_ANOTHER = "it is the report of another schedule"


def check_report_names(violations: list[Violation], schedule: Schedule,
                       report: str) -> None:
    """InputError (REPORT) if a violation names an op or buffer ``schedule`` lacks."""
    for i, violation in enumerate(violations):
        for kind, names, known in (("op", violation.ops, schedule.problem.ops),
                                   ("buffer", violation.buffers, schedule.problem.buffers)):
            unknown = next((name for name in names if name not in known), None)
            if unknown is not None:
                raise InputError(f"the report names {kind} {unknown!r}, which this schedule "
                                 f"does not have: {_ANOTHER}",
                                 source=report, path=f"$.violations[{i}].{kind}s",
                                 rule="REPORT")


def check_report_counts(document: object, schedule: Schedule, report: str) -> None:
    """InputError (REPORT) if the report's ``stats`` count other ops or buffers than
    ``schedule`` has (a report without them is judged by its names alone)."""
    stats = document.get("stats") if isinstance(document, dict) else None
    if not isinstance(stats, dict):
        return
    for key, known in (("ops", schedule.problem.ops), ("buffers", schedule.problem.buffers)):
        counted = stats.get(key)
        if isinstance(counted, int) and not isinstance(counted, bool) and \
                counted != len(known):
            raise InputError(f"the report is of a schedule with {counted} {key}, this one "
                             f"has {len(known)}: {_ANOTHER}", source=report,
                             path=f"$.stats.{key}", rule="REPORT")


def read_report_for(path: str, schedule: Schedule) -> list[Violation]:
    """The violations of the report at ``path``, checked to be ``schedule``'s."""
    document = load_json_file(path)
    violations = violations_from_dict(document, path)
    check_report_counts(document, schedule, path)
    check_report_names(violations, schedule, path)
    return violations
