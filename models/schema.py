"""The published JSON Schemas (draft 2020-12) of the three formats, shipped as data.

The schemas state the shape of each document (keys, types, signs); the readers in
:mod:`models.formats` check that and the cross-references a schema cannot express (names
that must exist, boxes inside their tensor). ``npu-schedule/1`` refers to the other two
by ``$id``, so a validator needs all three (:func:`all_schemas`).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from models.formats import PROBLEM_FORMAT, SCHEDULE_FORMAT, TARGET_FORMAT

__all__ = ["SCHEMA_FILES", "load_schema", "all_schemas"]

#: Format tag -> schema file name in ``models/schemas/``.
SCHEMA_FILES = {TARGET_FORMAT: "npu-target-1.json", PROBLEM_FORMAT: "npu-problem-1.json",
                SCHEDULE_FORMAT: "npu-schedule-1.json"}


def load_schema(format_tag: str) -> dict[str, Any]:
    """The schema of ``format_tag`` (``npu-target/1``, ...); KeyError for another tag."""
    entry = resources.files("models").joinpath("schemas", SCHEMA_FILES[format_tag])
    return json.loads(entry.read_text("utf-8"))


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema by its ``$id``, for a validator's reference registry."""
    return {schema["$id"]: schema for schema in map(load_schema, SCHEMA_FILES)}
