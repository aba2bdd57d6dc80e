"""Small workloads built from the bundled operators, shared by the tests of tests/paths.

Shapes are small so each solve takes a fraction of a second; ``OPTIONS`` (a short time
limit, one worker, a fixed seed) keeps every solve short and deterministic.
"""

from __future__ import annotations

from typing import Any

from models.formats import Problem, Target
from models.targets import load_target
from models.workload import tile, workload_from_dict
from schedsearch.paths import SolveOptions

OPTIONS = SolveOptions(time_limit=0.2, seed=0, workers=1)

#: Two independent tasks: a GEMM on HMX and an RMSNorm on HVX.
PAIR: dict[str, Any] = {
    "name": "pair", "target": "hexagon-v75",
    "tasks": [{"name": "g0", "kind": "gemm", "M": 64, "N": 64, "K": 128, "bk": 64,
               "a": "A", "b": "B", "out": "C"},
              {"name": "r0", "kind": "rmsnorm", "rows": 64, "cols": 256,
               "block_rows": 32, "x": "X", "weight": "W", "out": "Y"}]}
#: A dependent chain: the GEMM multiplies the RMSNorm's output (temp tensor H).
CHAIN: dict[str, Any] = {
    "name": "chain", "target": "hexagon-v75",
    "tasks": [{"name": "r0", "kind": "rmsnorm", "rows": 64, "cols": 128,
               "block_rows": 32, "x": "X", "weight": "W", "out": "H"},
              {"name": "g0", "kind": "gemm", "M": 64, "N": 64, "K": 128, "a": "H",
               "b": "Wq", "out": "Q"}]}
#: Two independent copies: DMA-bound, so running them concurrently overdraws DDR.
COPIES: dict[str, Any] = {
    "name": "copies", "target": "hexagon-v75",
    "tasks": [{"name": "c0", "kind": "copy", "rows": 64, "cols": 1024, "block_rows": 32,
               "x": "S0", "out": "D0"},
              {"name": "c1", "kind": "copy", "rows": 64, "cols": 1024, "block_rows": 32,
               "x": "S1", "out": "D1"}]}


def tiled(document: dict[str, Any]) -> tuple[Problem, Target]:
    target = load_target(document["target"])
    return tile(workload_from_dict(document, document["name"]), target), target
