"""What became of each ONNX node of an import: folded, a view, a task kind, or priced as
a generic vector pass; counted per ONNX op type and printed as a table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["ImportSummary"]


@dataclass
class ImportSummary:
    """Per ONNX op type, how many of its nodes had each outcome (``folded``, ``view``, a
    task kind such as ``rmsnorm``, ``vector pass (--unknown vector)``)."""

    source: str
    outcomes: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, op_type: str, outcome: str, count: int = 1) -> None:
        self.outcomes.setdefault(op_type, Counter())[outcome] += count

    def nodes(self) -> int:
        """Nodes of the exported graph accounted for (folded ones included)."""
        return sum(sum(c.values()) for c in self.outcomes.values())

    def count(self, outcome: str) -> int:
        """Nodes with ``outcome``, over every op type."""
        return sum(c[outcome] for c in self.outcomes.values())

    def table(self) -> str:
        """The summary as aligned text: op type, nodes, outcomes with their counts."""
        rows = [("ONNX op type", "nodes", "became")]
        for op_type in sorted(self.outcomes, key=lambda op: (-sum(self.outcomes[op].values()),
                                                              op)):
            found = self.outcomes[op_type]
            became = ", ".join(f"{outcome} {n}" for outcome, n in found.most_common())
            rows.append((op_type, str(sum(found.values())), became))
        rows.append(("total", str(self.nodes()), ""))
        width = [max(len(row[i]) for row in rows) for i in range(2)]
        return "\n".join(f"{a:<{width[0]}}  {b:>{width[1]}}  {c}".rstrip() for a, b, c in rows)

    def header(self, dims: Mapping[str, int]) -> str:
        """Comment lines for the top of a workload file written from this import."""
        bound = ", ".join(f"{name}={value}" for name, value in sorted(dims.items()))
        lines = [f"Imported from {self.source} (dimensions: {bound or 'none'}) by "
                 f"schedsearch import; edit freely.", "What became of the ONNX nodes:",
                 *(f"  {line}" for line in self.table().splitlines())]
        return "".join(f"# {line}\n" for line in lines)
