"""Write the bundled decoder-layer workloads: ``python models/examples/decoders.py``.

One layer of Llama-3.2-1B and of Qwen2.5-0.5B (the figures of their published configs),
each as prefill (128 tokens, no cache) and decode (1 token attending to a 512-token KV
cache read from DDR), on hexagon-v75 (``--target hexagon-v79`` runs the same file there).
The layer, in f16: RMSNorm, Q/K/V projections, attention (grouped-query), output
projection, residual add, RMSNorm, gate and up projections, SiLU(gate) * up, down
projection, residual add. Left out: rotary embeddings and Qwen's Q/K/V biases (small
vector work next to the rest).

The script lives beside its output so that the bundled files are generated, never
edited by hand; a test checks that the files equal what it writes. Block sizes keep
each layer at one to two thousand ops: GEMM blocks of 256 columns and 512 reductions
(rows: 128 for prefill, one 32-row tile for decode), row blocks of 64 rows. On prefill
the gated MLP's SiLU and product run in blocks of every row by 512 columns
(:data:`MLP_BLOCKS`): each block needs only the two gate and up tiles of its columns, so
they run beside the projections instead of after them (docs/search.md, "Where the gap
lies": Llama-3.2-1B prefill at 10 s, v75 4,094.5 -> 3,989.9 µs, v79 2,866.1 -> 2,737.7).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Model", "MODELS", "layer", "render", "main"]


@dataclass(frozen=True, slots=True)
class Model:
    """The shape of one decoder layer."""

    name: str
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int


MODELS = (Model("llama-3.2-1b", 2048, 8192, 32, 8, 64),
          Model("qwen2.5-0.5b", 896, 4864, 14, 2, 64))
#: (phase, new tokens, cached tokens)
PHASES = (("prefill", 128, 0), ("decode", 1, 512))
TARGET = "hexagon-v75"
GEMM_BLOCKS = {"bn": 256, "bk": 512}
ROW_BLOCK = 64
#: The blocks of the gated MLP's element-wise tasks on prefill: columns of the GEMMs'
#: reduction depth (the product is ``down_proj``'s A), every row of a GEMM tile.
MLP_BLOCKS = {"block_cols": GEMM_BLOCKS["bk"]}


def layer(model: Model, phase: str, tokens: int, past: int) -> dict[str, Any]:
    """The workload document of one layer."""
    q_cols, kv_cols = model.heads * model.head_dim, model.kv_heads * model.head_dim
    rows = {"rows": tokens, "cols": model.hidden, "block_rows": min(ROW_BLOCK, tokens)}
    bm = {"bm": 128 if tokens > 32 else 32}
    mlp = ({**rows, "block_rows": min(bm["bm"], tokens), **MLP_BLOCKS} if tokens > 32
           else rows)

    def gemm(name: str, a: str, weight: str, out: str, n: int, k: int) -> dict[str, Any]:
        return {"name": name, "kind": "gemm", "M": tokens, "N": n, "K": k, "a": a,
                "b": weight, "out": out, **bm, **GEMM_BLOCKS}

    attention: dict[str, Any] = {
        "name": "attn", "kind": "attention", "heads": model.heads,
        "kv_heads": model.kv_heads, "head_dim": model.head_dim, "q_len": tokens,
        "past": past, "q": "q", "k": "k", "v": "v", "out": "attn",
        "block_q": 128, "block_kv": 128}
    if past:
        attention.update(k_cache="k_cache", v_cache="v_cache")
    tasks = [
        {"name": "norm1", "kind": "rmsnorm", **rows, "x": "x", "weight": "norm1.w",
         "out": "h1"},
        gemm("q_proj", "h1", "wq", "q", q_cols, model.hidden),
        gemm("k_proj", "h1", "wk", "k", kv_cols, model.hidden),
        gemm("v_proj", "h1", "wv", "v", kv_cols, model.hidden),
        attention,
        gemm("o_proj", "attn", "wo", "o", model.hidden, q_cols),
        {"name": "res1", "kind": "binary", "fn": "add", **rows, "x": "x", "y": "o",
         "out": "h2"},
        {"name": "norm2", "kind": "rmsnorm", **rows, "x": "h2", "weight": "norm2.w",
         "out": "h3"},
        gemm("gate_proj", "h3", "wg", "gate", model.intermediate, model.hidden),
        gemm("up_proj", "h3", "wu", "up", model.intermediate, model.hidden),
        {"name": "silu", "kind": "elementwise", "fn": "silu", **mlp,
         "cols": model.intermediate, "x": "gate", "out": "act"},
        {"name": "mul", "kind": "binary", "fn": "mul", **mlp, "cols": model.intermediate,
         "x": "act", "y": "up", "out": "m"},
        gemm("down_proj", "m", "wd", "down", model.hidden, model.intermediate),
        {"name": "res2", "kind": "binary", "fn": "add", **rows, "x": "h2", "y": "down",
         "out": "y"},
    ]
    return {"format": "npu-workload/1", "name": f"{model.name}-{phase}-v75",
            "target": TARGET, "tasks": tasks}


def _value(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def render(document: dict[str, Any], comment: str) -> str:
    """The TOML text of a workload document (flat tasks: strings and integers)."""
    lines = [f"# {line}" for line in comment.splitlines()]
    lines += [f"{key} = {_value(document[key])}" for key in ("format", "name", "target")]
    for task in document["tasks"]:
        lines += ["", "[[tasks]]"] + [f"{key} = {_value(value)}" for key, value in task.items()]
    return "\n".join(lines) + "\n"


def files() -> dict[str, str]:
    """File name -> TOML text of every bundled decoder layer."""
    found = {}
    for model in MODELS:
        for phase, tokens, past in PHASES:
            document = layer(model, phase, tokens, past)
            cache = f", attending to a {past}-token KV cache in DDR" if past else ""
            comment = (f"One {model.name} decoder layer, {phase}: {tokens} token(s){cache}.\n"
                       f"Generated by models/examples/decoders.py; do not edit by hand.")
            found[f"{document['name']}.toml"] = render(document, comment)
    return found


def main(argv: list[str] | None = None) -> int:
    """Write every file beside this script and name them."""
    here = Path(__file__).parent
    for name, text in files().items():
        (here / name).write_text(text, "utf-8")
        print(here / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
