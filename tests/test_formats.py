"""The three format readers: round trips, and one precise error per kind of bad input."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from models.errors import InputError
from models.files import write_json_atomic
from models.formats import (
    MAX_LANE_UNITS,
    problem_from_dict,
    problem_to_dict,
    read_schedule,
    schedule_from_dict,
    schedule_to_dict,
    target_from_dict,
    target_to_dict,
)

TARGET: dict[str, Any] = {
    "format": "npu-target/1", "name": "tiny", "time_unit": "ns",
    "lanes": {"HMX": 1, "DMA": 2}, "budgets": {"DDR_BW": 60},
    "memories": {"VTCM": {"capacity_bytes": 8192, "alignment_bytes": 2048}},
    "costs": {"note": "free-form"}}

PROBLEM: dict[str, Any] = {
    "format": "npu-problem/1", "name": "load+mm",
    "tensors": {"A": {"shape": [4, 4], "dtype": "f16", "role": "input"},
                "C": {"shape": [4, 4], "dtype": "f16", "role": "output"}},
    "tasks": {"g0": {"kind": "gemm", "space": [[0, 4], [0, 4]],
                     "outputs": {"C": [[0, 4], [0, 4]]}, "params": {"M": 4}}},
    "buffers": {"g0.A": {"memory": "VTCM", "size": 32, "align": 2048}},
    "ops": {
        "g0.ld": {"task": "g0",
                  "modes": [{"duration": 10, "lanes": {"DMA": 1}, "budgets": {"DDR_BW": 40}}],
                  "reads": [{"tensor": "A", "box": [[0, 4], [0, 4]]}],
                  "writes": [{"buffer": "g0.A", "value": "A"}]},
        "g0.mm": {"task": "g0", "space": [[0, 4], [0, 4]],
                  "modes": [{"duration": 20, "lanes": {"HMX": 1}}],
                  "reads": [{"buffer": "g0.A", "bytes": [0, 32], "value": "A"}],
                  "writes": [{"tensor": "C", "box": [[0, 4], [0, 4]]}],
                  "meta": {"why": "labels are free-form"}}},
    "after": [["g0.ld", "g0.mm"]]}

SCHEDULE: dict[str, Any] = {
    "format": "npu-schedule/1", "target": TARGET, "problem": PROBLEM,
    "ops": {"g0.ld": {"mode": 0, "start": 0, "end": 10, "units": {"DMA": [1]}},
            "g0.mm": {"mode": 0, "start": 10, "end": 30, "units": {"HMX": [0]}}},
    "buffers": {"g0.A": {"offset": 0, "alloc": 0, "free": 30}},
    "makespan": 30, "meta": {"solver": "hand"}}


def test_target_round_trip() -> None:
    assert target_to_dict(target_from_dict(TARGET)) == TARGET


def test_problem_round_trip() -> None:
    assert problem_to_dict(problem_from_dict(PROBLEM)) == PROBLEM


def test_schedule_round_trip_through_a_file(tmp_path) -> None:
    path = tmp_path / "s.json"
    write_json_atomic(path, schedule_to_dict(schedule_from_dict(SCHEDULE)))
    assert schedule_to_dict(read_schedule(path)) == SCHEDULE
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def _broken(document: dict[str, Any], edit) -> dict[str, Any]:
    broken = copy.deepcopy(document)
    edit(broken)
    return broken


@pytest.mark.parametrize(("edit", "path", "fragment"), [
    (lambda d: d.pop("ops"), "$", "missing required key 'ops'"),
    (lambda d: d.update(extra=1), "$.extra", "unknown key"),
    (lambda d: d["buffers"]["g0.A"].update(size=-1), '$.buffers["g0.A"].size', ">= 1"),
    (lambda d: d["buffers"]["g0.A"].update(size="32"), '$.buffers["g0.A"].size',
     "expected an integer"),
    (lambda d: d["buffers"]["g0.A"].update(size=True), '$.buffers["g0.A"].size',
     "expected an integer"),
    (lambda d: d["buffers"]["g0.A"].update(size=2**64), '$.buffers["g0.A"].size',
     "64 bits"),
    (lambda d: d["ops"]["g0.mm"]["modes"][0].update(lanes={"NPU": 1}),
     '$.ops["g0.mm"].modes[0].lanes.NPU', "unknown lane kind"),
    (lambda d: d["buffers"]["g0.A"].update(memory="L2"), '$.buffers["g0.A"].memory',
     "unknown memory"),
    (lambda d: d["ops"]["g0.ld"]["reads"][0].update(box=[[0, 4]]),
     '$.ops["g0.ld"].reads[0].box', "rank"),
    (lambda d: d["ops"]["g0.ld"]["reads"][0].update(box=[[0, 4], [0, 5]]),
     '$.ops["g0.ld"].reads[0].box[1]', "extent"),
    (lambda d: d["ops"]["g0.mm"]["reads"][0].update(bytes=[0, 33]),
     '$.ops["g0.mm"].reads[0].bytes', "inside buffer"),
    (lambda d: d["after"].append(["g0.ld", "g0.nope"]), "$.after[1][1]", "unknown op"),
    (lambda d: d["ops"]["g0.mm"].update(modes=[]), '$.ops["g0.mm"].modes', "at least one"),
    (lambda d: d["tensors"]["A"].update(role="weights"), "$.tensors.A.role", "role"),
])
def test_problem_errors_name_the_json_path(edit, path: str, fragment: str) -> None:
    with pytest.raises(InputError) as caught:
        problem_from_dict(_broken(PROBLEM, edit), "p.json", target_from_dict(TARGET))
    assert caught.value.path == path
    assert fragment in caught.value.message
    assert str(caught.value).startswith(f"p.json: {path}: FORMAT: ")


def test_errors_inside_an_embedded_problem_are_rooted_under_it() -> None:
    broken = _broken(SCHEDULE, lambda d: d["problem"]["buffers"]["g0.A"].update(size=0))
    with pytest.raises(InputError) as caught:
        schedule_from_dict(broken, "s.json")
    assert caught.value.path == '$.problem.buffers["g0.A"].size'


def test_wrong_format_tag_is_named() -> None:
    with pytest.raises(InputError) as caught:
        target_from_dict({**TARGET, "format": "npu-target/2"})
    assert caught.value.path == "$.format"


def test_unknown_units_lane_in_a_schedule() -> None:
    broken = _broken(SCHEDULE, lambda d: d["ops"]["g0.mm"].update(units={"GPU": [0]}))
    with pytest.raises(InputError) as caught:
        schedule_from_dict(broken)
    assert caught.value.path == '$.ops["g0.mm"].units.GPU'


def test_more_lane_units_than_the_tool_takes_is_one_size_error_at_the_lane() -> None:
    """A lane of 2^63 - 1 units (found by the long fuzzing profile) was a MemoryError in
    the search; now the reader refuses it, in a target and in a schedule's target."""
    huge = {**TARGET, "lanes": {"HMX": 1, "DMA": 2**63 - 1}}
    with pytest.raises(InputError) as caught:
        target_from_dict(huge, "t.json")
    assert (caught.value.rule, caught.value.path) == ("SIZE", "$.lanes.DMA")
    assert f"{MAX_LANE_UNITS:,}" in str(caught.value)
    with pytest.raises(InputError) as caught:
        schedule_from_dict({**SCHEDULE, "target": huge}, "s.json")
    assert (caught.value.rule, caught.value.path) == ("SIZE", "$.target.lanes.DMA")
    limit = target_from_dict({**TARGET, "lanes": {"HMX": 1, "DMA": MAX_LANE_UNITS}})
    assert limit.lanes["DMA"] == MAX_LANE_UNITS
