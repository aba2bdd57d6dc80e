"""``npu-program/1`` read and written: round trip, strict reader, and the JSON Schema
agreeing with the reader on the program's own keys."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from models.errors import InputError
from models.schema import PROGRAM_FORMAT, load_schema, validator
from schedsearch.program import program_from_dict, program_to_dict

from .programs import lowered
from .test_rules import ORDER_CASES


def good() -> dict[str, Any]:
    return lowered(ORDER_CASES["ORDER_RAW"])


def test_round_trip() -> None:
    doc = good()
    assert program_to_dict(program_from_dict(doc)) == doc


def test_schema_is_valid_and_takes_a_lowered_program() -> None:
    jsonschema.Draft202012Validator.check_schema(load_schema(PROGRAM_FORMAT))
    assert list(validator(PROGRAM_FORMAT).iter_errors(good())) == []


BREAKS = [
    ("unknown key", lambda d: d.update(colour=1)),
    ("no waits", lambda d: d.pop("waits")),
    ("queue name", lambda d: d["queues"].update(HMX=[])),
    ("listed twice", lambda d: d["waits"]["b"].append("a")),
    ("not a list", lambda d: d["queues"].update({"DMA.1": "a"})),
    ("meta", lambda d: d.update(meta=[])),
]


@pytest.mark.parametrize(("what", "breaker"), BREAKS, ids=[b[0] for b in BREAKS])
def test_reader_and_schema_refuse_the_same_shapes(what: str, breaker: Any) -> None:
    doc = copy.deepcopy(good())
    breaker(doc)
    assert list(validator(PROGRAM_FORMAT).iter_errors(doc)), what
    with pytest.raises(InputError):
        program_from_dict(doc, "p.json")


@pytest.mark.parametrize(("breaker", "path"), [
    (lambda d: d["waits"].update(nobody=[]), '$.waits.nobody'),
    (lambda d: d["queues"].update({"DMA.7": []}), '$.queues["DMA.7"]'),
    (lambda d: d["schedule"]["ops"]["a"].update(mode="x"), "$.schedule.ops.a.mode")])
def test_reader_names_the_path(breaker: Any, path: str) -> None:
    doc = copy.deepcopy(good())
    breaker(doc)
    with pytest.raises(InputError) as caught:
        program_from_dict(doc, "p.json")
    assert caught.value.path == path and caught.value.source == "p.json"
