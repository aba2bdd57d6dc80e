"""Report rendering: the verdict line, groups by code, the cap, and the JSON shape."""

from __future__ import annotations

from checker.report import Report, Violation, make_stats, render_human, sort_violations


def report_of(*violations: Violation) -> Report:
    ordered = sort_violations(list(violations))
    return Report(ordered, make_stats(ordered, 3, 1, 0.5, []))


def test_human_report_groups_by_code_in_table_order() -> None:
    report = report_of(Violation("MAKESPAN", "m", time=9),
                       Violation("ALIAS", "a1", buffers=("x", "y"), time=1),
                       Violation("ALIAS", "a2", ops=("o",), tensors=("T",)))
    assert render_human(report, "f.json").splitlines() == [
        "ILLEGAL: f.json: 3 violations of 2 rules (3 ops, 1 buffers, 0.500 s)",
        "ALIAS (2)",
        "  t=1: a1 [buffers: x, y]",
        "  a2 [ops: o; tensors: T]",
        "MAKESPAN (1)",
        "  t=9: m",
    ]


def test_human_report_cap_keeps_the_group_counts() -> None:
    report = report_of(*(Violation("UNITS", f"u{i}") for i in range(5)))
    lines = render_human(report, "f", max_violations=2).splitlines()
    assert lines[1] == "UNITS (5)" and len(lines) == 5
    assert lines[-1] == "... 3 more not listed (see --max-violations)"


def test_legal_report() -> None:
    report = report_of()
    assert report.legal
    assert render_human(report, "f") == "LEGAL: f: no violations (3 ops, 1 buffers, 0.500 s)"
    assert report.to_dict() == {"legal": True, "violations": [], "stats": report.stats}


def test_skipped_rules_are_mentioned() -> None:
    violation = Violation("FORMAT", "$.x: bad")
    report = Report([violation], make_stats([violation], 0, 0, 0.0, ["COVERAGE"]))
    assert render_human(report, "f").endswith(
        "not checked because of FORMAT violations: COVERAGE")
