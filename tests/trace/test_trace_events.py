"""schedsearch.trace: the Chrome trace of a schedule, its counters and violation markers."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.cost import evaluate
from models.errors import InputError
from models.formats import Schedule, schedule_from_dict
from schedsearch.trace import (
    NO_LANE,
    Violation,
    read_violations,
    schedule_to_trace,
    step_series,
    violations_from_dict,
)
from tests.trace.trace_fixture import PEAK_DDR, PEAK_VTCM, SCHEDULE

LANES, TASKS, RESOURCES = 1, 2, 3


def thread_names(trace: dict[str, Any], pid: int) -> dict[int, str]:
    return {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid}


def events(trace: dict[str, Any], ph: str, pid: int | None = None) -> list[dict[str, Any]]:
    return [e for e in trace["traceEvents"]
            if e["ph"] == ph and (pid is None or e["pid"] == pid)]


def counter(trace: dict[str, Any], name: str) -> list[tuple[float, int]]:
    return [(e["ts"], next(iter(e["args"].values())))
            for e in events(trace, "C") if e["name"] == name]


def level_at(series: list[tuple[float, int]], time: float) -> int:
    """The counter's value at ``time``: that of the last sample at or before it."""
    return max(((t, v) for t, v in series if t <= time), default=(0, 0))[1]


# ----------------------------------------------------------------------------- shape
def test_every_event_has_the_keys_its_phase_requires(schedule: Schedule) -> None:
    violations = [Violation("ALIAS", "a0 and a1 overlap", ops=("v1",), buffers=("a0",))]
    trace = json.loads(json.dumps(schedule_to_trace(schedule, violations), allow_nan=False))
    assert set(trace) == {"traceEvents", "displayTimeUnit", "otherData"}
    assert trace["displayTimeUnit"] == "ns"
    required = {"X": {"dur", "cat", "args"}, "C": {"args"}, "i": {"s", "args"},
                "M": {"args"}}
    for event in trace["traceEvents"]:
        assert {"name", "ph", "ts", "pid", "tid"} <= set(event), event
        assert required[event["ph"]] <= set(event), event
        assert isinstance(event["ts"], int | float) and not isinstance(event["ts"], bool)
        if event["ph"] == "X":
            assert isinstance(event["dur"], int | float) and event["dur"] >= 0
        if event["ph"] == "C":
            assert all(isinstance(v, int) for v in event["args"].values())
        if event["ph"] == "i":
            assert event["s"] in ("t", "p", "g")
    assert {e["ph"] for e in trace["traceEvents"]} == {"M", "X", "C", "i"}


def test_lane_threads_are_named_by_unit_in_target_order(schedule: Schedule) -> None:
    trace = schedule_to_trace(schedule)
    names = thread_names(trace, LANES)
    sort_index = {e["tid"]: e["args"]["sort_index"] for e in events(trace, "M", LANES)
                  if e["name"] == "thread_sort_index"}
    ordered = [names[tid] for tid in sorted(names, key=sort_index.__getitem__)]
    assert ordered == ["HVX 0", "HVX 1", "DMA 0", "DMA 1"]
    processes = {e["pid"]: e["args"]["name"] for e in events(trace, "M")
                 if e["name"] == "process_name"}
    assert processes == {LANES: "lanes", TASKS: "tasks", RESOURCES: "memory and budgets"}


# ----------------------------------------------------------------------------- slices
def test_one_slice_per_op_and_unit_with_exact_times(schedule: Schedule) -> None:
    trace = schedule_to_trace(schedule)
    names = thread_names(trace, LANES)
    seen: dict[str, list[str]] = defaultdict(list)
    for event in events(trace, "X", LANES):
        placement = SCHEDULE["ops"][event["name"]]
        assert event["ts"] == pytest.approx(placement["start"] / 1000)
        assert event["dur"] == pytest.approx((placement["end"] - placement["start"]) / 1000)
        assert (event["args"]["start"], event["args"]["end"]) == (placement["start"],
                                                                  placement["end"])
        assert event["args"]["mode"] == placement["mode"]
        seen[event["name"]].append(names[event["tid"]])
    expected = {op: [f"{kind} {u}" for kind, units in p["units"].items() for u in units]
                for op, p in SCHEDULE["ops"].items()}
    assert dict(seen) == expected


def test_slice_args_carry_task_mode_draws_and_accesses(schedule: Schedule) -> None:
    trace = schedule_to_trace(schedule)
    v1 = next(e for e in events(trace, "X", LANES) if e["name"] == "v1")
    assert v1["args"]["task"] == "t1"
    assert v1["args"]["duration"] == 80
    assert v1["args"]["budgets"] == {"DDR_BW": 20}
    assert v1["args"]["units"] == ["HVX 0", "HVX 1"]
    assert v1["args"]["reads"] == ["a1 = A1"]
    assert v1["args"]["writes"] == ["B[16:32]"]
    st0 = next(e for e in events(trace, "X", LANES) if e["name"] == "st0")
    assert st0["args"]["reads"] == ["o0[0:2048] = R0"]


def test_task_threads_span_first_start_to_last_end(schedule: Schedule) -> None:
    trace = schedule_to_trace(schedule)
    names = thread_names(trace, TASKS)
    spans = {names[e["tid"]]: (e["args"]["start"], e["args"]["end"])
             for e in events(trace, "X", TASKS)}
    assert spans == {"t0": (0, 350), "t1": (250, 430)}
    t1 = next(e for e in events(trace, "X", TASKS) if e["name"] == "t1")
    assert (t1["ts"], t1["dur"]) == (pytest.approx(0.25), pytest.approx(0.18))


@pytest.mark.parametrize(("unit", "factor"), [("us", 1), ("ms", 1000), ("s", 10**6)])
def test_whole_microsecond_units_give_exact_integer_timestamps(
        schedule_doc: dict[str, Any], unit: str, factor: int) -> None:
    schedule_doc["target"]["time_unit"] = unit
    trace = schedule_to_trace(schedule_from_dict(schedule_doc))
    v0 = next(e for e in events(trace, "X", LANES) if e["name"] == "v0")
    assert (v0["ts"], v0["dur"]) == (100 * factor, 150 * factor)
    assert isinstance(v0["ts"], int)
    assert trace["displayTimeUnit"] == "ms"
    assert "note" not in trace["otherData"]


def test_an_unknown_time_unit_is_shown_one_tick_per_microsecond_and_said(
        schedule_doc: dict[str, Any]) -> None:
    schedule_doc["target"]["time_unit"] = "cycles"
    trace = schedule_to_trace(schedule_from_dict(schedule_doc))
    v0 = next(e for e in events(trace, "X", LANES) if e["name"] == "v0")
    assert (v0["ts"], v0["dur"]) == (100, 150)
    assert "cycles" in trace["otherData"]["note"]


# ----------------------------------------------------------------------------- counters
def brute_force_live(doc: dict[str, Any], time: int) -> int:
    """Oracle: the sizes of the buffers whose half-open window contains ``time``."""
    sizes = {name: b["size"] for name, b in doc["problem"]["buffers"].items()}
    return sum(sizes[name] for name, b in doc["buffers"].items()
               if b["alloc"] <= time < b["free"])


def test_live_bytes_counter_matches_a_brute_force_sweep(schedule: Schedule) -> None:
    series = counter(schedule_to_trace(schedule), "VTCM")
    boundaries = {t for b in SCHEDULE["buffers"].values() for t in (b["alloc"], b["free"])}
    for time in sorted(boundaries | {0, 50, 249, 251, 429, 10**6}):
        assert level_at(series, time / 1000) == brute_force_live(SCHEDULE, time), time
    # Frees at an instant come before allocations at it: a1 takes a0's place at 250.
    assert max(v for _, v in series) == PEAK_VTCM


def test_live_bytes_counter_peak_equals_the_cost_model(schedule: Schedule) -> None:
    series = counter(schedule_to_trace(schedule), "VTCM")
    assert max(v for _, v in series) == evaluate(schedule).peak_bytes["VTCM"]


def test_budget_draw_counter_follows_the_running_ops(schedule: Schedule) -> None:
    series = counter(schedule_to_trace(schedule), "DDR_BW")
    assert [(round(t * 1000), v) for t, v in series] == [
        (0, 30), (100, 0), (250, 60), (350, 20), (430, 0)]
    assert max(v for _, v in series) == PEAK_DDR
    assert all(e["args"].keys() == {"draw"} for e in events(schedule_to_trace(schedule), "C")
               if e["name"] == "DDR_BW")


windows = st.lists(st.tuples(st.integers(-5, 40), st.integers(-5, 40), st.integers(0, 9)),
                   max_size=12)


@given(windows)
def test_step_series_equals_the_sum_over_windows_at_every_instant(
        spans: list[tuple[int, int, int]]) -> None:
    series = step_series(spans)
    assert [t for t, _ in series] == sorted({t for t, _ in series})
    for time in range(-6, 42):
        expected = sum(amount for start, end, amount in spans if start <= time < end)
        assert level_at([(float(t), v) for t, v in series], time) == expected, time


# ----------------------------------------------------------------------------- violations
def test_a_violation_marks_every_unit_of_its_ops_and_the_memory(schedule: Schedule) -> None:
    violation = Violation("WRITE_RACE", "v1 races", ops=("v1",), buffers=("a1",), time=360)
    trace = schedule_to_trace(schedule, [violation])
    names = thread_names(trace, LANES)
    instants = events(trace, "i")
    on_lanes = sorted(names[e["tid"]] for e in instants if e["s"] == "t")
    assert on_lanes == ["HVX 0", "HVX 1"]
    assert [(e["pid"], e["s"]) for e in instants if e["s"] != "t"] == [(RESOURCES, "p")]
    for event in instants:
        assert event["name"] == "WRITE_RACE"
        assert event["ts"] == pytest.approx(0.36)
        assert event["args"] == {"code": "WRITE_RACE", "message": "v1 races", "ops": ["v1"],
                                 "buffers": ["a1"], "tensors": [], "time": 360}


def test_a_violation_without_time_sits_at_its_first_op(schedule: Schedule) -> None:
    trace = schedule_to_trace(schedule, [Violation("AFTER", "x", ops=("v1", "st0"))])
    assert sorted(e["ts"] for e in events(trace, "i")) == [pytest.approx(0.25)] * 3


def test_a_violation_with_nothing_to_point_at_is_global(schedule: Schedule) -> None:
    missing = Violation("OP_MISSING", "never scheduled", ops=("ghost",), tensors=("B",))
    trace = schedule_to_trace(schedule, [missing])
    assert [(e["s"], e["ts"]) for e in events(trace, "i")] == [("g", 0)]


# ----------------------------------------------------------------------------- illegal input
def test_an_illegal_schedule_still_shows_what_it_says(schedule_doc: dict[str, Any]) -> None:
    """Out-of-range units, an unknown op and a bad mode index are drawn, not dropped."""
    ops = schedule_doc["ops"]
    ops["v0"]["units"] = {"HVX": [5]}
    ops["v1"]["mode"] = 7
    ops["stray"] = {"mode": 0, "start": 10, "end": 5, "units": {}}
    trace = schedule_to_trace(schedule_from_dict(schedule_doc))
    names = thread_names(trace, LANES)
    assert list(names.values()) == ["HVX 0", "HVX 1", "HVX 5", "DMA 0", "DMA 1", NO_LANE]
    slices = {(e["name"], names[e["tid"]]): e for e in events(trace, "X", LANES)}
    assert ("v0", "HVX 5") in slices
    assert slices[("stray", NO_LANE)]["dur"] == 0
    assert slices[("stray", NO_LANE)]["args"]["task"] is None
    assert slices[("v1", "HVX 0")]["args"]["duration"] is None
    # v1's draw is unknown with mode 7, so the counter no longer shows it.
    assert max(v for _, v in counter(trace, "DDR_BW")) == 60


# ----------------------------------------------------------------------------- report reading
def test_a_checker_report_reads_and_passes_unknown_keys_over(tmp_path: Any) -> None:
    report = {"legal": False, "stats": {"ops": 5},
              "violations": [{"code": "ALIAS", "message": "m", "ops": [], "buffers": ["a0"],
                              "tensors": [], "time": 100, "extra": 1},
                             {"code": "MAKESPAN", "message": "n", "time": None}]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    assert read_violations(path) == [Violation("ALIAS", "m", buffers=("a0",), time=100),
                                     Violation("MAKESPAN", "n")]


@pytest.mark.parametrize(("report", "where"), [
    ([], "$"),
    ({"legal": True}, "$"),
    ({"violations": {}}, "$.violations"),
    ({"violations": [3]}, "$.violations[0]"),
    ({"violations": [{"message": "m"}]}, "$.violations[0].code"),
    ({"violations": [{"code": "X", "message": 1}]}, "$.violations[0].message"),
    ({"violations": [{"code": "X", "message": "m", "ops": "v1"}]}, "$.violations[0].ops"),
    ({"violations": [{"code": "X", "message": "m", "buffers": [1]}]},
     "$.violations[0].buffers"),
    ({"violations": [{"code": "X", "message": "m", "time": 1.5}]}, "$.violations[0].time"),
    ({"violations": [{"code": "X", "message": "m", "time": True}]}, "$.violations[0].time"),
])
def test_a_malformed_report_is_an_input_error_naming_file_and_path(
        report: Any, where: str) -> None:
    with pytest.raises(InputError) as caught:
        violations_from_dict(report, "report.json")
    assert (caught.value.source, caught.value.path) == ("report.json", where)


def test_a_report_that_is_not_json_names_its_file(tmp_path: Any) -> None:
    path = tmp_path / "report.json"
    path.write_text("{not json")
    with pytest.raises(InputError) as caught:
        read_violations(path)
    assert caught.value.source == str(path)


# ----------------------------------------------------------------------------- any readable file
@st.composite
def scrambled_schedules(draw: st.DrawFn) -> dict[str, Any]:
    """The fixture with every op and buffer placement redrawn: mostly illegal schedules
    (overlaps, empty or negative windows, bad modes, units out of range) that still read."""
    doc = json.loads(json.dumps(SCHEDULE))
    for placement in doc["ops"].values():
        start = draw(st.integers(-50, 500))
        placement.update(mode=draw(st.integers(0, 2)), start=start,
                         end=start + draw(st.integers(-10, 200)),
                         units={kind: draw(st.lists(st.integers(0, 3), max_size=3))
                                for kind in draw(st.sets(st.sampled_from(["HVX", "DMA"])))})
    for placement in doc["buffers"].values():
        alloc = draw(st.integers(-50, 500))
        placement.update(offset=draw(st.integers(0, 5000)), alloc=alloc,
                         free=alloc + draw(st.integers(-10, 300)))
    return doc


@given(scrambled_schedules())
def test_any_readable_schedule_traces_completely(doc: dict[str, Any]) -> None:
    trace = schedule_to_trace(schedule_from_dict(doc))
    json.dumps(trace, allow_nan=False)
    names = thread_names(trace, LANES)
    seen = defaultdict(set)
    for event in events(trace, "X", LANES):
        seen[event["name"]].add(names[event["tid"]])
        assert event["dur"] >= 0
    for op, placement in doc["ops"].items():
        held = {f"{kind} {u}" for kind, units in placement["units"].items() for u in units}
        assert seen[op] == (held or {NO_LANE}), op
    series = counter(trace, "VTCM")
    for buffer in doc["buffers"].values():
        for time in (buffer["alloc"], buffer["free"]):
            assert level_at(series, time / 1000) == brute_force_live(doc, time), time
