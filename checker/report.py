"""Violations, the report that collects them, and its two renderings (human and JSON)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CODES", "Violation", "Report", "plural", "render_human"]

#: Every rule code, in the order of FORMATS.md's table (reports group by this order).
CODES: tuple[str, ...] = (
    "FORMAT", "OP_MISSING", "OP_UNKNOWN", "MODE", "DURATION", "UNITS", "LANE_OVERLAP",
    "BUDGET", "AFTER", "COVERAGE", "OUTPUT", "DDR_RAW", "MEM_RANGE", "ALIAS", "LIFETIME",
    "STALE_READ", "WRITE_RACE", "MAKESPAN",
)
_ORDER = {code: i for i, code in enumerate(CODES)}


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, with an ``s`` unless there is exactly one ("1 op", "2 ops")."""
    return f"{count} {noun}{'s' * (count != 1)}"


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: its code, one sentence, the names involved and when (if a time)."""

    code: str
    message: str
    ops: tuple[str, ...] = ()
    buffers: tuple[str, ...] = ()
    tensors: tuple[str, ...] = ()
    time: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "ops": list(self.ops),
                "buffers": list(self.buffers), "tensors": list(self.tensors),
                "time": self.time}


@dataclass
class Report:
    """The outcome of :func:`checker.verify`: legal iff no rule was violated."""

    violations: list[Violation] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def legal(self) -> bool:
        return not self.violations

    def codes(self) -> set[str]:
        """The distinct codes found (handy in tests and scripts)."""
        return {v.code for v in self.violations}

    def to_dict(self, max_violations: int | None = None) -> dict[str, Any]:
        listed = self.violations if max_violations is None else \
            self.violations[:max_violations]
        return {"legal": self.legal, "violations": [v.to_dict() for v in listed],
                "stats": self.stats}


def sort_violations(violations: list[Violation]) -> list[Violation]:
    """Group by code in table order; within a code keep the order the rule found them."""
    return sorted(violations, key=lambda v: _ORDER.get(v.code, len(_ORDER)))


def make_stats(violations: list[Violation], ops: int, buffers: int, elapsed: float,
               skipped: list[str]) -> dict[str, Any]:
    by_code = Counter(v.code for v in violations)
    return {"ops": ops, "buffers": buffers, "violations": len(violations),
            "by_code": {code: by_code[code] for code in CODES if by_code[code]},
            "skipped_rules": skipped, "elapsed_s": round(elapsed, 6)}


def _line(v: Violation) -> str:
    where = f"t={v.time}: " if v.time is not None else ""
    names = [f"{label}: {', '.join(items)}" for label, items in
             (("ops", v.ops), ("buffers", v.buffers), ("tensors", v.tensors)) if items]
    tail = f" [{'; '.join(names)}]" if names else ""
    return f"  {where}{v.message}{tail}"


def render_human(report: Report, source: str, max_violations: int = 100) -> str:
    """A report a person reads: a verdict line, then violations grouped by code."""
    stats = report.stats
    scope = (f"{plural(stats.get('ops', 0), 'op')}, {plural(stats.get('buffers', 0), 'buffer')}, "
             f"{stats.get('elapsed_s', 0.0):.3f} s")
    if report.legal:
        lines = [f"LEGAL: {source}: no violations ({scope})"]
    else:
        lines = [f"ILLEGAL: {source}: {plural(len(report.violations), 'violation')} of "
                 f"{plural(len(report.codes()), 'rule')} ({scope})"]
    by_code = Counter(v.code for v in report.violations)
    current = None
    for v in report.violations[:max_violations]:
        if v.code != current:
            current = v.code
            lines.append(f"{v.code} ({by_code[v.code]})")
        lines.append(_line(v))
    hidden = len(report.violations) - max_violations
    if hidden > 0:
        lines.append(f"... {hidden} more not listed (see --max-violations)")
    if stats.get("skipped_rules"):
        lines.append("not checked because of FORMAT violations: "
                     + ", ".join(stats["skipped_rules"]))
    return "\n".join(lines)

