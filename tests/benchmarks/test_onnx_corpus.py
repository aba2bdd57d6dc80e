"""benchmarks/corpus: the committed graphs load without torch or their weights, hold no weight
bytes, and match what index.json says of them (the importer's tests iterate over the index)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus"
INDEX = json.loads((CORPUS / "index.json").read_text())
GRAPHS = INDEX["graphs"]


def _load(entry: dict):
    return onnx.load(str(CORPUS / entry["file"]), load_external_data=False)


def test_index_lists_every_committed_graph_once() -> None:
    listed = [g["file"] for g in GRAPHS]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(p.name for p in CORPUS.glob("*.onnx"))


@pytest.mark.parametrize("entry", GRAPHS, ids=lambda g: g["file"])
def test_graph_matches_its_index_entry(entry: dict) -> None:
    model = _load(entry)
    ops = Counter(
        (n.domain + "." if n.domain not in ("", "ai.onnx") else "") + n.op_type
        for n in model.graph.node
    )
    assert dict(ops) == entry["ops"]
    assert len(model.graph.node) == entry["nodes"]
    opset = {o.domain: o.version for o in model.opset_import}
    assert opset.get("", opset.get("ai.onnx")) == entry["opset"]
    params = {d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim}
    assert set(entry["dims"]) <= params
    if entry["phase"] == "prefill":
        assert set(entry["dims"]) == {"seq"}
    else:
        assert "past" in entry["dims"] and "seq" not in entry["dims"]


@pytest.mark.parametrize("entry", GRAPHS, ids=lambda g: g["file"])
def test_weights_are_external_and_small_constants_inline(entry: dict) -> None:
    """Weights live in the uncommitted data file; what folding reads (axes, shapes) does not."""
    model = _load(entry)
    for tensor in model.graph.initializer:
        external = tensor.data_location == onnx.TensorProto.EXTERNAL
        if external:
            info = {kv.key: kv.value for kv in tensor.external_data}
            assert info["location"] == entry["file"] + ".data"
            # the dynamo exporter keeps tensors of up to 256 bytes in the graph (onnx_ir's
            # threshold); the script keeps up to 1 KiB in the TorchScript graphs it re-saves
            assert int(info["length"]) > 256, tensor.name
        elif tensor.raw_data:
            assert len(tensor.raw_data) <= 1024, tensor.name
    assert (CORPUS / entry["file"]).stat().st_size < 1_000_000


def test_decode_graphs_take_the_cache_as_inputs() -> None:
    decode = [g for g in GRAPHS if g["phase"] == "decode"]
    assert decode
    for entry in decode:
        names = {i.name for i in _load(entry).graph.input}
        assert {"past_key", "past_value"} <= names, entry["file"]
