"""The published JSON Schemas (draft 2020-12) of the three formats: the statement of shape.

The schemas say everything about a document's structure that JSON Schema can say (keys,
types, signs, minimums, the 64-bit range, ``meta`` on every object); :mod:`models.formats`
validates with them (:func:`check`) and then checks by hand only what a schema cannot
express: names that must exist, intervals with ``lo < hi``, boxes inside their tensor and
byte ranges inside their buffer, every buffer placed exactly once.

One deliberate difference from JSON Schema's own notion of a number: ``1.0`` is an
integer to JSON Schema but not to FORMATS.md (every figure is written as an integer), so
the validator here counts only integers written without a fraction or exponent (Python
``int``, not ``bool``) as ``integer``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match, by_relevance
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from models.errors import InputError
from models.jsonio import MAX_INT, json_path

__all__ = ["TARGET_FORMAT", "PROBLEM_FORMAT", "SCHEDULE_FORMAT", "PROGRAM_FORMAT", "PLAN_FORMAT",
           "REQUEST_FORMAT", "SCHEMA_FILES",
           "load_schema", "all_schemas", "validator", "check"]

TARGET_FORMAT = "npu-target/1"
PROBLEM_FORMAT = "npu-problem/1"
SCHEDULE_FORMAT = "npu-schedule/1"
PROGRAM_FORMAT = "npu-program/1"
#: schedsearch's own files (schedsearch/plans.py), stated the same way.
PLAN_FORMAT = "npu-plan/1"
REQUEST_FORMAT = "npu-request/1"

#: Format tag -> schema file name in ``models/schemas/``.
SCHEMA_FILES = {TARGET_FORMAT: "npu-target-1.json", PROBLEM_FORMAT: "npu-problem-1.json",
                SCHEDULE_FORMAT: "npu-schedule-1.json", PROGRAM_FORMAT: "npu-program-1.json",
                PLAN_FORMAT: "npu-plan-1.json", REQUEST_FORMAT: "npu-request-1.json"}


def load_schema(format_tag: str) -> dict[str, Any]:
    """The schema of ``format_tag`` (``npu-target/1``, ...); KeyError for another tag."""
    entry = resources.files("models").joinpath("schemas", SCHEMA_FILES[format_tag])
    return json.loads(entry.read_text("utf-8"))


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema by its ``$id``, for a validator's reference registry."""
    return {schema["$id"]: schema for schema in map(load_schema, SCHEMA_FILES)}


def _is_integer(_checker: Any, instance: Any) -> bool:
    return type(instance) is int


_STRICT_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer)
_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                          type_checker=_STRICT_TYPES)


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its ``$schema`` key: jsonschema picks the validator class of a
    referenced schema by that key, which would bring back the lenient ``integer``."""
    return {key: value for key, value in schema.items() if key != "$schema"}


def _inlined(format_tag: str) -> dict[str, Any]:
    """The schema with every ``$ref`` replaced by what it refers to (none is recursive):
    resolving references is half of jsonschema's time on a large document."""
    by_file = {file: _strict(load_schema(tag)) for tag, file in SCHEMA_FILES.items()}

    def inline(node: Any, defs: dict[str, Any]) -> Any:
        if isinstance(node, list):
            return [inline(item, defs) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return inline(defs[ref.removeprefix("#/$defs/")], defs)
        if isinstance(ref, str) and ref in by_file:
            other = by_file[ref]
            return {key: value for key, value in inline(other, other.get("$defs", {})).items()
                    if key != "$id"}
        return {key: inline(value, defs) for key, value in node.items() if key != "$defs"}

    root = by_file[SCHEMA_FILES[format_tag]]
    return inline(root, root.get("$defs", {}))


@cache
def validator(format_tag: str) -> jsonschema.protocols.Validator:
    """A validator of ``format_tag``'s schema, built once, its references inlined (any
    reference left, to another resource, is resolved by ``$id``)."""
    registry: Registry = Registry().with_resources(
        (uri, DRAFT202012.create_resource(_strict(schema)))
        for uri, schema in all_schemas().items())
    return _Validator(_inlined(format_tag), registry=registry)


def check(document: Any, format_tag: str, source: str) -> None:
    """Raise :class:`InputError` (file, JSON path, rule FORMAT) unless ``document``
    matches the schema of ``format_tag``; the error names the most relevant fault.

    The tag is looked at first: a document of another format gets one clear error rather
    than a list of the keys it lacks."""
    if not isinstance(document, dict):
        raise InputError(f"expected an object, got {_kind(document)}", source=source,
                         path="$", rule="FORMAT")
    if document.get("format") != format_tag:
        raise InputError(f"expected format {format_tag!r}, got "
                         f"{json.dumps(document.get('format'))[:60]}", source=source,
                         path="$.format", rule="FORMAT")
    # an unknown key says more than the required key its presence made the schema expect
    error = best_match(validator(format_tag).iter_errors(document),
                       key=by_relevance(strong=frozenset({"additionalProperties"})))
    if error is not None:
        path, message = _explain(error)
        raise InputError(message, source=source, path=path, rule="FORMAT")


_ACCESS_KEYS = frozenset({"tensor", "box", "buffer", "bytes", "value"})
_TYPE_NAMES = {"object": "an object", "array": "an array", "string": "a string",
               "integer": "an integer"}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def _explain(error: ValidationError) -> tuple[str, str]:
    """The JSON path and a one-line message in the readers' own words."""
    path = "$"
    for key in error.absolute_path:
        path = json_path(path, key)
    value, keyword, expected = error.instance, error.validator, error.validator_value
    if keyword == "required":
        missing = next(key for key in expected if key not in value)
        return path, f"missing required key {missing!r}"
    if keyword == "additionalProperties":
        known = error.schema.get("properties", {})
        extra = next(key for key in value if key not in known)
        for kind in ("tensor", "buffer"):
            if kind in known and extra in _ACCESS_KEYS:
                return json_path(path, extra), f"key {extra!r} does not belong to a {kind} " \
                                               "access (an access names a tensor or a buffer)"
        return json_path(path, extra), f"unknown key {extra!r}"
    if keyword == "type":
        return path, f"expected {_TYPE_NAMES.get(expected, expected)}, got {_kind(value)}"
    if keyword in ("minimum", "maximum"):
        if not -MAX_INT - 1 <= value <= MAX_INT:
            return path, "integer does not fit in 64 bits"
        return path, f"must be >= {expected}, got {value}"
    if "propertyNames" in error.schema_path:
        return path, "names must be non-empty strings"
    if keyword == "minLength":
        return path, "expected a non-empty string"
    if keyword in ("minItems", "maxItems"):
        if path.endswith(".modes"):
            return path, "an op needs at least one mode"
        return path, "an interval or edge has exactly two items"
    if keyword == "enum":
        what = error.absolute_path[-1] if error.absolute_path else "value"
        return path, f"{what} must be one of {', '.join(map(str, expected))}, got " \
                     f"{json.dumps(value)[:40]}"
    if keyword == "const":
        return path, f"expected format {expected!r}, got {json.dumps(value)[:60]}"
    return path, error.message
