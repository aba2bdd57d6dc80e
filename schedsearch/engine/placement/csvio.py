"""MiniMalloc's CSV interchange format, read strictly and written atomically.

A header line names the columns: ``id,lower,upper,size`` and optionally ``alignment`` and
``offset``, in any order (MiniMalloc writes them in this one). Each further line is one
buffer live over the half-open ``[lower, upper)``. Blank lines are ignored.

idealloc's instance files use the same four columns. Its parser documents their
lifetimes as exclusive at both ends; reading them as half-open, as this module does,
treats buffers that merely touch as overlapping: a placement valid here is valid under
either reading, and the max-load bound equals the one idealloc itself computes (its
overlap test is the half-open one).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from models.errors import InputError, shortened
from models.files import write_text_atomic
from models.jsonio import utf8_text
from schedsearch.engine.placement.problem import PlacementBuffer, check_buffers

__all__ = ["read_csv", "parse_csv", "write_csv", "REQUIRED_COLUMNS", "OPTIONAL_COLUMNS"]

REQUIRED_COLUMNS = ("id", "lower", "upper", "size")
OPTIONAL_COLUMNS = ("alignment", "offset")


def read_csv(path: str | os.PathLike[str]) -> list[PlacementBuffer]:
    """Read a placement CSV file; unusable content is an :class:`InputError`."""
    source = str(path)
    if Path(path).is_dir():
        raise InputError("is a directory, not a file", source=source, path="$", rule="FILE")
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", source=source, path="$",
                         rule="FILE") from None
    return parse_csv(utf8_text(data, source, "FORMAT", path="line"), source)


def parse_csv(text: str, source: str = "<csv>") -> list[PlacementBuffer]:
    """Parse CSV text (see the module docstring) into buffers."""
    lines = text.splitlines()
    header_at = next((n for n, line in enumerate(lines) if line.strip()), None)
    if header_at is None:
        raise InputError("empty file: expected a header line "
                         f"{','.join(REQUIRED_COLUMNS)}", source=source, path="line 1")
    columns = [name.strip() for name in lines[header_at].split(",")]
    where = f"line {header_at + 1}"
    for name in columns:
        if name not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS:
            raise InputError(f"unknown column {shortened(name)}; expected "
                             f"{','.join(REQUIRED_COLUMNS)}[,alignment][,offset]",
                             source=source, path=where)
    if len(set(columns)) != len(columns):
        raise InputError("a column is named twice", source=source, path=where)
    for name in REQUIRED_COLUMNS:
        if name not in columns:
            raise InputError(f"missing column {name!r}", source=source, path=where)
    buffers: list[PlacementBuffer] = []
    for n in range(header_at + 1, len(lines)):
        line = lines[n]
        if not line.strip():
            continue
        where = f"line {n + 1}"
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(columns):
            raise InputError(f"expected {len(columns)} columns, got {len(cells)}",
                             source=source, path=where)
        row = dict(zip(columns, cells, strict=True))
        values: dict[str, int] = {}
        for name in columns:
            if name == "id":
                continue
            cell = row[name]
            try:
                values[name] = int(cell, 10)
            except ValueError:
                raise InputError(f"{name} must be an integer, got {cell!r}",
                                 source=source, path=where) from None
        if not row["id"]:
            raise InputError("empty id", source=source, path=where)
        try:
            buffers.append(PlacementBuffer(
                row["id"], values["lower"], values["upper"], values["size"],
                values.get("alignment", 1), values.get("offset")))
        except InputError as error:
            raise InputError(error.message, source=source, path=where) from None
    try:
        return check_buffers(buffers)
    except InputError as error:
        raise error.with_source(source) from None


def write_csv(path: str | os.PathLike[str], buffers: Sequence[PlacementBuffer],
              offsets: Mapping[str, int]) -> None:
    """Write buffers with their offsets, whole or not at all (temporary file + rename).

    The ``alignment`` column appears only when some buffer needs it, so the output of a
    MiniMalloc input reads back in MiniMalloc.
    """
    for b in buffers:
        if "," in b.id or "\n" in b.id or "\r" in b.id:
            raise InputError(f"id {b.id!r} cannot be written to CSV (comma or newline)",
                             source=str(path), path=f"$[{b.id!r}]")
    aligned = any(b.align != 1 for b in buffers)
    header = "id,lower,upper,size" + (",alignment" if aligned else "") + ",offset\n"
    rows = [header]
    for b in buffers:
        middle = f",{b.align}" if aligned else ""
        rows.append(f"{b.id},{b.lower},{b.upper},{b.size}{middle},{offsets[b.id]}\n")
    write_text_atomic(path, "".join(rows))
