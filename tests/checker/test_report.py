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
        "ILLEGAL: f.json: 3 violations of 2 rules (3 ops, 1 buffer, 0.500 s)",
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
    assert render_human(report, "f") == "LEGAL: f: no violations (3 ops, 1 buffer, 0.500 s)"
    assert report.to_dict() == {"legal": True, "violations": [], "stats": report.stats}


def test_skipped_rules_are_mentioned() -> None:
    violation = Violation("FORMAT", "$.x: bad")
    report = Report([violation], make_stats([violation], 0, 0, 0.0, ["COVERAGE"]))
    assert render_human(report, "f").endswith(
        "not checked because of FORMAT violations: COVERAGE")


def test_plural_says_one_thing_in_the_singular() -> None:
    from checker.report import plural

    assert [plural(n, "buffer") for n in (0, 1, 2)] == ["0 buffers", "1 buffer", "2 buffers"]


def test_counts_of_one_read_in_the_singular_in_every_case_message() -> None:
    """No message says "1 ops", "1 violations", "1 mode(s)" and the like: every negative
    example, and a few built to count exactly one (a window of one tick, one op over a
    budget, a unit outside a lane of one)."""
    import re

    from checker import verify

    from .cases import CASES
    from .schedules import legal

    one_tick, one_op, one_unit = legal(), legal(), legal()
    one_tick["ops"]["mm0"]["end"] = one_tick["ops"]["mm0"]["start"] + 1
    one_op["problem"]["ops"]["st"]["modes"][0]["budgets"]["DDR_BW"] = 61
    one_unit["ops"]["mm0"]["units"]["HMX"] = [3]
    documents = [case.negative() for case in CASES] + [one_tick, one_op, one_unit]
    singular = re.compile(r"(?<![\d.])1 [A-Za-z ]*?[a-z]+(s|\(s\))(?![a-z])")
    for document in documents:
        text = render_human(verify(document), "f", max_violations=1000)
        assert not singular.search(text), text
    assert "1 op running" in render_human(verify(one_op), "f")
    assert "1 tick," in render_human(verify(one_tick), "f")
