"""``verify``: one schedule document in, one :class:`~checker.report.Report` out."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from checker.load import UnusableInput, build_model, no_gc, read_json
from checker.report import Report, make_stats, sort_violations
from checker.rules import RULES

__all__ = ["verify", "verify_file", "judge_file"]


def verify(document: Any) -> Report:
    """Apply every rule of FORMATS.md to a parsed ``npu-schedule/1`` document.

    Raises :class:`~checker.load.UnusableInput` if the document cannot be checked at all
    (not an object, or a wrong ``format`` tag on it or on its embedded target or problem);
    any other fault is a ``FORMAT`` violation in the report.
    """
    began = time.perf_counter()
    with no_gc():
        model, violations = build_model(document)
        skipped = []
        for rule in RULES:
            if rule.needs <= model.intact:
                violations.extend(rule.check(model))
            else:
                skipped.extend(rule.codes)
        ops, buffers = len(model.op_names or ()), len(model.buffers)
        # freed by reference counting while the collector still sleeps: otherwise its
        # first pass after waking scans every object of the model (measured: 4% of verify)
        del model
    violations = sort_violations(violations)
    stats = make_stats(violations, ops, buffers, time.perf_counter() - began, skipped)
    return Report(violations, stats)


def verify_file(path: str | os.PathLike[str]) -> Report:
    """Read a schedule file strictly (``-`` is standard input) and verify it."""
    return judge_file(path, verify)


def judge_file(path: str | os.PathLike[str], judge: Callable[[Any], Report]) -> Report:
    """Read a file strictly (``-`` is standard input) and ``judge`` its document; an
    unusable document's error names the file."""
    source = "<stdin>" if str(path) == "-" else str(path)
    # the collector sleeps from parsing to judging, and the document is freed (by
    # reference counting) before it wakes: its first pass would otherwise scan every
    # object of the document (a million lists at 64k boxes of rank 64: 1.5 s)
    with no_gc():
        document = read_json(path)
        try:
            return judge(document)
        except UnusableInput as error:
            raise error.attributed(source) from None
        finally:
            del document
