"""The corpus of real ``torch.onnx.export`` graphs (``benchmarks/corpus``, made by
``benchmarks/onnx_corpus.py``; weights not committed): every graph imports with the
dimensions its index gives and tiles; the Llama-3.2-1B and Qwen2.5-0.5B decoder layers
tile into op counts within 10 % of the bundled layers of the same shapes (the imported
ones add the rotary embeddings the bundled ones leave out). Skipped only where the
corpus folder is absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from models.onnx.lower import import_onnx
from models.targets import load_target
from models.workload import load_workload, tile

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus"
#: family -> the bundled layer of the same shapes (models/examples/decoders.py)
BUNDLED = {"llama": "llama-3.2-1b", "qwen2": "qwen2.5-0.5b"}
#: the dimensions of the bundled layers: prefill 128 tokens, decode 512 cached
BUNDLED_DIMS = {"prefill": {"seq": 128}, "decode": {"past": 512}}


def _graphs() -> list[dict[str, Any]]:
    index = CORPUS / "index.json"
    if not index.is_file():
        return []
    return list(json.loads(index.read_text("utf-8"))["graphs"])


GRAPHS = _graphs()
pytestmark = pytest.mark.skipif(not GRAPHS, reason="benchmarks/corpus is absent")


def _ops(graph: dict[str, Any]) -> int:
    workload, _ = import_onnx(str(CORPUS / graph["file"]), graph.get("dims", {}))
    return len(tile(workload, load_target(workload.target)).ops)


@pytest.mark.parametrize("graph", GRAPHS, ids=[g["file"] for g in GRAPHS])
def test_every_corpus_graph_imports_and_tiles(graph: dict[str, Any]) -> None:
    workload, summary = import_onnx(str(CORPUS / graph["file"]), graph.get("dims", {}))
    assert summary.nodes() == graph["nodes"]
    assert summary.count("vector pass (--unknown vector)") == 0
    assert len(tile(workload, load_target(workload.target)).ops) > 0


LAYERS = [g for g in GRAPHS if g["module"] == "layer" and g["family"] in BUNDLED
          and {k: v for k, v in g.get("dims", {}).items() if k in ("seq", "past")}
          == BUNDLED_DIMS.get(g["phase"])]


@pytest.mark.parametrize("graph", LAYERS, ids=[g["file"] for g in LAYERS])
def test_a_layer_tiles_like_the_bundled_one(graph: dict[str, Any]) -> None:
    bundled = load_workload(f"{BUNDLED[graph['family']]}-{graph['phase']}-v75")
    expected = len(tile(bundled, load_target(bundled.target)).ops)
    assert abs(_ops(graph) - expected) <= expected // 10
