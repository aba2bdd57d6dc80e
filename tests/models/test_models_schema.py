"""The published JSON Schemas: valid meta-schemas, examples pass, bad documents fail both
the schema and the reader."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from models.errors import InputError
from models.formats import (
    PROBLEM_FORMAT,
    SCHEDULE_FORMAT,
    TARGET_FORMAT,
    BufferPlacement,
    OpPlacement,
    Schedule,
    problem_from_dict,
    problem_to_dict,
    schedule_from_dict,
    schedule_to_dict,
    target_from_dict,
    target_to_dict,
)
from models.schema import SCHEMA_FILES, load_schema, validator
from models.targets import load_target, target_names
from models.workload import example_names, load_problem_input

READERS = {TARGET_FORMAT: target_from_dict, PROBLEM_FORMAT: problem_from_dict,
           SCHEDULE_FORMAT: schedule_from_dict}


def schema_errors(document: Any) -> list[str]:
    return [error.message for error in validator(document["format"]).iter_errors(document)]


def serial_schedule_document() -> dict[str, Any]:
    """The chain example run one op at a time (mode 0), every buffer at its own offset."""
    problem, target = load_problem_input("rmsnorm-gemm-chain-v75", None)
    ops, time = {}, 0
    for name, op in problem.ops.items():  # builder order is a topological order
        mode = op.modes[0]
        ops[name] = OpPlacement(0, time, time + mode.duration,
                                {lane: tuple(range(n)) for lane, n in mode.lanes.items()})
        time += mode.duration
    buffers, offset = {}, 0
    for name, buffer in problem.buffers.items():
        buffers[name] = BufferPlacement(offset, 0, time)
        offset += -(-buffer.size // 2048) * 2048
    return schedule_to_dict(Schedule(target, problem, ops, buffers, time))


#: Bundled examples whose tiled problems the schema test leaves out: the Llama decoder
#: layers are the Qwen layers' graph (same task kinds, same target) at 2-3x the ops, and
#: validating them took most of the test's time.
SAME_GRAPH_AS_QWEN = ("llama-3.2-1b-decode-v75", "llama-3.2-1b-prefill-v75")


def good_documents() -> list[dict[str, Any]]:
    documents = [target_to_dict(load_target(name)) for name in target_names()]
    documents += [problem_to_dict(load_problem_input(name, None)[0]) for name in example_names()
                  if name not in SAME_GRAPH_AS_QWEN]
    return [*documents, serial_schedule_document()]


def test_schemas_are_valid_draft_2020_12() -> None:
    for tag in SCHEMA_FILES:
        schema = load_schema(tag)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(schema)


def test_bundled_targets_examples_and_a_schedule_validate() -> None:
    for document in good_documents():
        assert schema_errors(document) == [], document.get("name")
        READERS[document["format"]](document)


def first_op(problem: dict[str, Any]) -> dict[str, Any]:
    return problem["ops"]["r0.ldX.b0"]


#: (document kind, what breaks, the mutation); each applied to a copy of a good document.
BREAKERS = [
    ("target", "unknown key", lambda d: d.update(colour="red")),
    ("target", "wrong format tag", lambda d: d.update(format="npu-thing/1")),
    ("target", "missing lanes", lambda d: d.pop("lanes")),
    ("target", "negative lane count", lambda d: d["lanes"].update(HMX=-1)),
    ("target", "capacity as text", lambda d: d["memories"]["VTCM"].update(capacity_bytes="8MB")),
    ("problem", "missing ops", lambda d: d.pop("ops")),
    ("problem", "negative buffer size", lambda d: d["buffers"]["r0.W"].update(size=-5)),
    ("problem", "unknown tensor role", lambda d: d["tensors"]["X"].update(role="scratch")),
    ("problem", "op without modes", lambda d: first_op(d).update(modes=[])),
    ("problem", "duration as float", lambda d: first_op(d)["modes"][0].update(duration=1.5)),
    ("problem", "tensor and buffer", lambda d: first_op(d)["writes"][0].update(tensor="X")),
    ("problem", "after edge of one op", lambda d: d.update(after=[["r0.ldW"]])),
    ("schedule", "missing makespan", lambda d: d.pop("makespan")),
    ("schedule", "bad embedded target", lambda d: d["target"]["lanes"].update(HVX="4")),
    ("schedule", "bad embedded problem", lambda d: first_op(d["problem"]).update(task=7)),
    ("schedule", "offset as float", lambda d: d["buffers"]["r0.W"].update(offset=1.0)),
    ("schedule", "meta not an object", lambda d: d["ops"]["r0.ldW"].update(meta=[])),
    ("schedule", "units not a list", lambda d: d["ops"]["r0.ldW"].update(units={"DMA": 0})),
]


@pytest.mark.parametrize(("kind", "what", "breaker"), BREAKERS,
                         ids=[f"{kind}: {what}" for kind, what, _ in BREAKERS])
def test_bad_documents_fail_schema_and_reader(kind: str, what: str, breaker: Any) -> None:
    good = {"target": target_to_dict(load_target("hexagon-v75")),
            "problem": problem_to_dict(load_problem_input("rmsnorm-gemm-chain-v75", None)[0]),
            "schedule": serial_schedule_document()}[kind]
    assert schema_errors(good) == []
    bad = copy.deepcopy(good)
    breaker(bad)
    assert list(validator(good["format"]).iter_errors(bad)), what
    with pytest.raises(InputError):
        READERS[good["format"]](bad)
