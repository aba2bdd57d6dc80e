"""A rule that picks path A, B or C from the shape, tuned and then judged on unseen shapes.

The tuning set is the bundled chain examples (``chain-*`` and ``rmsnorm-gemm-chain-v75``);
the evaluation shapes below were fixed before the rule was tuned (and before the fused
compute factor existed) and are never tuned on: a small batch, a hidden size the tiles
do not divide, very long rows, a consumer that cannot read the producer's memory, and a
capacity shortfall. Every edge is measured
with ``schedsearch.chain`` (paths A, B and C solved, verified and scored); the rule
(:mod:`schedsearch.chains.rule`) sees only the shape. Prints per edge the three
makespans, the best path, the rule's choice, what ran and the regret; then the mean and
largest regret on each set. ``--plans DIR`` saves each evaluation choice as an
``npu-plan/1`` file. Figures of a time-limited search on a shared machine.

    python benchmarks/bench_chain_rule.py [--time-limit 2] [--plans DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import write_figures  # noqa: E402
from models.targets import load_target  # noqa: E402
from models.workload import Workload, load_workload, workload_from_dict  # noqa: E402
from schedsearch.chains.paths import ChainResult, PathName, chain_edges, chain_paths  # noqa: E402
from schedsearch.chains.rule import (  # noqa: E402
    Rule,
    Shape,
    ran,
    regret,
    rule_plan,
    shape_of,
    tune_rule,
)
from schedsearch.commands.chain_study import chain_examples  # noqa: E402
from schedsearch.paths import SolveOptions  # noqa: E402
from schedsearch.plans import write_plan  # noqa: E402


def _edge(name: str, target: str, rows: int, hidden: int, out: int, *, block_rows: int,
          bn: int, bk: int, bm: int = 128, depth: int = 0) -> Workload:
    """An RMSNorm of ``rows x hidden`` feeding a GEMM to ``out`` columns."""
    return workload_from_dict({
        "name": name, "target": target,
        "tasks": [{"name": "norm", "kind": "rmsnorm", "rows": rows, "cols": hidden,
                   "block_rows": block_rows, "x": "X", "weight": "G", "out": "H"},
                  {"name": "proj", "kind": "gemm", "M": rows, "N": out, "K": hidden,
                   "a": "H", "b": "W", "out": "Y", "bm": bm, "bn": bn, "bk": bk,
                   "depth": depth}]}, name)


#: The unseen shapes, fixed before tuning: (what it tests, workload).
EVALUATION = [
    ("small batch (4 tokens, Llama-3.2-1B up projection)",
     _edge("eval-small-batch", "hexagon-v75", 4, 2048, 8192, block_rows=4, bn=512, bk=512)),
    ("hidden 1000: the 32-wide tiles do not divide it",
     _edge("eval-hidden-1000", "hexagon-v75", 64, 1000, 2816, block_rows=32, bn=256,
           bk=256)),
    ("very long rows (hidden 16384)",
     _edge("eval-long-rows", "hexagon-v75", 32, 16384, 1024, block_rows=16, bn=256,
           bk=512)),
    ("the Cube cannot read the Vector cores' UB (Llama-3.2-1B q projection, 64 tokens)",
     _edge("eval-ascend", "ascend-910b-core", 64, 2048, 2048, block_rows=16, bm=64, bn=256,
           bk=128, depth=2)),
    ("capacity shortfall: 128 rows of 16384 fill v68's 4 MiB VTCM",
     _edge("eval-v68-shortfall", "hexagon-v68", 128, 16384, 1024, block_rows=16, bn=256,
           bk=512)),
]


def _measure(workload: Workload, options: SolveOptions) -> tuple[Shape, ChainResult]:
    target = load_target(workload.target)
    (edge,) = chain_edges(workload)
    (result,) = chain_paths(workload, target, options=options)
    return shape_of(edge, target), result


def _row(label: str, shape: Shape, result: ChainResult, rule: Rule) -> dict[str, Any]:
    chosen = rule.choose(shape)
    path = {p.path.value: p.result.makespan for p in result.paths}
    return {"edge": label, **shape.as_dict(), "A": path.get("A"), "B": path.get("B"),
            "C": path.get("C"), "best": result.best.path.value, "chosen": chosen.value,
            "ran": ran(result, chosen).path.value, "regret": regret(result, chosen),
            "legal": all(p.result.legal for p in result.paths), "c_note": result.c_note}


def _print(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        cells = [f"{row[k]:>9}" if row[k] is not None else f"{'-':>9}" for k in "ABC"]
        print(f"  {row['edge'][:58]:58} fill {row['fill']:5.1%}  saves "
              f"{row['saving_ns'] / 1000:6.1f} us, presses {row['pressure_ns'] / 1000:6.1f} us"
              f"  {' '.join(cells)}  best "
              f"{row['best']}  rule {row['chosen']} (ran {row['ran']})  regret "
              f"{row['regret']:6.2%}  {'legal' if row['legal'] else 'ILLEGAL'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=2.0,
                        help="seconds per solve (default 2)")
    parser.add_argument("--plans", type=Path, help="write the evaluation choices as plans")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    options = SolveOptions(time_limit=args.time_limit)
    names = chain_examples()
    tuning = [(name, *_measure(load_workload(name), options)) for name in names]
    rule = tune_rule([(shape, result) for _, shape, result in tuning])
    print(f"rule (tuned on {len(tuning)} bundled chains): {rule.text}")
    figures: dict[str, Any] = {"rule": {"max_fill": rule.max_fill, "margin": rule.margin,
                                        "otherwise": rule.otherwise.value},
                               "tuning": [_row(n, s, r, rule) for n, s, r in tuning]}
    print("tuning set:")
    _print(figures["tuning"])
    evaluation = []
    for label, workload in EVALUATION:
        shape, result = _measure(workload, options)
        evaluation.append(_row(label, shape, result, rule))
        if args.plans:
            request = result.path(PathName.B)
            assert request is not None
            written = write_plan(rule_plan(result, rule.choose(shape),
                                           request.result.schedule), args.plans)
            print(f"  wrote {written}", file=sys.stderr)
    figures["evaluation"] = evaluation
    print("evaluation (unseen shapes):")
    _print(evaluation)
    for name in ("tuning", "evaluation"):
        regrets = [row["regret"] for row in figures[name]]
        print(f"{name}: mean regret {sum(regrets) / len(regrets):.2%}, largest "
              f"{max(regrets):.2%}")
    write_figures(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
