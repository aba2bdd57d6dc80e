"""Strict JSON reading shared by every format reader.

Python's ``json`` accepts NaN, Infinity, ``1e999`` (as infinity) and integers of any
size, and silently keeps the last of two equal keys; the formats allow none of that, so
this module refuses them with an :class:`InputError` that names the file and the JSON
path.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from models.errors import InputError

__all__ = ["MAX_INPUT_BYTES", "MAX_INT", "MAX_DEPTH", "load_json_file", "parse_json_text",
           "json_path", "utf8_text"]

#: Inputs larger than this are refused before parsing (a schedule of 100k ops is ~40 MB).
MAX_INPUT_BYTES = 128 * 1024 * 1024
#: Largest integer any figure may take: times, sizes and indices fit a signed 64-bit word.
MAX_INT = 2**63 - 1
#: The deepest nesting of arrays and objects accepted (JSON, and TOML workloads).
MAX_DEPTH = 64


def json_path(parent: str, key: str | int) -> str:
    """Extend a JSON path: ``$`` + ``"ops"`` -> ``$.ops``; names with dots get brackets."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if key.isidentifier():
        return f"{parent}.{key}"
    return f"{parent}[{json.dumps(key)}]"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent; one too large for a float (``1e999``,
    which Python reads as infinity) is refused."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number")
    return value


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _check_depth(text: str) -> None:
    depth = 0
    in_string = False
    escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ValueError(f"nesting deeper than {MAX_DEPTH} levels")
        elif char in "]}":
            depth -= 1


def parse_json_text(text: str, source: str) -> Any:
    """Parse ``text`` strictly; any problem is one :class:`InputError` naming ``source``."""
    if not text.strip():
        raise InputError("the file is empty", source=source, rule="JSON")
    try:
        _check_depth(text)
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float,
                          object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as error:
        # some messages end in "at" ("Unterminated string starting at"): one "at" only
        raise InputError(f"not valid JSON: {error.msg.removesuffix(' at')} at line "
                         f"{error.lineno} column {error.colno}", source=source,
                         rule="JSON") from None
    except (ValueError, RecursionError) as error:
        raise InputError(f"not valid JSON: {error}", source=source, rule="JSON") from None


def utf8_text(data: bytes, source: str, rule: str, path: str = "$") -> str:
    """``data`` decoded as UTF-8; InputError naming the line and column of the first byte
    that is not (a CSV's ``path`` is that line)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - data.rfind(b"\n", 0, error.start)
        raise InputError(f"not UTF-8 text: byte 0x{data[error.start]:02x} at line {line} "
                         f"column {column}", source=source,
                         path=f"line {line}" if path == "line" else path,
                         rule=rule) from None


def load_json_file(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file (``-`` is standard input), refusing oversized and malformed input."""
    source = "<stdin>" if str(path) == "-" else str(path)
    try:
        if str(path) == "-":
            data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        else:
            file = Path(path)
            if file.is_dir():
                raise InputError("is a directory, not a file", source=source, rule="FILE")
            if file.stat().st_size > MAX_INPUT_BYTES:
                raise InputError(f"larger than the limit of {MAX_INPUT_BYTES} bytes",
                                 source=source, rule="SIZE")
            data = file.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", source=source,
                         rule="FILE") from None
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"larger than the limit of {MAX_INPUT_BYTES} bytes",
                         source=source, rule="SIZE")
    return parse_json_text(utf8_text(data, source, "JSON"), source)
