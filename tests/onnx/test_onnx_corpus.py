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
#: Graphs that do not import yet, by a part of their file name, and why (docs/onnx.md);
#: strict, so a graph that starts importing says so.
NOT_YET: dict[str, str] = {}


def _not_yet(graph: dict[str, Any]) -> str | None:
    for part, reason in NOT_YET.items():
        if part in graph["file"]:
            return reason
    return None


def _cases(graphs: list[dict[str, Any]]) -> list[Any]:
    return [pytest.param(g, id=g["file"], marks=[pytest.mark.xfail(
        reason=_not_yet(g), strict=True)] if _not_yet(g) else []) for g in graphs]


def _ops(graph: dict[str, Any]) -> int:
    workload, _ = import_onnx(str(CORPUS / graph["file"]), graph.get("dims", {}))
    return len(tile(workload, load_target(workload.target)).ops)


@pytest.mark.parametrize("graph", _cases(GRAPHS))
def test_every_corpus_graph_imports_and_tiles(graph: dict[str, Any]) -> None:
    workload, summary = import_onnx(str(CORPUS / graph["file"]), graph.get("dims", {}))
    assert summary.nodes() == graph["nodes"]
    assert summary.count("vector pass (--unknown vector)") == 0
    assert len(tile(workload, load_target(workload.target)).ops) > 0


LAYERS = [g for g in GRAPHS if g["module"] == "layer" and g["family"] in BUNDLED
          and "-int" not in g["file"]  # quantised: dequantisation ops the bundled lack
          and {k: v for k, v in g.get("dims", {}).items() if k in ("seq", "past")}
          == BUNDLED_DIMS.get(g["phase"])]


@pytest.mark.parametrize("graph", _cases(LAYERS))
def test_a_layer_tiles_like_the_bundled_one(graph: dict[str, Any]) -> None:
    bundled = load_workload(f"{BUNDLED[graph['family']]}-{graph['phase']}-v75")
    expected = len(tile(bundled, load_target(bundled.target)).ops)
    assert abs(_ops(graph) - expected) <= expected // 10


def _work(kind: str, params: dict[str, Any]) -> tuple[Any, ...]:
    """What a task computes, without names and element types: its kind and sizes."""
    keys = ("M", "N", "K", "rows", "cols", "fn", "heads", "kv_heads", "head_dim", "q_len",
            "past")
    return (kind, *(params.get(key) for key in keys))


def _bias(params: dict[str, Any]) -> bool:
    return any(str(params.get(key, "")).endswith("_proj.bias") for key in ("x", "y"))


@pytest.mark.parametrize("graph", _cases(LAYERS))
def test_a_layer_is_the_bundled_one_plus_rotary_and_biases(graph: dict[str, Any]) -> None:
    """Every difference from the bundled layer is what it leaves out, the rotary
    embeddings of Q and K and Qwen's Q/K/V biases, or what the exporter wrote: the f32
    residual stream of TorchScript's sdpa decode layers (casts; the same tasks in f32)."""
    bundled = load_workload(f"{BUNDLED[graph['family']]}-{graph['phase']}-v75")
    imported, _ = import_onnx(str(CORPUS / graph["file"]), graph.get("dims", {}))
    rope = [t for t in imported.tasks if t.kind == "rope"]
    biases = [t for t in imported.tasks if t.kind == "binary" and _bias(t.params)]
    assert (len(rope), len(biases)) == (2, 3 if graph["family"] == "qwen2" else 0)
    casts = [t for t in imported.tasks if t.kind == "cast"]
    assert not casts or graph["exporter"] == "torchscript"
    rest = sorted(_work(t.kind, t.params) for t in imported.tasks
                  if t not in rope + biases + casts)
    assert rest == sorted(_work(t.kind, t.params) for t in bundled.tasks)


QDQ = [g for g in GRAPHS if g["file"].endswith("-int8-qdq.onnx")]


@pytest.mark.parametrize("graph", QDQ, ids=[g["file"] for g in QDQ])
def test_a_qdq_graph_runs_its_products_in_int8(graph: dict[str, Any]) -> None:
    """ONNX Runtime's static QDQ quantiser (int8 activations and weights): the products of
    the f16 source, each an int8 GEMM (no weight dequantisation, no f16 round trip)."""
    dims = graph.get("dims", {})
    quantised, _ = import_onnx(str(CORPUS / graph["file"]), dims)
    source, _ = import_onnx(str(CORPUS / graph["file"].replace("-int8-qdq", "")), dims)
    gemms = [t.params for t in quantised.tasks if t.kind == "gemm"]
    assert [(p["M"], p["N"], p["K"]) for p in gemms] == [
        (t.params["M"], t.params["N"], t.params["K"]) for t in source.tasks if t.kind == "gemm"]
    assert all(p["dtype"] == "i8" and p["b_bits"] == 0 for p in gemms)


INT4 = [g for g in GRAPHS if g["file"].endswith("-int4.onnx")]


@pytest.mark.parametrize("graph", INT4, ids=[g["file"] for g in INT4])
def test_an_int4_graph_is_its_f16_source_with_quantised_weights(graph: dict[str, Any]) -> None:
    """ONNX Runtime's MatMulNBits quantiser changes only the products: the same tasks,
    every projection streaming its weight at 4 bits, one dequantisation per B block."""
    dims = graph.get("dims", {})
    quantised, _ = import_onnx(str(CORPUS / graph["file"]), dims)
    source, _ = import_onnx(str(CORPUS / graph["file"].replace("-int4", "")), dims)
    assert [t.kind for t in quantised.tasks] == [t.kind for t in source.tasks]
    gemms = [t.params for t in quantised.tasks if t.kind == "gemm" and t.params["b_bits"]]
    assert gemms and all(p["b_bits"] == 4 and p["trans_b"] == 1 for p in gemms)
    target = load_target(quantised.target)
    ops = tile(quantised, target).ops
    dequantised = [name for name in ops if ".dqB." in name]
    assert len(ops) - len(tile(source, target).ops) == len(dequantised) > 0


GEMMA2 = [g for g in GRAPHS if g["family"] == "gemma2" and g["module"] != "mlp"
          and not _not_yet(g)]


@pytest.mark.parametrize("graph", GEMMA2, ids=[g["file"] for g in GEMMA2])
def test_gemma2_attention_keeps_its_soft_capping(graph: dict[str, Any]) -> None:
    """gemma-2-2b caps its attention scores at 50 (Div, Tanh, Mul on the scores)."""
    workload, _ = import_onnx(str(CORPUS / graph["file"]), graph.get("dims", {}))
    caps = [t.params["softcap"] for t in workload.tasks if t.kind == "attention"]
    assert caps == [50.0]
