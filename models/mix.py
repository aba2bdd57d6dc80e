"""Mix files: requests to serve together, each a decoder layer of a bundled family.

A mix names a target and lists requests (see ``docs/formats.md``, "Mix files"). TOML or
JSON::

    name = "qwen-mix"
    target = "hexagon-v75"
    [[requests]]
    name = "p0"
    model = "qwen2.5-0.5b"
    phase = "prefill"
    tokens = 256
    [[requests]]
    name = "d0"
    model = "qwen2.5-0.5b"
    phase = "decode"
    past = 1024
    deadline_us = 1500

A request's ``model`` is a bundled family, or an ``.onnx`` decoder-layer graph (a path
relative to the mix file's folder) whose symbolic dimensions the request binds in its
``dims`` table: a value is a whole number, or ``"tokens"`` / ``"past"`` for the request's
own (a prefill binds its ``tokens``, a decode step its ``past``)::

    [[requests]]
    name = "p1"
    model = "layers/qwen2-layer-prefill.onnx"
    phase = "prefill"
    tokens = 128
    dims = { seq = "tokens" }

Reading only: turning requests into a problem is :mod:`models.requests`; the graph is
opened here (without its weights) only to check ``dims`` against its symbolic dimensions.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.errors import InputError
from models.examples.decoders import MODELS
from models.jsonio import json_path, load_json_file

__all__ = ["MIX_FORMAT", "PHASES", "Request", "Mix", "mix_from_dict", "load_mix"]

MIX_FORMAT = "npu-mix/1"
PHASES = ("prefill", "decode")
#: A request name is a prefix of task and tensor names (``p0-q_proj``): no ``-`` in it, so
#: that two requests' names cannot collide (``p0-c1`` + ``norm1`` against ``p0`` + ``c1-norm1``).
_NAME = re.compile(r"^[A-Za-z0-9_]+$")
_KEYS = ("format", "name", "target", "requests")
_REQUEST_KEYS = ("name", "model", "phase", "tokens", "past", "deadline_us", "weight", "dims")
#: What a ``dims`` value may name instead of a number: the request's own counts.
_COUNTS = ("tokens", "past")


@dataclass(frozen=True, slots=True)
class Request:
    """One request: a decoder layer of ``model`` at ``phase``; ``tokens`` new tokens (1 for
    a decode step) attending to ``past`` cached ones; an optional deadline in ns from the
    start of the mix; a weight for weighted completion time (1 unless given). For an
    ``.onnx`` model, ``onnx`` is the graph's path (resolved against the mix file's folder)
    and ``dims`` the values of its symbolic dimensions, sorted by name."""

    name: str
    model: str
    phase: str
    tokens: int
    past: int
    deadline_ns: int | None = None
    weight: float = 1.0
    onnx: str | None = None
    dims: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Mix:
    """A mix: its name, the name of its target, its requests in file order."""

    name: str
    target: str
    requests: tuple[Request, ...]
    source: str = "<mix>"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _request(raw: Any, path: str, seen: set[str], source: str) -> Request:
    def fail(where: str, message: str, rule: str = "FORMAT") -> InputError:
        return InputError(message, source=source, path=where, rule=rule)

    if not isinstance(raw, dict):
        raise fail(path, "expected an object (a table)")
    for key in raw:
        if key not in _REQUEST_KEYS:
            raise fail(json_path(path, key), f"unknown key {key!r}; known: "
                                             f"{', '.join(_REQUEST_KEYS)}")
    for key in ("name", "model", "phase"):
        if key not in raw:
            raise fail(path, f"missing required key {key!r}")
    name, model, phase = raw["name"], raw["model"], raw["phase"]
    if not isinstance(name, str) or not _NAME.match(name):
        raise fail(json_path(path, "name"), "a request name is letters, digits or '_'")
    if name in seen:
        raise fail(json_path(path, "name"), f"duplicate request name {name!r}")
    families = [m.name for m in MODELS]
    is_onnx = isinstance(model, str) and model.endswith(".onnx")
    if not is_onnx and model not in families:
        raise fail(json_path(path, "model"), f"unknown model {model!r}; bundled families: "
                                             f"{', '.join(families)}, or an .onnx file")
    if "dims" in raw and not is_onnx:
        raise fail(json_path(path, "dims"), "dims binds the symbolic dimensions of an .onnx "
                                            "model; a bundled family has none")
    if phase not in PHASES:
        raise fail(json_path(path, "phase"), f"phase is one of {', '.join(PHASES)}")
    needed = "tokens" if phase == "prefill" else "past"
    if needed not in raw:
        raise fail(path, f"a {phase} request needs {needed!r}")
    if phase == "decode" and "tokens" in raw:
        raise fail(json_path(path, "tokens"), "a decode step is one token: no 'tokens'")
    tokens = raw.get("tokens", 1)
    past = raw.get("past", 0)
    for key, value, least in (("tokens", tokens, 1), ("past", past, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise fail(json_path(path, key), f"expected an integer >= {least}")
    deadline = raw.get("deadline_us")
    if deadline is not None and (not _number(deadline) or not deadline > 0):
        raise fail(json_path(path, "deadline_us"), "expected a number of microseconds > 0")
    weight = raw.get("weight", 1.0)
    if not _number(weight) or not weight > 0:
        raise fail(json_path(path, "weight"), "expected a number > 0")
    onnx, dims = None, ()
    if is_onnx:
        onnx = str(_beside(source, model))
        dims = _onnx_dims(raw, path, onnx, {"tokens": tokens, "past": past}, phase, fail)
    seen.add(name)
    return Request(name, model, phase, tokens, past,
                   None if deadline is None else round(deadline * 1000), float(weight),
                   onnx, dims)


def _beside(source: str, model: str) -> Path:
    """Where an ``.onnx`` model lies: relative to the mix file's folder (as a workload's
    target file is to the workload's), not to the current directory."""
    folder = Path(source).parent if Path(source).is_file() else Path(".")
    return folder / model


def _onnx_dims(raw: dict[str, Any], path: str, onnx: str, counts: dict[str, int],
               phase: str, fail: Any) -> tuple[tuple[str, int], ...]:
    """The request's ``dims`` as values, checked against the graph's symbolic dimensions
    (each bound, none unknown) and binding the request's own count (a prefill's
    ``tokens``, a decode's ``past``)."""
    where = json_path(path, "dims")
    if not Path(onnx).is_file():
        raise fail(json_path(path, "model"), f"no such ONNX model file {onnx!r} (a path "
                                             "relative to the mix file's folder)", "FILE")
    given = raw.get("dims", {})
    if not isinstance(given, dict):
        raise fail(where, "expected a table of symbolic dimensions: {NAME = VALUE}")
    dims: dict[str, int] = {}
    for dim, value in given.items():
        if value in _COUNTS:
            value = counts[value]
        elif not isinstance(value, int) or isinstance(value, bool):
            raise fail(json_path(where, dim), "expected a whole number, or \"tokens\" or "
                                              "\"past\" for the request's own", "DIM")
        if value < 1:
            raise fail(json_path(where, dim), f"a dimension is at least 1, got {value}",
                       "DIM")
        dims[dim] = value
    own = "tokens" if phase == "prefill" else "past"
    if own not in given.values():
        raise fail(where, f"a {phase} request binds its {own!r} to a symbolic dimension of "
                          f"the graph: dims = {{NAME = \"{own}\"}}", "DIM")
    symbols = symbolic_dims(onnx, fail, json_path(path, "model"))
    for dim in dims:
        if dim not in symbols:
            raise fail(json_path(where, dim), f"{onnx} has no symbolic dimension {dim!r} "
                                              f"(its symbolic dimensions: "
                                              f"{', '.join(sorted(symbols)) or 'none'})", "DIM")
    for dim, used_by in symbols.items():
        if dim not in dims:
            raise fail(where, f"symbolic dimension {dim!r} (of input {used_by!r}) of {onnx} "
                              "has no value: bind it in dims", "DIM")
    return tuple(sorted(dims.items()))


def symbolic_dims(onnx_path: str, fail: Any, where: str) -> dict[str, str]:
    """The symbolic dimensions of the graph inputs of ``onnx_path``, each with the first
    input using it (read without the weights); ``fail(where, message, rule)`` when the
    onnx extra is missing or the file is not a model."""
    try:
        import onnx
        import onnxscript  # noqa: F401  (the importer folds with it)
    except ImportError:
        raise fail(where, "reading .onnx models needs the onnx and onnxscript packages: "
                          "pip install 'npu-schedsearch[onnx]'", "ONNX") from None
    from models.onnx.graph import symbolic_inputs

    try:
        model = onnx.load(onnx_path, load_external_data=False)
    except Exception as error:  # onnx raises DecodeError, OSError, ValueError ...
        raise fail(where, f"not a readable ONNX model: {error}".splitlines()[0],
                   "ONNX") from None
    return symbolic_inputs(model)


def mix_from_dict(document: Any, source: str = "<mix>") -> Mix:
    """Check a parsed mix document; InputError names the JSON path and the rule."""
    def fail(path: str, message: str) -> InputError:
        return InputError(message, source=source, path=path, rule="FORMAT")

    if not isinstance(document, dict):
        raise fail("$", "expected an object (a table)")
    other = document.get("format", MIX_FORMAT)
    if other != MIX_FORMAT:
        raise fail("$.format", f"this is a {other!r} document, not a mix: expected a "
                               f"{MIX_FORMAT} file (.toml or .json)")
    for key in document:
        if key not in _KEYS:
            raise fail(json_path("$", key), f"unknown key {key!r}")
    for key in ("name", "target", "requests"):
        if key not in document:
            raise fail("$", f"missing required key {key!r}")
    for key in ("name", "target"):
        if not isinstance(document[key], str) or not document[key]:
            raise fail(json_path("$", key), "expected a non-empty string")
    if not isinstance(document["requests"], list) or not document["requests"]:
        raise fail("$.requests", "expected a non-empty array of requests")
    seen: set[str] = set()
    requests = tuple(_request(raw, json_path("$.requests", i), seen, source)
                     for i, raw in enumerate(document["requests"]))
    return Mix(document["name"], document["target"], requests, source)


def load_mix(path: str) -> Mix:
    """A ``.toml`` or ``.json`` mix file; InputError (one line) if it cannot be used."""
    file = Path(path)
    if not file.is_file():
        raise InputError("no such mix file", source=path, rule="FILE")
    if file.suffix != ".toml":
        return mix_from_dict(load_json_file(file), path)
    try:
        document = tomllib.loads(file.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read: {error}", source=path, rule="FILE") from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"not valid TOML: {error}", source=path, rule="TOML") from None
    return mix_from_dict(document, path)
