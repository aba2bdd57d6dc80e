"""Reading measurements: the CSV's rows and refusals, a trace of a schedule's run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.errors import InputError
from models.formats import Schedule
from schedsearch.calibrate.measurements import read_csv, read_trace
from schedsearch.trace import schedule_to_trace

HEADER = "kind,dtype,shape,units,mode,layout,duration\n"


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.csv"
    path.write_text(text)
    return path


def test_rows_comments_defaults_and_extra_columns(tmp_path: Path) -> None:
    path = _csv(tmp_path, "# synthetic\nkind,dtype,shape,duration,device\n"
                          "matmul,f16,64x32x128,100.5,phone\n"
                          "# a comment between rows\n"
                          "silu,i8,16X256,40,phone\n")
    first, second = read_csv(path)
    assert (first.kind, first.dims, first.units, first.mode, first.duration) == \
        ("matmul", (64, 32, 128), 1, 0, 100.5)
    assert first.origin == f"{path}:3"
    assert (second.kind, second.dtype, second.dims) == ("silu", "i8", (16, 256))
    assert second.origin == f"{path}:5"


@pytest.mark.parametrize(("text", "where", "words"), [
    ("kind,dtype,shape\nmatmul,f16,1x1x1\n", "line 1", "missing column(s) duration"),
    (HEADER + "matmul,f16,64x64x64,,,,-3\n", "line 2, column 'duration'", "above 0"),
    (HEADER + "matmul,f16,64x64x64,,,,nan\n", "line 2, column 'duration'", "above 0"),
    (HEADER + "matmul,f16,64x64x64,,,,\n", "line 2, column 'duration'", "a number"),
    (HEADER + "matmul,f16,64x64x64,,,,1\nconv,f16,1x1,,,,1\n", "line 3, column 'kind'",
     "unknown op kind 'conv'"),
    (HEADER + "matmul,f64,64x64x64,,,,1\n", "line 2, column 'dtype'", "unknown element"),
    (HEADER + "matmul,f16,64x64,,,,1\n", "line 2, column 'shape'", "MxNxK"),
    (HEADER + "load,f16,64x0,,,,1\n", "line 2, column 'shape'", "at least 1"),
    (HEADER + "silu,f16,64x64,0,,,1\n", "line 2, column 'units'", "at least 1"),
    (HEADER, "$", "no measurement rows"),
])
def test_a_bad_row_names_the_file_line_column_and_rule(tmp_path: Path, text: str,
                                                       where: str, words: str) -> None:
    path = _csv(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read_csv(path)
    error = caught.value
    assert (error.source, error.path, error.rule) == (str(path), where, "MEASUREMENT")
    assert words in error.message


def _write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    return path


def test_a_trace_schedsearch_wrote_gives_each_op_its_window(tmp_path: Path,
                                                            schedule: Schedule) -> None:
    run = read_trace(_write(tmp_path, schedule_to_trace(schedule)), schedule)
    assert set(run.windows) == set(schedule.ops)
    for name, p in schedule.ops.items():
        assert run.windows[name] == pytest.approx((p.start, p.end), rel=1e-12)
    assert run.makespan == pytest.approx(schedule.makespan, rel=1e-12)


def test_a_perfetto_style_trace_with_begin_end_pairs_and_other_slices(
        tmp_path: Path, schedule: Schedule) -> None:
    """Real exports: B/E pairs, microsecond clocks from anywhere, runtime slices of other
    categories, a bare event array."""
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "npu"}},
              {"ph": "i", "name": "marker", "ts": 0, "pid": 1, "tid": 1}]
    for i, (name, p) in enumerate(schedule.ops.items()):
        events.append({"ph": "B", "name": name, "ts": 5000 + p.start / 1000, "pid": 1,
                       "tid": i})
        events.append({"ph": "E", "ts": 5000 + p.end / 1000, "pid": 1, "tid": i})
    events.append({"ph": "X", "name": "g0", "cat": "task", "ts": 5000, "dur": 1,
                   "pid": 2, "tid": 1})
    # a task's summary as a B/E pair around the first op's pair, on its thread
    events.insert(2, {"ph": "B", "name": "r0", "cat": "task", "ts": 4000, "pid": 1, "tid": 0})
    events.insert(5, {"ph": "E", "ts": 9000, "pid": 1, "tid": 0})
    run = read_trace(_write(tmp_path, events), schedule)
    for name, p in schedule.ops.items():
        start, end = run.windows[name]
        assert end - start == pytest.approx(p.end - p.start, abs=1e-6)
    assert run.makespan == pytest.approx(schedule.makespan - min(
        p.start for p in schedule.ops.values()), abs=1e-6)


def test_beside_slices_marked_op_a_runtime_may_have_others(tmp_path: Path,
                                                          schedule: Schedule) -> None:
    trace = schedule_to_trace(schedule)
    trace["traceEvents"] += [
        {"ph": "X", "name": "FastRPC call", "cat": "runtime", "ts": 0, "dur": 5, "pid": 9,
         "tid": 1},
        {"ph": "B", "name": "graph execute", "ts": 0, "pid": 9, "tid": 2},
        {"ph": "E", "ts": 50, "pid": 9, "tid": 2}]
    run = read_trace(_write(tmp_path, trace), schedule)
    assert set(run.windows) == set(schedule.ops)
    unmarked = [{k: v for k, v in e.items() if k != "cat"} for e in trace["traceEvents"]
                if e.get("cat") not in ("task", "counter")]
    with pytest.raises(InputError, match="'FastRPC call' is not in the schedule"):
        read_trace(_write(tmp_path, unmarked), schedule)


def _trace_with(schedule: Schedule, change) -> dict:
    trace = schedule_to_trace(schedule)
    slices = [e for e in trace["traceEvents"] if e.get("cat") == "op"]
    change(trace, slices)
    return trace


@pytest.mark.parametrize(("change", "words"), [
    (lambda t, s: s[0].update(name="nope.ld.0"), "'nope.ld.0' is not in the schedule"),
    (lambda t, s: s[0].update(dur=-1), "negative duration"),
    (lambda t, s: s[0].update(ts=float("nan")), "finite number"),
    (lambda t, s: t["traceEvents"].remove(s[-1]), "never appear in the trace"),
    (lambda t, s: t["otherData"].update(problem="another"), "a trace of problem 'another'"),
    (lambda t, s: t.pop("traceEvents"), "traceEvents"),
])
def test_a_trace_of_another_schedule_or_broken_is_refused(tmp_path: Path, schedule: Schedule,
                                                          change, words: str) -> None:
    trace = _trace_with(schedule, change)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(trace, allow_nan=True))
    with pytest.raises(InputError) as caught:
        read_trace(path, schedule)
    assert caught.value.rule in ("TRACE", "JSON")
    assert words in caught.value.message or caught.value.rule == "JSON"
