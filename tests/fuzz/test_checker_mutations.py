"""The real checker against legal schedules and their mutants, and against the reference.

- Legal originals (built in tests/fuzz/strategies.py, not by the search) give no violation.
- Each mutation operator's mutant makes the checker report the operator's code (one
  property over all operators: each drawn schedule serves all 18).
- On random mutants (0-3 operators chained) the checker and the naive reference checker
  report the same set of codes; where the spec leaves room the comparison is narrowed,
  as documented in ``_comparable`` and docs/fuzzing.md.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given, note, reject, settings
from hypothesis import strategies as st

from ._budget import examples
from ._real import dump, real_codes, real_report_text
from .junk import corrupted
from .mutations import NOISE, apply_chain, mutate
from .reference_checker import CODES, TooLarge, reference_codes
from .strategies import legal_schedules


@given(legal_schedules())
def test_legal_schedules_have_no_violation(doc: dict[str, Any]) -> None:
    note(dump(doc))
    assert real_codes(doc) == set(), real_report_text(doc)


def test_checker_reports_each_mutation() -> None:
    """Each operator's mutant of a drawn legal schedule makes the checker report the
    operator's code (and breaks that rule according to the reference).

    One property over all 18 operators rather than one per operator: drawing a legal
    schedule is most of the cost, and 18 properties drew the same schedules 18 times for
    25 mutants each. Here every drawn schedule gets every operator that applies to it,
    4 times the profile's examples of schedules (100 in ``ci``), so each code gets more
    mutants than its own property's 25 did (33 for STALE_READ, the least applicable, on
    2026-12-01) in a third of the time. Every operator must apply to at least 1 schedule
    in 6, the bar of test_reference.py, or its check would be nearly vacuous."""
    checked = dict.fromkeys(CODES, 0)
    drawn = 0

    @settings(max_examples=examples(4.0))
    @given(doc=legal_schedules(), data=st.data())
    def every_operator(doc: dict[str, Any], data: st.DataObject) -> None:
        nonlocal drawn
        drawn += 1
        for code in CODES:
            mutant = mutate(code, doc, data.draw)
            if mutant is None:
                continue
            checked[code] += 1
            assert code in reference_codes(mutant), (
                f"the {code} operator missed its rule: {dump(mutant)}")
            codes = real_codes(mutant)
            assert code in codes, (
                f"expected {code}, got:\n{real_report_text(mutant)}\n{dump(mutant)}")

    every_operator()
    rare = {code: f"{n}/{drawn}" for code, n in checked.items() if n * 6 < drawn}
    assert not rare, f"operators too rarely applicable to check: {rare}"


def _comparable(codes: set[str]) -> set[str]:
    """FORMAT masks the rest: what a checker reports beside it is not specified."""
    return {"FORMAT"} if "FORMAT" in codes else codes


@given(doc=legal_schedules(), data=st.data())
def test_checker_agrees_with_the_reference(doc: dict[str, Any], data: st.DataObject) -> None:
    # noise first and FORMAT last: Hypothesis favours early choices, and FORMAT masks the
    # rest of the comparison
    choices = [*NOISE, *(c for c in CODES if c != "FORMAT"), "FORMAT"]
    chain = data.draw(st.lists(st.sampled_from(choices), min_size=1, max_size=3),
                      label="mutations")
    mutant, applied = apply_chain(doc, chain, data.draw)
    note(f"applied {applied}: {dump(mutant)}")
    try:
        expected = reference_codes(mutant)
    except TooLarge:  # a boundary value made a size or a shape huge
        event("reference: too large")
        reject()
    actual = real_codes(mutant)
    for code in sorted(expected):
        event(f"reference reports {code}")
    if not expected:
        event("reference reports nothing")
    assert _comparable(actual) == _comparable(expected), (
        f"reference {sorted(expected)} != checker {sorted(actual)}\n"
        f"{real_report_text(mutant)}")


def _judged_alike(doc: dict[str, Any], expected: set[str]) -> None:
    """A pinned counterexample: both checkers report exactly ``expected``."""
    assert reference_codes(doc) == expected
    assert real_codes(doc) == expected, real_report_text(doc)


#: Found by the property above under the long profile: a UNITS mutant put t0.op0 on DMA
#: unit 1 of a one-unit lane, then a LANE_OVERLAP mutant added an op on the same index at
#: the same time. A nonexistent unit is UNITS' fault only; LANE_OVERLAP is about the
#: lane's units, indices in [0, count) (docs/fuzzing.md).
NONEXISTENT_UNIT_HELD_TWICE: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {"format": "npu-target/1", "name": "fuzz", "time_unit": "ns",
               "lanes": {"DMA": 1}, "budgets": {},
               "memories": {"VTCM": {"capacity_bytes": 1, "alignment_bytes": 1}}, "costs": {}},
    "problem": {"format": "npu-problem/1", "name": "fuzz", "tensors": {},
                "tasks": {"t0": {"kind": "gemm"}}, "buffers": {},
                "ops": {"t0.op0": {"task": "t0", "modes": [{"duration": 1}]},
                        "clash.op0": {"task": "t0",
                                      "modes": [{"duration": 1, "lanes": {"DMA": 1}}]}},
                "after": []},
    "ops": {"t0.op0": {"mode": 0, "start": 0, "end": 1, "units": {"DMA": [1]}},
            "clash.op0": {"mode": 0, "start": 0, "end": 1, "units": {"DMA": [1]}}},
    "buffers": {}, "makespan": 1,
    "meta": {"solver": "tests/fuzz", "status": "LEGAL_BY_CONSTRUCTION"}}


def test_checker_agrees_with_the_reference_on_a_nonexistent_unit_held_twice() -> None:
    _judged_alike(NONEXISTENT_UNIT_HELD_TWICE, {"UNITS"})


@given(data=st.data())
def test_checker_agrees_with_the_reference_on_corrupted_documents(data: st.DataObject) -> None:
    """One subtree of a legal schedule replaced, deleted or extended (tests/fuzz/junk.py):
    both checkers must agree on whether the document is well-formed, and on the codes
    when it is.

    Left out: a well-formed document with a huge buffer, tensor or box, which the
    reference cannot expand into sets (it raises TooLarge; counted as an event).
    """
    doc = data.draw(corrupted(data.draw(legal_schedules(max_ops=5), label="original")),
                    label="corrupted")
    note(dump(doc))
    try:
        expected = reference_codes(doc)
    except TooLarge:
        event("reference: too large")
        reject()
    actual = real_codes(doc)
    event("reference: FORMAT" if "FORMAT" in expected else f"reference: {len(expected)} codes")
    assert _comparable(actual) == _comparable(expected), (
        f"reference {sorted(expected)} != checker {sorted(actual)}\n"
        f"{real_report_text(doc)}")


def _inverted(w: tuple[int, int], r: tuple[int, int], makespan: int,
              after: bool = False, ddr: bool = False) -> dict[str, Any]:
    """The shape the corrupted-document property found, cut down: op ``w`` (two HVX units)
    writes ``b1`` and ``b2``, op ``r`` (HVX unit 0) reads ``b2``; ``b1`` lives [0, 2) and
    ``b2`` [0, 4). The property replaced ``w``'s start with 23263256, past its end 2.
    With ``ddr``, ``w`` also writes output tensor ``T`` and ``r`` reads it."""
    doc: dict[str, Any] = {
        "format": "npu-schedule/1",
        "target": {"format": "npu-target/1", "name": "fuzz", "lanes": {"HVX": 2},
                   "memories": {"L2": {"capacity_bytes": 8, "alignment_bytes": 1}}},
        "problem": {
            "format": "npu-problem/1", "name": "fuzz", "tasks": {"t0": {"kind": "gemm"}},
            "buffers": {"b1": {"memory": "L2", "size": 2}, "b2": {"memory": "L2", "size": 2}},
            "ops": {"w": {"task": "t0", "modes": [{"duration": 2, "lanes": {"HVX": 2}}],
                          "writes": [{"buffer": "b1", "value": "x"},
                                     {"buffer": "b2", "value": "y"}]},
                    "r": {"task": "t0", "modes": [{"duration": 2, "lanes": {"HVX": 1}}],
                          "reads": [{"buffer": "b2", "value": "y"}]}},
            "after": [["w", "r"]] if after else []},
        "ops": {"w": {"mode": 0, "start": w[0], "end": w[1], "units": {"HVX": [0, 1]}},
                "r": {"mode": 0, "start": r[0], "end": r[1], "units": {"HVX": [0]}}},
        "buffers": {"b1": {"offset": 0, "alloc": 0, "free": 2},
                    "b2": {"offset": 2, "alloc": 0, "free": 4}},
        "makespan": makespan}
    if ddr:
        problem = doc["problem"]
        problem["tensors"] = {"T": {"shape": [1], "dtype": "f16", "role": "output"}}
        problem["ops"]["w"]["writes"].append({"tensor": "T", "box": [[0, 1]]})
        problem["ops"]["r"]["reads"].append({"tensor": "T", "box": [[0, 1]]})
    return doc


@pytest.mark.parametrize(("doc", "expected"), [
    (_inverted((0, 2), (2, 4), 4), set()),
    # as found: checker/ also reported LIFETIME (w starts after b1 is freed) and
    # STALE_READ (it made w's value visible at its start)
    (_inverted((23263256, 2), (2, 4), 4), {"DURATION"}),
    # the reader inverted too: it reads nothing, and holds no unit
    (_inverted((23263256, 2), (9, 3), 3), {"DURATION"}),
    # rules on the numbers alone judge an inverted window like any other
    (_inverted((9, 3), (2, 4), 4, after=True), {"DURATION", "AFTER", "STALE_READ"}),
    (_inverted((9, 2), (2, 4), 9), {"DURATION", "MAKESPAN"}),
    (_inverted((0, 2), (1, 0), 2, ddr=True), {"DURATION", "DDR_RAW"}),  # starts too early
], ids=["legal", "as found", "inverted reader", "after and visibility", "makespan",
        "ddr read"])
def test_checker_agrees_with_the_reference_on_an_inverted_window(
        doc: dict[str, Any], expected: set[str]) -> None:
    """Found by the property above under the long profile (docs/fuzzing.md): an op whose
    ``end`` lies before its ``start`` runs in an empty window."""
    _judged_alike(doc, expected)


def _huge(figure: str) -> dict[str, Any]:
    doc = _inverted((0, 2), (2, 4), 4)
    if figure == "long window":  # one op runs for 10**15 ticks, with a budget
        doc = _inverted((0, 10**15), (2, 4), 10**15)
        doc["target"]["budgets"] = {"BW": 1}
        for op in ("w", "r"):
            doc["problem"]["ops"][op]["modes"][0]["budgets"] = {"BW": 1}
    elif figure == "largest int64":
        doc["problem"]["ops"]["w"]["modes"][0]["duration"] = 2**63 - 1
    elif figure == "past int64":
        doc["problem"]["ops"]["w"]["modes"][0]["duration"] = 2**63
    elif figure == "below int64":
        doc["ops"]["w"]["start"] = -(2**63) - 1
    return doc


@pytest.mark.parametrize(("figure", "expected"), [
    ("long window", {"BUDGET", "LANE_OVERLAP", "LIFETIME", "STALE_READ"}),
    ("largest int64", {"DURATION"}),
    ("past int64", {"FORMAT"}),
    ("below int64", {"FORMAT"}),
])
def test_checker_agrees_with_the_reference_on_huge_figures(figure: str,
                                                           expected: set[str]) -> None:
    """Corrupted documents name huge integers: the reference judges long windows at the
    instants where windows start (it used to step through every tick and hung a long
    run), and both checkers read an integer outside the signed 64-bit range as FORMAT."""
    _judged_alike(_huge(figure), expected)
