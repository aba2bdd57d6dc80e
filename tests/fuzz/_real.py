"""The real checker seen through the same lens as the reference: a set of codes.

Why a wrapper: ``checker.verify`` raises ``UnusableInput`` for documents it cannot check
at all (not an object, a wrong ``format`` tag); FORMATS.md files those under ``FORMAT``,
and so does this wrapper, so that both checkers can be compared code set to code set.
"""

from __future__ import annotations

import json
from typing import Any

import checker

__all__ = ["real_codes", "real_report_text"]


def real_codes(doc: Any) -> set[str]:
    """The codes ``checker.verify`` reports for ``doc``; ``{"FORMAT"}`` if it is unusable."""
    try:
        report = checker.verify(doc)
    except checker.UnusableInput:
        return {"FORMAT"}
    codes = {v.code for v in report.violations}
    assert report.legal == (not codes), "Report.legal must say whether violations is empty"
    return codes


def real_report_text(doc: Any) -> str:
    """Every violation, one per line, for failure messages."""
    try:
        report = checker.verify(doc)
    except checker.UnusableInput as error:
        return f"UnusableInput: {error}"
    return "\n".join(f"{v.code}: {v.message} ops={v.ops} buffers={v.buffers} "
                     f"tensors={v.tensors} time={v.time}" for v in report.violations) \
        or "legal"


def dump(doc: Any) -> str:
    """One-line JSON, the form a counterexample is pasted into a bug report in."""
    return json.dumps(doc, separators=(",", ":"))
