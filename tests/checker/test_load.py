"""Strict reading: unusable documents raise UnusableInput, faults inside are FORMAT
violations naming the JSON path, and nothing ever escapes as another exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import checker
from checker.load import UnusableInput, build_model, parse_json, read_json
from tests.fuzz._budget import examples

from .schedules import legal


def messages(doc: dict[str, Any]) -> list[str]:
    """The FORMAT messages of a document's report (other codes may follow from them)."""
    report = checker.verify(doc)
    return [v.message for v in report.violations if v.code == "FORMAT"]


# ----------------------------------------------------------------------------- parsing
@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("   \n", "empty"),
    ("{", "not valid JSON"),
    ("not json", "not valid JSON"),
    ('{"a": NaN}', "NaN is not a JSON number"),
    ('{"a": Infinity}', "Infinity is not a JSON number"),
    ('{"a": -Infinity}', "-Infinity is not a JSON number"),
    ('{"a": 1e999}', "out of range"),
    ('{"a": 1, "a": 2}', "duplicate key"),
    ("[" * 100_000 + "]" * 100_000, "nesting too deep"),
    ("1" * 5000, "not usable JSON"),
])
def test_unparseable_text_is_unusable(text: str, fragment: str) -> None:
    with pytest.raises(UnusableInput) as caught:
        parse_json(text, "f.json")
    assert fragment in str(caught.value)
    assert str(caught.value).startswith("f.json: $: JSON: ")


def test_bytes_must_be_utf8() -> None:
    with pytest.raises(UnusableInput, match="not UTF-8"):
        parse_json(b'{"a": "\xff"}', "f.json")


def test_floats_are_fine_where_free_form() -> None:
    assert parse_json('{"wall_s": 0.25}') == {"wall_s": 0.25}


def test_oversized_files_are_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as stream:  # sparse: 200 MB on paper, nothing on disk
        stream.truncate(200 * 1024 * 1024)
    with pytest.raises(UnusableInput, match="larger than the limit") as caught:
        read_json(big)
    assert caught.value.rule == "SIZE"


def test_size_limit_is_a_parameter(tmp_path: Path) -> None:
    file = tmp_path / "s.json"
    file.write_text(json.dumps(legal()))
    with pytest.raises(UnusableInput, match="larger than the limit of 100 bytes"):
        read_json(file, limit=100)


def test_missing_file_and_directory_are_unusable(tmp_path: Path) -> None:
    with pytest.raises(UnusableInput, match="cannot read"):
        read_json(tmp_path / "absent.json")
    with pytest.raises(UnusableInput, match="is a directory"):
        read_json(tmp_path)


# ----------------------------------------------------------------------------- skeleton
@pytest.mark.parametrize("document, path", [
    ([], "$"),
    ("npu-schedule/1", "$"),
    ({"format": "npu-problem/1"}, "$.format"),
    ({}, "$.format"),
])
def test_wrong_document_is_unusable(document: Any, path: str) -> None:
    with pytest.raises(UnusableInput) as caught:
        build_model(document)
    assert caught.value.path == path


def test_embedded_documents_need_their_tags() -> None:
    doc = legal()
    doc["target"]["format"] = "npu-target/2"
    with pytest.raises(UnusableInput) as caught:
        checker.verify(doc)
    assert caught.value.path == "$.target.format"
    doc = legal()
    doc["problem"] = []
    with pytest.raises(UnusableInput, match="embedded problem"):
        checker.verify(doc)


# ----------------------------------------------------------------------------- FORMAT
def _edit(change) -> dict[str, Any]:
    doc = legal()
    change(doc)
    return doc


@pytest.mark.parametrize("change, expected", [
    (lambda d: d.pop("makespan"), "$: missing required key 'makespan'"),
    (lambda d: d["problem"]["ops"]["ld"].pop("modes"),
     "$.problem.ops.ld: missing required key 'modes'"),
    (lambda d: d["ops"]["mm0"].update(start="10"),
     "$.ops.mm0.start: expected an integer, got a string"),
    (lambda d: d["ops"]["mm0"].update(end=30.0),
     "$.ops.mm0.end: expected an integer, got a number"),
    (lambda d: d["ops"]["mm0"].update(mode=True),
     "$.ops.mm0.mode: expected an integer, got a boolean"),
    (lambda d: d["buffers"]["bA"].update(free=2**63),
     "$.buffers.bA.free: integer does not fit in 64 bits"),
    (lambda d: d["ops"]["ld"].update(units={"NPU": [0]}),
     "$.ops.ld.units.NPU: unknown lane kind 'NPU'"),
    (lambda d: d["problem"]["ops"]["ld"]["modes"][0]["lanes"].update(GPU=1),
     "$.problem.ops.ld.modes[0].lanes.GPU: unknown lane kind 'GPU'"),
    (lambda d: d["problem"]["ops"]["ld"]["modes"][0]["budgets"].update(PCIE=1),
     "$.problem.ops.ld.modes[0].budgets.PCIE: unknown budget 'PCIE'"),
    (lambda d: d["problem"]["ops"]["ld"]["reads"][0].update(tensor="Z"),
     "$.problem.ops.ld.reads[0].tensor: unknown tensor 'Z'"),
    (lambda d: d["problem"]["ops"]["mm0"]["reads"][0].update(buffer="bZ"),
     "$.problem.ops.mm0.reads[0].buffer: unknown buffer 'bZ'"),
    (lambda d: d["problem"]["ops"]["mm0"].update(task="g9"),
     "$.problem.ops.mm0.task: unknown task 'g9'"),
    (lambda d: d["problem"]["buffers"]["bA"].update(memory="L2"),
     "$.problem.buffers.bA.memory: unknown memory 'L2'"),
    (lambda d: d["problem"]["ops"]["ld"]["reads"][0].update(box=[[0, 4], [0, 9]]),
     "$.problem.ops.ld.reads[0].box[1]: [0, 9) lies outside tensor 'A' extent 8"),
    (lambda d: d["problem"]["ops"]["ld"]["reads"][0].update(box=[[0, 4], [0, 8], [0, 1]]),
     "$.problem.ops.ld.reads[0].box: box has rank 3 but tensor 'A' has rank 2"),
    (lambda d: d["problem"]["ops"]["ld"]["reads"][0].update(box=[[4, 0], [0, 8]]),
     "$.problem.ops.ld.reads[0].box[0]: interval [4, 0) is empty (need lo < hi)"),
    (lambda d: d["problem"]["ops"]["ld"]["reads"][0].update(value="A"),
     "$.problem.ops.ld.reads[0].value: key 'value' does not belong to a tensor access"),
    (lambda d: d["problem"]["ops"]["ld"]["reads"][0].update(buffer="bA"),
     "$.problem.ops.ld.reads[0]: an access names exactly one of 'tensor' or 'buffer'"),
    (lambda d: d["problem"]["ops"]["ld"]["writes"][0].update(value=None),
     "$.problem.ops.ld.writes[0].value: expected a non-empty string, got null"),
    (lambda d: d["problem"]["tasks"]["g0"]["outputs"].update(Q=[[0, 1]]),
     "$.problem.tasks.g0.outputs.Q: unknown tensor 'Q'"),
    (lambda d: d["problem"]["tensors"]["A"].update(role="scratch"),
     "$.problem.tensors.A.role: role must be one of input, output, temp, got \"scratch\""),
    (lambda d: d["problem"]["tensors"]["A"].update(shape=[4, -8]),
     "$.problem.tensors.A.shape[1]: must be >= 1, got -8"),
    (lambda d: d["target"]["lanes"].update(HMX=-1), "$.target.lanes.HMX: must be >= 1, got -1"),
    (lambda d: d["target"].pop("lanes"), "$.target: missing required key 'lanes'"),
    (lambda d: d["problem"]["ops"].update({"": _copy_op(d)}), "$.problem.ops[\"\"]: names "
     "must be non-empty strings"),
    (lambda d: d.update(meta=[]), "$.meta: expected an object, got an array"),
    (lambda d: d["problem"]["after"].append(["ld"]), "$.problem.after[4]: an edge is [pred, succ]"),
    (lambda d: d["buffers"].update(bZ={"offset": 0, "alloc": 0, "free": 1}),
     "$.buffers.bZ: buffer 'bZ' is placed but the problem has no such buffer"),
    (lambda d: d["problem"]["ops"]["mm0"].update(modes={"duration": 20}),
     "$.problem.ops.mm0.modes: expected an array, got an object"),
    (lambda d: d["problem"]["ops"]["ld"]["modes"][0].update(duration=[[[[[[1]]]]]]),
     "$.problem.ops.ld.modes[0].duration: expected an integer, got an array"),
    (lambda d: d["ops"].update({"g.0": {"mode": 0, "start": 0}}),
     "$.ops[\"g.0\"]: missing required key 'end'"),
])
def test_format_violations_name_the_path(change, expected: str) -> None:
    assert expected in messages(_edit(change))


def _copy_op(doc: dict[str, Any]) -> dict[str, Any]:
    return dict(doc["problem"]["ops"]["ld"])


def test_format_violation_names_the_elements() -> None:
    doc = legal()
    doc["problem"]["ops"]["mm0"]["reads"][0]["bytes"] = [0, 4097]
    [violation] = checker.verify(doc).violations
    assert violation.ops == ("mm0",) and violation.buffers == ("bA",)
    assert violation.time is None


def test_rules_that_need_a_broken_section_are_skipped() -> None:
    """A broken op cannot take part in a partition: COVERAGE and OUTPUT stand aside
    instead of reporting the gap it leaves; conflict rules still run on the rest."""
    doc = legal()
    doc["problem"]["ops"]["mm1"]["space"] = "everything"
    doc["ops"]["mm0"]["end"] = 25
    report = checker.verify(doc)
    assert report.codes() == {"FORMAT", "DURATION"}
    assert {"COVERAGE", "OUTPUT", "STALE_READ"} <= set(report.stats["skipped_rules"])


def test_negative_times_are_rule_violations_not_format() -> None:
    doc = legal()
    doc["buffers"]["bA"]["alloc"] = -1
    doc["buffers"]["bA"]["offset"] = -2048
    assert checker.verify(doc).codes() == {"LIFETIME", "MEM_RANGE"}


def test_defaults_and_meta_everywhere() -> None:
    """``bytes`` defaults to the whole buffer, ``align``/``alignment_bytes`` to 1, and
    ``meta`` objects are accepted (and ignored) on every object."""
    doc = legal()
    del doc["problem"]["buffers"]["bA"]["align"]
    del doc["target"]["memories"]["VTCM"]["alignment_bytes"]
    doc["problem"]["ops"]["ld"]["meta"] = {"x": [1.5]}
    doc["problem"]["ops"]["ld"]["modes"][0]["meta"] = {}
    doc["problem"]["ops"]["ld"]["reads"][0]["meta"] = {}
    doc["ops"]["ld"]["meta"] = {"note": None}
    doc["buffers"]["bA"]["meta"] = {}
    doc["problem"]["tensors"]["A"]["meta"] = {}
    assert checker.verify(doc).legal


# ----------------------------------------------------------------------------- junk
_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=4) | st.sampled_from(["ld", "bA", "A", "g0", "VTCM", "HMX", "DDR_BW"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=8)


def _nodes(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _nodes(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _nodes(value, (*path, i))
    return found


@given(data=st.data())
def test_junk_anywhere_gives_a_report_or_unusable_input(data: st.DataObject) -> None:
    """Replace any node of a legal schedule with junk: never another exception."""
    doc = legal()
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_nodes(doc)[1:]))
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = data.draw(_JUNK)
    try:
        report = checker.verify(doc)
    except UnusableInput:
        return
    assert all(v.code in checker.CODES for v in report.violations)


# ----------------------------------------------------------------------------- boxes
_EDGES = st.sampled_from([-1, 0, 10, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1])
_JUNK_PART = st.one_of(_EDGES, st.sampled_from([True, False, 0.5, 1.0, "1", None]),
                       st.lists(st.integers(0, 2), max_size=2))
_JUNK_DIM = st.one_of(st.lists(_JUNK_PART, max_size=3), st.just("01"),
                      st.dictionaries(st.sampled_from("ab"), st.integers(0, 3), max_size=2),
                      _JUNK_PART)


def _spoiled_box(data: st.DataObject, shape: list[int]) -> Any:
    """A well-formed box inside ``shape``, then (mostly) one thing spoiled."""
    box: list[Any] = []
    for extent in shape:
        lo = data.draw(st.integers(0, extent - 1))
        box.append([lo, data.draw(st.integers(lo + 1, extent))])
    spoil = data.draw(st.sampled_from(["none", "part", "edge", "empty", "dim", "rank",
                                       "whole"]))
    if spoil == "edge" and box:
        box[data.draw(st.integers(0, len(box) - 1))][data.draw(st.integers(0, 1))] = \
            data.draw(_EDGES)
    elif spoil == "empty" and box:
        dim = box[data.draw(st.integers(0, len(box) - 1))]
        dim[1] = dim[0]
    elif spoil == "part" and box:
        dim = data.draw(st.integers(0, len(box) - 1))
        box[dim][data.draw(st.integers(0, 1))] = data.draw(_JUNK_PART)
    elif spoil == "dim" and box:
        box[data.draw(st.integers(0, len(box) - 1))] = data.draw(_JUNK_DIM)
    elif spoil == "rank":
        box = box[1:] if box and data.draw(st.booleans()) else [*box, [0, 1]]
    elif spoil == "whole":
        box = data.draw(st.one_of(_JUNK_PART, st.just({})))
    return box


def _readers_agree(value: Any, shape: list[int], inside: bool) -> None:
    """The fast reader takes ``value`` exactly when the path-building one finds no fault
    (as a box of any rank, or inside a tensor of ``shape``), and keeps the same list."""
    from checker.load import _Bad, _Builder, _fast_box
    from checker.model import Tensor

    builder = _Builder()
    builder.model.tensors["T"] = Tensor(tuple(shape), "output")
    try:
        slow = builder.checked_tensor_box("ops", "T", value, "$.b") if inside else \
            builder.checked_box("ops", value, "$.b")
    except _Bad:
        slow = None
    fast = _fast_box(value, tuple(shape) if inside else None)
    assert fast is slow
    assert (fast is None) == bool(builder.violations)
    assert fast is None or fast is value


@settings(max_examples=examples(20))  # cheap: a few microseconds per example
@given(data=st.data(), shape=st.lists(st.integers(1, 9), max_size=4), inside=st.booleans())
def test_fast_box_reader_agrees_with_the_path_building_one(data: st.DataObject,
                                                           shape: list[int],
                                                           inside: bool) -> None:
    _readers_agree(_spoiled_box(data, shape), shape, inside)


@pytest.mark.parametrize("value", [
    [[3, 2**63 - 1]], [[3, 2**63]], [[-(2**63), 0]], [[-(2**63) - 1, 0]], [[0, 1.5]],
    [[True, 2]], [[0, True]], [[2, 2]], [[0, 1], [0, 1, 2]], [[0, 1], [5]], [[0, 1], 7],
    [[0, 1], "01"], [{"a": 0, "b": 1}], [], [[0, 8], [0, 9]], [[0, 8]], [[0, 8], [0, 9], [0, 1]],
])
@pytest.mark.parametrize("inside", [False, True])
def test_fast_box_reader_at_the_edges(value: Any, inside: bool) -> None:
    _readers_agree(value, [8, 9], inside)


def test_the_model_keeps_the_documents_boxes() -> None:
    """No box is copied (a box of rank 64 as 64 tuples was most of the memory)."""
    doc = legal()
    model, violations = build_model(doc)
    assert not violations
    ld = doc["problem"]["ops"]["ld"]
    assert model.ops["ld"].tensor_reads[0].box is ld["reads"][0]["box"]
    assert model.tasks["g0"].space is doc["problem"]["tasks"]["g0"]["space"]
