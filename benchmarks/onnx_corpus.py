"""Build the corpus of real ONNX exports in benchmarks/corpus/ (issue 28).

Users bring graphs that `torch.onnx.export` writes from transformers' own classes, not the
hand-written workloads the tests use; this script makes such graphs so the importer can be
tested on them without torch. Each module is built from a config written below (the shapes of
the named checkpoint, random weights, nothing downloaded), exported in f16 at batch 1 by the
dynamo exporter (its default opset and opset 23) and by the legacy TorchScript exporter, and
saved with its weights as external data (`*.onnx.data`, not committed). Failures are recorded,
not hidden. Two quantised graphs come from onnxruntime's own quantisation tools.

Needs the `corpus` extra (torch, transformers, onnxscript, onnx, onnxruntime), in a virtual
environment of its own:

    python benchmarks/onnx_corpus.py                    # everything, then the table
    python benchmarks/onnx_corpus.py --family llama --exporter dynamo
    python benchmarks/onnx_corpus.py --table-only       # the table of what is on disk

It rewrites benchmarks/corpus/index.json (entries of graphs not rebuilt in this run are kept).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import time
import traceback
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

CORPUS = Path(__file__).resolve().parent / "corpus"
INDEX = CORPUS / "index.json"

# Values a test or benchmark may give each symbolic dimension (`--dim NAME=V`).
DIM_SUGGESTIONS = {"seq": 128, "past": 512, "past_seq": 513}
# Example sizes the exporters trace with: not 0 or 1, which torch.export specialises.
TRACE_SEQ = 7
TRACE_PAST = 9

LLAMA3_ROPE = {
    "rope_type": "llama3",
    "rope_theta": 500000.0,
    "factor": 32.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}

# The shapes of each family's reference checkpoint, from its published config.
FAMILIES: dict[str, dict[str, Any]] = {
    "llama": {
        "checkpoint": "Llama-3.2-1B",
        "config": "LlamaConfig",
        "prefix": "Llama",
        "kwargs": dict(
            vocab_size=128256, hidden_size=2048, intermediate_size=8192,
            num_attention_heads=32, num_key_value_heads=8, head_dim=64,
            max_position_embeddings=131072, rms_norm_eps=1e-5, hidden_act="silu",
            rope_parameters=LLAMA3_ROPE, tie_word_embeddings=True,
        ),
    },
    "qwen2": {
        "checkpoint": "Qwen2.5-0.5B",
        "config": "Qwen2Config",
        "prefix": "Qwen2",
        "kwargs": dict(
            vocab_size=151936, hidden_size=896, intermediate_size=4864,
            num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
            rms_norm_eps=1e-6, hidden_act="silu", tie_word_embeddings=True,
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
            use_sliding_window=False,
        ),
    },
    "mistral": {
        "checkpoint": "Mistral-7B-v0.3",
        "config": "MistralConfig",
        "prefix": "Mistral",
        "kwargs": dict(
            vocab_size=32768, hidden_size=4096, intermediate_size=14336,
            num_attention_heads=32, num_key_value_heads=8, head_dim=128,
            max_position_embeddings=32768, rms_norm_eps=1e-5, hidden_act="silu",
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
            sliding_window=None,
        ),
    },
    "phi3": {
        "checkpoint": "Phi-3-mini-4k-instruct",
        "config": "Phi3Config",
        "prefix": "Phi3",
        "kwargs": dict(
            vocab_size=32064, hidden_size=3072, intermediate_size=8192,
            num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=4096,
            original_max_position_embeddings=4096, rms_norm_eps=1e-5, hidden_act="silu",
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            sliding_window=2047, pad_token_id=32000,
        ),
    },
    "gemma2": {
        "checkpoint": "gemma-2-2b",
        "config": "Gemma2Config",
        "prefix": "Gemma2",
        # transformers refuses sdpa with attention logit soft-capping: the dynamo exporter also
        # runs with eager attention, as a Gemma-2 user must
        "eager_dynamo": True,
        "kwargs": dict(
            vocab_size=256000, hidden_size=2304, intermediate_size=9216,
            num_attention_heads=8, num_key_value_heads=4, head_dim=256,
            max_position_embeddings=8192, rms_norm_eps=1e-6,
            hidden_activation="gelu_pytorch_tanh", query_pre_attn_scalar=256,
            sliding_window=4096, final_logit_softcapping=30.0,
            attn_logit_softcapping=50.0,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        ),
    },
}

# `model-plain`: the base model called the plain way, `model(input_ids)` (no mask, no cache),
# the first export a user tries; prefill only.
MODULES = ("layer", "model", "mlp", "model-plain")
PHASES = ("prefill", "decode")
# `torchscript-eager`: the legacy exporter with transformers' eager attention, the way round its
# refusal of the sdpa call transformers makes for grouped-query attention (enable_gqa).
EXPORTERS = ("dynamo", "dynamo23", "torchscript", "torchscript-eager")
EAGER_DYNAMO = ("dynamo-eager", "dynamo23-eager")  # families with "eager_dynamo"


@dataclass
class Entry:
    """One graph of the corpus, or one export that failed (then `error` says why)."""

    file: str
    family: str
    module: str
    exporter: str
    phase: str
    attention: str = "sdpa"
    opset: int | None = None
    nodes: int | None = None
    dims: dict[str, int] = field(default_factory=dict)
    source: str = ""
    error: str = ""
    seconds: float = 0.0
    ort: str = ""
    ops: dict[str, int] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------
# Modules as exported


def _torch():  # imported late so --table-only needs only onnx
    import torch

    return torch


def _config(family: str, attention: str, layers: int = 1):
    import transformers

    spec = FAMILIES[family]
    cls = getattr(transformers, spec["config"])
    kwargs = dict(spec["kwargs"], num_hidden_layers=layers)
    if family == "gemma2":
        # Gemma-2 alternates sliding and full attention starting with sliding; layer 0 is
        # the first one, so the exported layer is a sliding-window layer, as in the checkpoint.
        kwargs["layer_types"] = ["sliding_attention"] * layers
    config = cls(**kwargs)
    config._attn_implementation = attention
    return config


def _cls(family: str, suffix: str):
    import transformers

    prefix = FAMILIES[family]["prefix"]
    module_name = f"transformers.models.{family}.modeling_{family}"
    mod = sys.modules.get(module_name) or __import__(module_name, fromlist=["_"])
    return getattr(mod, prefix + suffix, None) or getattr(transformers, prefix + suffix)


def _mask(config, hidden, cache, position_ids):
    """The mask transformers' own model would build for layer 0 (no padding mask given)."""
    from transformers.masking_utils import create_causal_mask, create_sliding_window_causal_mask

    make = (
        create_sliding_window_causal_mask
        if (getattr(config, "layer_types", None) or ["full_attention"])[0] == "sliding_attention"
        else create_causal_mask
    )
    return make(
        config=config,
        inputs_embeds=hidden,
        attention_mask=None,
        cache=cache,
        position_ids=position_ids,
    )


def _cache(config, past_key=None, past_value=None):
    from transformers import DynamicCache

    if past_key is None:
        return DynamicCache(config=config)
    return DynamicCache(ddp_cache_data=[(past_key, past_value)], config=config)


def build_module(family: str, module: str, phase: str, attention: str = "sdpa"):
    """(module, args, input names, output names, dynamic dims per input) for one graph."""
    torch = _torch()
    nn = torch.nn
    config = _config(family, attention)
    f16 = torch.float16
    hidden_size = config.hidden_size
    kv_heads = config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or hidden_size // config.num_attention_heads
    decode = phase == "decode"
    seq = 1 if decode else TRACE_SEQ
    past_shape = (1, kv_heads, TRACE_PAST, head_dim)
    past_args = (torch.randn(past_shape, dtype=f16), torch.randn(past_shape, dtype=f16))
    past_dims = {"past_key": {2: "past"}, "past_value": {2: "past"}}

    if module == "mlp":
        layer = _cls(family, "DecoderLayer")(config, layer_idx=0)
        gemma = family == "gemma2"
        norm_name = "pre_feedforward_layernorm" if gemma else "post_attention_layernorm"

        class NormMLP(nn.Module):
            """The MLP block with the RMSNorm before it, as in the decoder layer."""

            def __init__(self):
                super().__init__()
                self.norm = getattr(layer, norm_name)
                self.mlp = layer.mlp

            def forward(self, hidden_states):
                return self.mlp(self.norm(hidden_states))

        mod = NormMLP().to(f16).eval()
        args = (torch.randn(1, seq, hidden_size, dtype=f16),)
        return mod, args, ["hidden_states"], ["output"], {"hidden_states": {1: "seq"}}

    if module == "layer":
        layer = _cls(family, "DecoderLayer")(config, layer_idx=0)
        rotary = _cls(family, "RotaryEmbedding")(config=config)

        class Layer(nn.Module):
            """Decoder layer 0 with the rotary table and causal mask its model builds for it."""

            def __init__(self):
                super().__init__()
                self.layer = layer
                self.rotary = rotary

            def forward(self, hidden_states, past_key=None, past_value=None):
                cache = _cache(config, past_key, past_value)
                past = cache.get_seq_length()
                position_ids = (torch.arange(hidden_states.shape[1]) + past).unsqueeze(0)
                mask = _mask(config, hidden_states, cache, position_ids)
                embeddings = self.rotary(hidden_states, position_ids)
                out = self.layer(
                    hidden_states,
                    attention_mask=mask,
                    position_ids=position_ids,
                    cache=cache,
                    use_cache=True,
                    position_embeddings=embeddings,
                )
                out = out[0] if isinstance(out, tuple) else out
                return out, cache.layers[0].keys, cache.layers[0].values

        mod = Layer().to(f16).eval()
        args = (torch.randn(1, seq, hidden_size, dtype=f16),)
        names = ["hidden_states"]
        dims: dict[str, dict[int, str]] = {} if decode else {"hidden_states": {1: "seq"}}
        if decode:
            args += past_args
            names += ["past_key", "past_value"]
            dims.update(past_dims)
        return mod, args, names, ["output", "present_key", "present_value"], dims

    # module == "model": the base model with one layer, its embedding and its final norm, fed
    # input ids and a 2-D attention mask as generation loops feed it.
    model = _cls(family, "Model")(config)
    if module == "model-plain":

        class PlainModel(nn.Module):
            """transformers' base model called with input ids only (no mask, no cache)."""

            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, input_ids):
                return self.model(input_ids=input_ids, use_cache=False).last_hidden_state

        ids = torch.randint(0, config.vocab_size, (1, seq), dtype=torch.int64)
        mod = PlainModel().to(f16).eval()
        return mod, (ids,), ["input_ids"], ["last_hidden_state"], {"input_ids": {1: "seq"}}

    class OneLayerModel(nn.Module):
        """transformers' base model (embedding, layer 0, final norm) with a tensor cache."""

        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, past_key=None, past_value=None):
            cache = _cache(config, past_key, past_value)
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, cache=cache, use_cache=True
            )
            return out.last_hidden_state, cache.layers[0].keys, cache.layers[0].values

    mod = OneLayerModel().to(f16).eval()
    total = TRACE_PAST + seq if decode else seq
    args = (
        torch.randint(0, config.vocab_size, (1, seq), dtype=torch.int64),
        torch.ones(1, total, dtype=torch.int64),
    )
    names = ["input_ids", "attention_mask"]
    dims = (
        {"attention_mask": {1: "past_seq"}}
        if decode
        else {"input_ids": {1: "seq"}, "attention_mask": {1: "seq"}}
    )
    if decode:
        args += past_args
        names += ["past_key", "past_value"]
        dims.update(past_dims)
    return mod, args, names, ["last_hidden_state", "present_key", "present_value"], dims


def _dynamic_shapes(names, dims, args):
    """torch.export's dynamic shapes for the named dims; `past_seq` is `past + 1` (decode)."""
    from torch.export import Dim

    made: dict[str, Any] = {}

    def dim(name):
        if name == "past_seq":  # decode: one new token after the cache
            return dim("past") + 1
        if name not in made:
            made[name] = Dim(name, min=2, max=131072)
        return made[name]

    return tuple(
        {axis: dim(n) for axis, n in dims.get(name, {}).items()} or None
        for name, _ in zip(names, args, strict=True)
    )


# ----------------------------------------------------------------------------------------------
# Exporting


def _file(family, module, phase, exporter, opset):
    """`llama-layer-prefill-dynamo-op20.onnx`, `...-torchscript-eager-op20.onnx`."""
    return f"{family}-{module}-{phase}-{exporter.replace('23', '')}-op{opset}.onnx"


def _variant(exporter: str) -> tuple[str, str]:
    """(exporter, attention implementation) of a name from EXPORTERS or EAGER_DYNAMO."""
    attention = "eager" if exporter.endswith("-eager") else "sdpa"
    return exporter.removesuffix("-eager").removesuffix("23"), attention


def _summarise(entry: Entry, path: Path) -> None:
    """Node count, op histogram, opset and the free symbolic dims of a written graph."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    entry.opset = _opset(model)
    entry.nodes = len(model.graph.node)
    entry.ops = dict(sorted(Counter(
        (n.domain + "." if n.domain not in ("", "ai.onnx") else "") + n.op_type
        for n in model.graph.node
    ).items()))
    params = {
        d.dim_param
        for value in model.graph.input
        for d in value.type.tensor_type.shape.dim
        if d.dim_param
    }
    # free symbols only: dynamo names a derived input dim by its expression ("past + 1")
    entry.dims = {p: DIM_SUGGESTIONS[p] for p in sorted(params) if p.isidentifier()}


def _save_external(model, path: Path) -> None:
    """Write a graph with its weights in `<file>.data` beside it (not committed).

    Tensors up to 1 KiB stay in the graph (the dynamo exporter keeps those up to 256 bytes):
    they are the axes, shapes and scalars that folding the shape arithmetic reads without the
    weights.
    """
    import onnx

    data = path.name + ".data"
    (path.parent / data).unlink(missing_ok=True)
    onnx.save_model(
        model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
        location=data, size_threshold=1024,
    )


def _reason(exc: BaseException) -> str:
    """One line: the exception type and the line of its message that names the cause.

    The dynamo exporter wraps the cause in advice; its "Exception summary" names it.
    """
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if "## Exception summary" in lines:
        lines = lines[lines.index("## Exception summary") + 1:]
    return f"{type(exc).__name__}: {(lines[0] if lines else '')[:300]}"


def export_one(family: str, module: str, phase: str, exporter: str) -> Entry:
    torch = _torch()
    opset = 23 if exporter.startswith("dynamo23") else None
    name, attention = _variant(exporter)
    entry = Entry(file="", family=family, module=module, exporter=name, phase=phase,
                  attention=attention, opset=opset)
    start = time.time()
    try:
        torch.manual_seed(0)
        mod, args, names, outputs, dims = build_module(family, module, phase, attention)
        entry.source = type(mod).__doc__.strip().splitlines()[0]
        log = io.StringIO()
        with (warnings.catch_warnings(), contextlib.redirect_stdout(log),
              contextlib.redirect_stderr(log), torch.no_grad()):
            warnings.simplefilter("ignore")
            if name == "torchscript":
                import onnx

                buffer = io.BytesIO()
                torch.onnx.export(
                    mod, args, buffer, dynamo=False, input_names=names, output_names=outputs,
                    dynamic_axes=dims,
                )
                model = onnx.load_model_from_string(buffer.getvalue())
                entry.opset = _opset(model)
                path = CORPUS / _file(family, module, phase, exporter, entry.opset)
                _save_external(model, path)
            else:
                program = torch.onnx.export(
                    mod, args, dynamo=True, input_names=names, output_names=outputs,
                    dynamic_shapes=_dynamic_shapes(names, dims, args), opset_version=opset,
                )
                entry.opset = program.model.opset_imports[""]
                path = CORPUS / _file(family, module, phase, exporter, entry.opset)
                (path.parent / (path.name + ".data")).unlink(missing_ok=True)
                program.save(str(path), external_data=True)
                import onnx

                # the exporter's own saving keeps only tensors up to 256 bytes inline;
                # Gemma-2's rotary frequencies (512 bytes) must stay in the graph to fold
                _save_external(onnx.load(str(path)), path)
        entry.file = path.name
        _summarise(entry, path)
    except Exception as exc:  # noqa: BLE001 - every failure is a row of the table
        entry.error = _reason(exc)
        if os.environ.get("CORPUS_TRACEBACK"):
            traceback.print_exc()
    entry.seconds = round(time.time() - start, 1)
    return entry


def _opset(model) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


# ----------------------------------------------------------------------------------------------
# Quantised graphs, written by onnxruntime's quantisation tools from exports of this corpus


def quantise_int8_qdq(family: str = "llama") -> Entry:
    """int8 QDQ: onnxruntime's static quantisation of an f32 export of the MLP block.

    Static QDQ quantisation calibrates on f32 activations, so the block is exported in f32 here
    (the other graphs are f16): weights become int8 initializers behind DequantizeLinear, and the
    activations pass through QuantizeLinear/DequantizeLinear pairs.
    """
    import numpy as np
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    torch = _torch()
    entry = Entry(file="", family=family, module="mlp", exporter="dynamo+ort-qdq-int8",
                  phase="prefill")
    start = time.time()
    try:
        torch.manual_seed(0)
        mod, args, names, outputs, dims = build_module(family, "mlp", "prefill")
        mod = mod.float()
        args = tuple(a.float() for a in args)
        entry.source = "f32 " + type(mod).__doc__.strip().splitlines()[0]
        scratch = CORPUS / f".{family}-mlp-f32.onnx"
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            program = torch.onnx.export(
                mod, args, dynamo=True, input_names=names, output_names=outputs,
                dynamic_shapes=_dynamic_shapes(names, dims, args),
            )
            program.save(str(scratch), external_data=True)
        rng = np.random.default_rng(0)
        hidden = args[0].shape[-1]

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.batches = iter(
                    [{"hidden_states": rng.standard_normal((1, 16, hidden), np.float32)}
                     for _ in range(4)]
                )

            def get_next(self):
                return next(self.batches, None)

        opset = _opset(onnx.load(str(scratch), load_external_data=False))
        path = CORPUS / f"{family}-mlp-prefill-dynamo-op{opset}-int8-qdq.onnx"
        (path.parent / (path.name + ".data")).unlink(missing_ok=True)
        quantize_static(
            str(scratch), str(path), Reader(), quant_format=QuantFormat.QDQ,
            per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
            use_external_data_format=True, op_types_to_quantize=["MatMul"],
        )
        _rename_data(path)
        entry.file = path.name
        _summarise(entry, path)
    except Exception as exc:  # noqa: BLE001
        entry.error = _reason(exc)
        if os.environ.get("CORPUS_TRACEBACK"):
            traceback.print_exc()
    finally:
        for leftover in CORPUS.glob(f".{family}-mlp-f32.onnx*"):
            leftover.unlink()
    entry.seconds = round(time.time() - start, 1)
    return entry


def quantise_int4(source: str) -> Entry:
    """int4 MatMulNBits: onnxruntime's MatMulNBitsQuantizer (block 32, symmetric) on an f16
    graph of this corpus, as `onnxruntime.quantization.matmul_nbits_quantizer` writes it."""
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    src = CORPUS / source
    family, module, phase = source.split("-")[:3]
    entry = Entry(file="", family=family, module=module, exporter="dynamo+ort-int4",
                  phase=phase, source=f"MatMulNBitsQuantizer(block_size=32) of {source}")
    start = time.time()
    try:
        model = onnx.load(str(src))
        quantizer = MatMulNBitsQuantizer(model, block_size=32, is_symmetric=True)
        with contextlib.redirect_stdout(io.StringIO()):
            quantizer.process()
        path = CORPUS / source.replace(".onnx", "-int4.onnx")
        _save_external(quantizer.model.model, path)
        entry.file = path.name
        _summarise(entry, path)
    except Exception as exc:  # noqa: BLE001
        entry.error = _reason(exc)
        if os.environ.get("CORPUS_TRACEBACK"):
            traceback.print_exc()
    entry.seconds = round(time.time() - start, 1)
    return entry


def _rename_data(path: Path) -> None:
    """Give a graph's external data the name `<file>.data` that .gitignore expects."""
    import onnx

    model = onnx.load(str(path))
    old = {
        kv.value
        for t in onnx.external_data_helper._get_all_tensors(model)
        for kv in t.external_data
        if kv.key == "location"
    }
    _save_external(model, path)
    for name in old - {path.name + ".data"}:
        (path.parent / name).unlink(missing_ok=True)


# ----------------------------------------------------------------------------------------------
# Index and table


def load_index() -> dict[str, dict]:
    """The entries of index.json, graphs and failures, as full `Entry` dicts."""
    if not INDEX.exists():
        return {}
    index = json.loads(INDEX.read_text())
    blank = asdict(Entry(file="", family="", module="", exporter="", phase=""))
    rows = [{**blank, **e} for e in index["graphs"] + index.get("failures", [])]
    return {_key(e): e for e in rows}


def _key(e: dict) -> str:
    keys = ("family", "module", "phase", "exporter", "attention")
    return "/".join(str(e.get(k, "sdpa")) for k in keys) + (
        f"/{e['opset']}" if e["exporter"] == "dynamo" and e.get("opset") == 23 else ""
    )


def record(entry: dict) -> None:
    """Add or replace one entry of index.json; several runs may record at once (a file lock)."""
    import fcntl

    with open(INDEX.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries = load_index()
        entries[_key(entry)] = entry
        write_index(entries)


def write_index(entries: dict[str, dict]) -> None:
    rows = sorted(entries.values(), key=lambda e: (
        list(FAMILIES).index(e["family"]) if e["family"] in FAMILIES else 99,
        e["module"], e["phase"], e["exporter"], e["attention"], e.get("opset") or 0,
    ))
    graphs = [{k: v for k, v in e.items() if k not in ("error", "seconds")} for e in rows
              if not e["error"]]
    failures = [{k: e[k] for k in ("family", "module", "phase", "exporter", "attention", "opset",
                                   "source", "error")}
                for e in rows if e["error"]]
    INDEX.write_text(json.dumps({
        "versions": versions(),
        "dim_suggestions": DIM_SUGGESTIONS,
        "graphs": graphs,
        "failures": failures,
    }, indent=1) + "\n")


# Small sizes for the onnxruntime run of --check: it shows the graph runs, not how fast.
CHECK_DIMS = {"seq": 5, "past": 6}


def check_graph(path: Path) -> str:
    """Run a graph once in onnxruntime on random inputs (with its weights): "ok" or why not."""
    import numpy as np
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(path), load_external_data=False)
    rng = np.random.default_rng(0)
    feeds = {}
    for value in model.graph.input:
        tensor = value.type.tensor_type
        # a dim_param is a name or, from dynamo, an expression of names such as "past + 1"
        names = {**CHECK_DIMS, "past_seq": CHECK_DIMS["past"] + 1, "__builtins__": {}}
        shape = [eval(d.dim_param, names) if d.dim_param else d.dim_value  # noqa: S307
                 for d in tensor.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if value.name == "attention_mask":
            feeds[value.name] = np.ones(shape, dtype)
        elif np.issubdtype(dtype, np.integer):
            feeds[value.name] = rng.integers(0, 1000, shape).astype(dtype)
        else:
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
    try:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        outputs = session.run(None, feeds)
    except Exception as exc:  # noqa: BLE001 - recorded in the table
        return "failed: " + _reason(exc)
    if not all(np.isfinite(o.astype(np.float32)).all() for o in outputs):
        return "ran, non-finite outputs"
    return "ok"


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "transformers", "onnxscript", "onnx", "onnx-ir", "onnxruntime"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def _rows(entries: dict[str, dict]) -> list[tuple[str, ...]]:
    def order(e):
        family = list(FAMILIES).index(e["family"]) if e["family"] in FAMILIES else 99
        return (family, MODULES.index(e["module"]), PHASES.index(e["phase"]), e["exporter"],
                e["attention"], e.get("opset") or 0)

    return [
        (e["file"] or "-", e["family"], e["module"], e["exporter"], e["attention"],
         str(e.get("opset") or "-"), e["phase"], str(e.get("nodes") or "-"),
         e.get("ort") or "-", e["error"] or "exported")
        for e in sorted(entries.values(), key=order)
    ]


HEAD = ("file", "family", "module", "exporter", "attention", "opset", "phase", "nodes",
        "onnxruntime", "what happened")


def print_table(entries: dict[str, dict], markdown: bool = False) -> None:
    rows = _rows(entries)
    if markdown:
        for r in [HEAD, tuple("---" for _ in HEAD), *rows]:
            print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
        return
    widths = [max(len(r[i]) for r in [HEAD, *rows]) for i in range(len(HEAD) - 1)]
    for r in [HEAD, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1])


def planned(ns: argparse.Namespace | None = None):
    """(family, module, phase, exporter) of every export, or of those the options select."""

    def chosen(option, default):
        return (getattr(ns, option, None) if ns else None) or default

    for family in chosen("family", FAMILIES):
        for module in chosen("module", MODULES):
            for phase in chosen("phase", PHASES):
                if module in ("mlp", "model-plain") and phase == "decode":
                    continue  # no cache: decode is the prefill graph at seq=1
                extra = EAGER_DYNAMO if FAMILIES[family].get("eager_dynamo") else ()
                for exporter in chosen("exporter", EXPORTERS + extra):
                    if module == "mlp" and exporter.endswith("-eager"):
                        continue  # no attention in the MLP block
                    yield family, module, phase, exporter


def not_run(entries: dict[str, dict]) -> dict[str, dict]:
    """Entries, marked "not run", for the planned exports that index.json has no row for."""
    missing = {}
    for family, module, phase, exporter in planned():
        name, attention = _variant(exporter)
        entry = asdict(Entry(file="", family=family, module=module, exporter=name, phase=phase,
                             attention=attention, opset=23 if "23" in exporter else None,
                             error="not run yet"))
        if _key(entry) not in entries:
            missing[_key(entry)] = entry
    return missing


def _selected(entry: dict, ns: argparse.Namespace) -> bool:
    return all(
        not getattr(ns, key) or entry[key] in getattr(ns, key)
        for key in ("family", "module", "phase")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", choices=list(FAMILIES))
    parser.add_argument("--module", action="append", choices=MODULES)
    parser.add_argument("--phase", action="append", choices=PHASES)
    parser.add_argument("--exporter", action="append", choices=EXPORTERS + EAGER_DYNAMO)
    parser.add_argument("--no-quantised", action="store_true",
                        help="skip the int8 QDQ and int4 MatMulNBits graphs")
    parser.add_argument("--table-only", action="store_true",
                        help="print the table of index.json; export nothing")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--check", action="store_true",
                        help="run each graph of the index once in onnxruntime; export nothing")
    ns = parser.parse_args(argv)
    CORPUS.mkdir(exist_ok=True)
    entries = load_index()
    if ns.check:
        for entry in entries.values():
            if not entry["error"] and _selected(entry, ns):
                entry["ort"] = check_graph(CORPUS / entry["file"])
                print(f"{entry['file']}: {entry['ort']}", flush=True)
                record(entry)
    elif not ns.table_only:
        for family, module, phase, exporter in planned(ns):
            entry = export_one(family, module, phase, exporter)
            print(f"{entry.file or '-'}: {entry.error or entry.nodes} ({entry.seconds} s)",
                  flush=True)
            record(asdict(entry))
        if not ns.no_quantised:
            for entry in (quantise_int8_qdq(), quantise_int4("llama-mlp-prefill-dynamo-op20.onnx"),
                          quantise_int4("llama-layer-prefill-dynamo-op20.onnx")):
                print(f"{entry.file or '-'}: {entry.error or entry.nodes} ({entry.seconds} s)",
                      flush=True)
                record(asdict(entry))
    entries = load_index()
    print_table({**entries, **not_run(entries)}, markdown=ns.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
