"""Import = fold, then map: a decoder layer written the way exporters write it (shape
arithmetic, masks, rotary tables, transformers' RMSNorm, repeat-kv, the KV cache) folds
and maps onto the library's kinds; weights are never read."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from models.errors import InputError
from models.onnx.graph import read_graph
from models.onnx.lower import import_onnx
from models.targets import load_target
from models.workload import tile, workload_from_dict
from schedsearch.tuning.workload_file import workload_toml
from tests.onnx.builders import F16, F32, initializer, node, save, tasks
from tests.onnx.decoder import decoder_layer

PREFILL, DECODE = {"seq": 128}, {"seq": 1, "past": 512}


def by_kind(path: str, dims: dict[str, int]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for kind, params in tasks(path, **dims):
        found.setdefault(kind, []).append(params)
    return found


def test_folding_leaves_no_shape_arithmetic_mask_or_rotary_table(tmp_path: Path) -> None:
    graph = read_graph(decoder_layer(tmp_path), PREFILL)
    left = {node.op_type for node in graph.nodes}
    assert not left & {"Shape", "Range", "Cos", "Sin", "LessOrEqual", "Where", "Gather"}
    assert graph.folded["Range"] == 2 and graph.folded["Cos"] == 1
    mask = [table for table in graph.tables.values() if table.shape[-2:] == (128, 128)]
    assert len(mask) == 1 and mask[0][0, 0, 0, 1] < -1e4 and mask[0][0, 0, 1, 0] == 0


def test_a_prefill_layer_maps_onto_the_bundled_kinds(tmp_path: Path) -> None:
    found = by_kind(decoder_layer(tmp_path), PREFILL)
    assert sorted((k, len(v)) for k, v in found.items()) == [
        ("attention", 1), ("binary", 3), ("elementwise", 1), ("gemm", 7), ("rmsnorm", 2),
        ("rope", 2)]
    [attention] = found["attention"]
    assert {k: attention[k] for k in ("heads", "kv_heads", "head_dim", "q_len", "past",
                                      "causal")} == {
        "heads": 4, "kv_heads": 2, "head_dim": 64, "q_len": 128, "past": 0, "causal": 1}
    q_rope, k_rope = found["rope"]
    # the rotary embeddings read the projections' token-major storage; attention reads them
    assert (q_rope["x"], q_rope["cols"], k_rope["x"], k_rope["cols"]) == (
        "q_proj_50", 256, "k_proj_72", 128)
    assert (attention["q"], attention["k"]) == (q_rope["out"], k_rope["out"])
    # transformers' RMSNorm: the Casts and the weight behind them are one rmsnorm
    assert [p["weight"] for p in found["rmsnorm"]] == ["input_layernorm.weight",
                                                      "post_attention_layernorm.weight"]
    assert all(p["trans_b"] == 1 for p in found["gemm"])  # Transpose(W) is read, not copied


def test_a_decode_layer_reads_the_cache_and_masks_nothing(tmp_path: Path) -> None:
    found = by_kind(decoder_layer(tmp_path, past=1), DECODE)
    [attention] = found["attention"]
    assert (attention["past"], attention["causal"], attention["k_cache"],
            attention["v_cache"]) == (512, 0, "past_key", "past_value")
    assert all(p["bm"] == 32 for p in found["gemm"])  # one 32-row tile, as bundled


def test_the_layer_tiles_with_the_bundled_blocks(tmp_path: Path) -> None:
    workload, _ = import_onnx(decoder_layer(tmp_path), PREFILL)
    problem = tile(workload, load_target("hexagon-v75"))
    gemms = [t for t in workload.tasks if t.kind == "gemm"]
    assert all((t.params["bm"], t.params["bn"], t.params["bk"]) == (128, 256, 512)
               for t in gemms)
    rows = [t for t in workload.tasks if "block_rows" in t.params]
    # the gated MLP's SiLU and product in blocks of the GEMM tile's rows by its K depth
    columns = {t.kind: (t.params["block_rows"], t.params["block_cols"]) for t in rows
               if t.params.get("block_cols")}
    assert columns == {"elementwise": (128, 512), "binary": (128, 512)}
    mul = next(t for t in rows if t.params.get("block_cols") and t.kind == "binary")
    assert any(t.kind == "gemm" and t.params["a"] == mul.params["out"] for t in gemms)
    assert {t.params["block_rows"] for t in rows if not t.params.get("block_cols")} == {64}
    assert problem.tensors["x"].role == "input" and problem.tensors["y"].role == "output"


def test_a_decode_layer_keeps_whole_rows(tmp_path: Path) -> None:
    workload, _ = import_onnx(decoder_layer(tmp_path, past=1), DECODE)
    assert not any(t.params.get("block_cols") for t in workload.tasks)


def test_a_missing_external_weight_file_imports(tmp_path: Path) -> None:
    path = decoder_layer(tmp_path)
    inline = by_kind(path, PREFILL)
    onnx.save(onnx.load(path), path, save_as_external_data=True, location="layer.data",
              size_threshold=1024)
    (tmp_path / "layer.data").unlink()
    assert by_kind(path, PREFILL) == inline


def test_a_weight_is_never_folded_even_inline(tmp_path: Path) -> None:
    # Cast of a 2-D weight then a product: folding it would read the weight's values
    path = save(tmp_path, [node("Cast", ["w"], ["w32"], to=F32),
                           node("Cast", ["w32"], ["w16"], to=F16),
                           node("MatMul", ["x", "w16"], ["y"])],
                {"x": [64, 64]}, {"y": [64, 64]}, [initializer("w", [64, 64])])
    graph = read_graph(path, {})
    assert [n.op_type for n in graph.nodes] == ["Cast", "Cast", "MatMul"]


@pytest.mark.parametrize("weight", ["after", "cast", "none", "f32"])
def test_transformers_rmsnorm_forms(tmp_path: Path, weight: str) -> None:
    nodes = [node("Cast", ["x"], ["xf"], to=F32), node("Pow", ["xf", "two"], ["sq"]),
             node("ReduceMean", ["sq", "axes"], ["ms"], keepdims=1),
             node("Add", ["ms", "eps"], ["v"]), node("Sqrt", ["v"], ["r"]),
             node("Reciprocal", ["r"], ["i"]), node("Mul", ["xf", "i"], ["n"])]
    if weight == "f32":  # Gemma-2: scaled by its (1 + weight) in f32, then the Cast back
        nodes += [node("Mul", ["n", "w"], ["nw"]), node("Cast", ["nw"], ["y"], to=F16)]
    else:
        nodes.append(node("Cast", ["n"], ["n16" if weight != "none" else "y"], to=F16))
    if weight == "after":
        nodes.append(node("Mul", ["w", "n16"], ["y"]))
    elif weight == "cast":
        nodes += [node("Cast", ["w"], ["wc"], to=F16), node("Mul", ["n16", "wc"], ["y"])]
    inits = [initializer("two", [], F32, 2.0), initializer("eps", [], F32, 1e-6),
             initializer("axes", [1], TensorProto.INT64, [-1]),
             initializer("w", [512], F32 if weight == "f32" else F16)]
    # 512 elements: a weight, never folded (a Cast of it stays for the pattern)
    path = save(tmp_path, nodes, {"x": [1, 16, 512]}, {"y": [1, 16, 512]}, inits)
    [(kind, p)] = tasks(path)
    assert (kind, p["x"], p["out"], p["has_weight"]) == ("rmsnorm", "x", "y",
                                                          0 if weight == "none" else 1)
    if weight != "none":
        assert p["weight"] == "w"
    problem = tiled_problem(path)
    assert any(name.endswith(".ldW") for name in problem.ops) == (weight != "none")


def test_a_cache_sliced_to_its_window_is_no_copy(tmp_path: Path) -> None:
    # Phi-3 keeps the last `window` rows of the past and of the present K and V (all of
    # them when the cache is shorter): whole Slices, views of what attention reads
    for past, dims in ((0, PREFILL), (1, DECODE)):
        plain = tasks(decoder_layer(tmp_path, past=past), **dims)
        sliced = tasks(decoder_layer(tmp_path, past=past, window=2048, name="sliced"), **dims)
        assert [kind for kind, _ in sliced] == [kind for kind, _ in plain]
        [attention] = [p for kind, p in sliced if kind == "attention"]
        assert (attention["q_len"], attention["past"]) == (dims["seq"], dims.get("past", 0))
        assert (attention["k_cache"] == "past_key") == bool(past)


def tiled_problem(path: str):
    workload, _ = import_onnx(path, {})
    return tile(workload, load_target("hexagon-v75"))


def test_the_embedding_gather_is_dma_row_reads(tmp_path: Path) -> None:
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [1, "seq"])
    graph = helper.make_graph(
        [node("Gather", ["embed", "ids"], ["h"], axis=0), node("Relu", ["h"], ["y"])], "emb",
        [ids], [helper.make_tensor_value_info("y", F16, [1, "seq", 64])],
        [initializer("embed", [1000, 64])])
    path = tmp_path / "emb.onnx"
    onnx.save(helper.make_model(graph), path)
    workload, summary = import_onnx(str(path), {"seq": 100})
    gather = workload.tasks[0]
    assert (gather.kind, gather.params["rows"], gather.params["table_rows"]) == (
        "gather", 100, 1000)
    problem = tile(workload, load_target("hexagon-v75"))
    reads = [op for name, op in problem.ops.items() if op.task == gather.name]
    assert len(reads) == 2 and all(set(m.lanes) == {"DMA"} for op in reads for m in op.modes)
    assert summary.outcomes["Gather"] == {"gather": 1}


def test_an_unknown_op_is_refused_or_priced_as_a_vector_pass(tmp_path: Path) -> None:
    path = save(tmp_path, [node("Relu", ["x"], ["h"]), node("Erf", ["h"], ["y"], name="e1")],
                {"x": [8, 16]}, {"y": [8, 16]})
    with pytest.raises(InputError) as caught:
        import_onnx(path, {})
    assert "'e1'" in caught.value.message and "'Erf'" in caught.value.message
    workload, summary = import_onnx(path, {}, unknown="vector")
    erf = workload.tasks[1]
    assert (erf.kind, erf.params["op_type"], erf.params["in_bytes"]) == ("vector", "Erf", 256)
    assert summary.outcomes["Erf"] == {"vector pass (--unknown vector)": 1}
    problem = tile(workload, load_target("hexagon-v75"))
    assert ("h_st" not in problem.ops) and problem.tensors["y"].role == "output"


def test_the_written_workload_reads_back_to_the_same_tasks(tmp_path: Path) -> None:
    workload, summary = import_onnx(decoder_layer(tmp_path, past=1), DECODE)
    text = summary.header(DECODE) + workload_toml(workload)
    again = workload_from_dict(tomllib.loads(text), "w.toml")
    assert again.tasks == workload.tasks
    assert "# What became of the ONNX nodes:" in text and "past=512" in text


def test_the_summary_accounts_for_every_node(tmp_path: Path) -> None:
    path = decoder_layer(tmp_path)
    _, summary = import_onnx(path, PREFILL)
    assert summary.nodes() == len(onnx.load(path).graph.node)
    assert summary.outcomes["Softmax"] == {"attention": 1}
    assert summary.outcomes["Range"] == {"folded": 2}
    assert summary.outcomes["Expand"] == {"view": 2}


def test_a_rotary_embedding_of_a_whole_slice_reads_the_sliced_tensor(tmp_path: Path) -> None:
    # TorchScript's Phi-3 rotates q[..., :rotary_dim], all of q when rotary_dim = head_dim
    bounds = [initializer(n, [1], TensorProto.INT64, [v]) for n, v in
              (("s0", 0), ("s1", 32), ("s2", 64), ("ax", -1))]
    table = numpy_helper.from_array(np.zeros((1, 64), np.float16), "cos")
    nodes = [node("Transpose", ["x"], ["xh"], perm=[0, 2, 1, 3]),
             node("Slice", ["xh", "s0", "s2", "ax"], ["xr"]),
             node("Slice", ["xr", "s0", "s1", "ax"], ["a"]),
             node("Slice", ["xr", "s1", "s2", "ax"], ["b"]), node("Neg", ["b"], ["nb"]),
             node("Concat", ["nb", "a"], ["r"], axis=-1), node("Mul", ["xr", "cos"], ["xc"]),
             node("Mul", ["r", "cos"], ["rs"]), node("Add", ["xc", "rs"], ["y"])]
    path = save(tmp_path, nodes, {"x": [1, 8, 2, 64]}, {"y": [1, 2, 8, 64]}, [*bounds, table])
    # the heads' Transpose is a view: the rotary embedding reads the tokens' storage
    [(kind, p)] = tasks(path)
    assert (kind, p["x"], p["rows"], p["cols"]) == ("rope", "x", 8, 128)


def test_rotary_tables_must_match_the_positions(tmp_path: Path) -> None:
    half = [initializer(n, [1], TensorProto.INT64, [v]) for n, v in
            (("s0", 0), ("s1", 32), ("s2", 64), ("ax", -1))]
    table = numpy_helper.from_array(np.zeros((8, 64), np.float16), "cos")
    nodes = [node("Slice", ["x", "s0", "s1", "ax"], ["a"]),
             node("Slice", ["x", "s1", "s2", "ax"], ["b"]), node("Neg", ["b"], ["nb"]),
             node("Concat", ["nb", "a"], ["r"], axis=-1), node("Mul", ["x", "cos"], ["xc"]),
             node("Mul", ["r", "cos"], ["rs"]), node("Add", ["xc", "rs"], ["y"])]
    path = save(tmp_path, nodes, {"x": [2, 8, 64]}, {"y": [2, 8, 64]}, [*half, table])
    with pytest.raises(InputError) as caught:
        tasks(path)
    assert "rotary tables" in caught.value.message
