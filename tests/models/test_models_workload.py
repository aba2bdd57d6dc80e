"""Workload files: bundled examples, strict reading, tiling, chains, scaling, inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker import verify
from models.errors import InputError
from models.files import write_json_atomic
from models.formats import (
    BufferPlacement,
    OpPlacement,
    Problem,
    Schedule,
    Target,
    problem_to_dict,
    schedule_to_dict,
)
from models.targets import load_target
from models.workload import (
    example_names,
    load_problem_input,
    load_workload,
    scaled,
    tile,
    workload_from_dict,
)
from tests.models.tiling_checks import assert_well_tiled

PAIR = {"name": "w", "target": "hexagon-v75", "tasks": [
    {"name": "g0", "kind": "gemm", "M": 128, "N": 128, "K": 128},
    {"name": "r0", "kind": "rmsnorm", "rows": 64, "cols": 128}]}


def error_of(document: object) -> InputError:
    with pytest.raises(InputError) as caught:
        workload_from_dict(document, "w.json")
    return caught.value


def test_bundled_examples() -> None:
    assert example_names() == sorted(example_names())
    assert {"gemm-rmsnorm-ascend", "gemm-rmsnorm-copy-v75", "gemm-rmsnorm-v75",
            "llama-3.2-1b-decode-v75", "llama-3.2-1b-prefill-v75", "qwen2.5-0.5b-decode-v75",
            "qwen2.5-0.5b-prefill-v75", "rmsnorm-gemm-chain-v75"} <= set(example_names())
    for name in example_names():
        workload = load_workload(name)
        problem = tile(workload, load_target(workload.target))
        if len(problem.ops) <= 200:  # the decoder layers' tensors are too large for these
            assert_well_tiled(problem)  # dense checks; the checker judges them (below)
        assert problem.meta == {"target": workload.target, "workload": name}
        assert 60 <= len(problem.ops) <= 2000


def test_the_chain_orders_gemm_loads_after_the_stores_they_read() -> None:
    workload = load_workload("rmsnorm-gemm-chain-v75")
    problem = tile(workload, load_target(workload.target))
    assert problem.tensors["H"].role == "temp"
    # A rows 0..128 (k block 0: columns 0..128) come from RMSNorm row blocks 0 and 1
    assert ("r0.st.b0", "g0.ldA.m0.k0") in problem.after
    assert ("r0.st.b1", "g0.ldA.m0.k0") in problem.after
    assert ("r0.st.b2", "g0.ldA.m0.k0") not in problem.after


@pytest.mark.parametrize(("document", "path", "message"), [
    ([], "$", "expected an object"),
    ({**PAIR, "extra": 1}, "$.extra", "unknown key"),
    ({k: v for k, v in PAIR.items() if k != "tasks"}, "$", "missing required key 'tasks'"),
    ({**PAIR, "tasks": [{"name": "g0", "kind": "gemm", "M": 1, "N": 1}]}, "$.tasks[0]",
     "missing required parameter 'K'"),
    ({**PAIR, "tasks": [{"name": "g0", "kind": "gemm", "M": "8", "N": 1, "K": 1}]},
     "$.tasks[0].M", "expected an integer"),
    ({**PAIR, "tasks": [{"name": "g0", "kind": "gemm", "M": -8, "N": 1, "K": 1}]},
     "$.tasks[0].M", "must be >= 1"),
    ({**PAIR, "tasks": [{"name": "g0", "kind": "gemm", "M": 8, "N": 1, "K": 1, "Q": 1}]},
     "$.tasks[0].Q", "unknown parameter"),
    ({**PAIR, "tasks": [{"name": "g0", "kind": "conv", "M": 8}]}, "$.tasks[0].kind",
     "unknown kind"),
    ({**PAIR, "tasks": [PAIR["tasks"][0], PAIR["tasks"][0]]}, "$.tasks[1].name",
     "duplicate task name"),
    ({**PAIR, "tasks": [{**PAIR["tasks"][0], "order": "xyz"}]}, "$.tasks[0].order",
     "must be one of"),
    ({**PAIR, "format": "npu-problem/1"}, "$.format", "not a workload"),
])
def test_bad_workloads_name_the_path(document: object, path: str, message: str) -> None:
    error = error_of(document)
    assert (error.source, error.path, error.rule) == ("w.json", path, "FORMAT")
    assert message in error.message


@pytest.mark.parametrize(("tasks", "rule"), [
    ([{"name": "a", "kind": "copy", "rows": 8, "cols": 8, "out": "T"},
      {"name": "b", "kind": "copy", "rows": 8, "cols": 4, "x": "T"}], "SHAPE"),
    ([{"name": "a", "kind": "copy", "rows": 8, "cols": 8, "out": "T"},
      {"name": "b", "kind": "copy", "rows": 8, "cols": 8, "out": "T"}], "TENSOR"),
    ([{"name": "a", "kind": "copy", "rows": 8, "cols": 8, "x": "T", "out": "T"}], "TENSOR"),
])
def test_inconsistent_tensors_are_reported_at_the_task(tasks: list, rule: str) -> None:
    workload = workload_from_dict({**PAIR, "tasks": tasks}, "w.json")
    with pytest.raises(InputError) as caught:
        tile(workload, load_target("hexagon-v75"))
    assert (caught.value.rule, caught.value.path) == (rule, f"$.tasks[{len(tasks) - 1}]")


def test_a_block_larger_than_the_memory_is_a_fit_error_at_the_task() -> None:
    document = {**PAIR, "tasks": [PAIR["tasks"][0],
                                  {"name": "r0", "kind": "rmsnorm", "rows": 64,
                                   "cols": 65536, "block_rows": 64}]}
    with pytest.raises(InputError) as caught:
        tile(workload_from_dict(document, "w.json"), load_target("hexagon-v75"))
    assert (caught.value.rule, caught.value.path, caught.value.source) == (
        "FIT", "$.tasks[1]", "w.json")


@pytest.mark.parametrize("enabled", [True, False])
def test_tiling_leaves_the_cycle_collector_as_it_found_it(enabled: bool) -> None:
    """Tiling pauses Python's cycle collector (speed); it restores it, even on an error."""
    import gc

    bad = {**PAIR, "tasks": [PAIR["tasks"][0], {"name": "r0", "kind": "rmsnorm", "rows": 64,
                                                "cols": 65536, "block_rows": 64}]}
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        tile(workload_from_dict(PAIR, "w.json"), load_target("hexagon-v75"))
        assert gc.isenabled() is enabled
        with pytest.raises(InputError):
            tile(workload_from_dict(bad, "w.json"), load_target("hexagon-v75"))
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_toml_and_json_files(tmp_path: Path) -> None:
    toml = tmp_path / "w.toml"
    toml.write_text('name = "w"\ntarget = "hexagon-v75"\n[[tasks]]\nname = "c"\n'
                    'kind = "copy"\nrows = 8\ncols = 8\n')
    assert load_workload(str(toml)).tasks[0].params["rows"] == 8
    (tmp_path / "w.json").write_text(json.dumps(PAIR))
    assert [t.name for t in load_workload(str(tmp_path / "w.json")).tasks] == ["g0", "r0"]
    (tmp_path / "bad.toml").write_text("name = \n")
    with pytest.raises(InputError) as caught:
        load_workload(str(tmp_path / "bad.toml"))
    assert caught.value.rule == "TOML"
    with pytest.raises(InputError) as caught:
        load_workload(str(tmp_path / "missing.toml"))
    assert caught.value.rule == "FILE" and "gemm-rmsnorm-v75" in caught.value.message


def test_scaled_grows_op_counts_and_keeps_chains_consistent() -> None:
    base = load_workload("rmsnorm-gemm-chain-v75")
    target = load_target(base.target)
    counts = [len(tile(scaled(base, f), target).ops) for f in (1, 4, 16)]
    assert counts[0] < counts[1] < counts[2]
    assert counts[2] > 10 * counts[0]
    pair = load_workload("gemm-rmsnorm-v75")
    assert 7000 <= len(tile(scaled(pair, 64), target).ops) <= 9000


def test_problem_input_from_workload_or_problem_file(tmp_path: Path) -> None:
    problem, target = load_problem_input("gemm-rmsnorm-ascend", None)
    assert target.name == "ascend-910b-core"
    path = tmp_path / "p.json"
    write_json_atomic(path, problem_to_dict(problem))
    again, target = load_problem_input(str(path), None)
    assert again == problem and target.name == "ascend-910b-core"
    with pytest.raises(InputError) as caught:  # costed for Ascend: not for Hexagon
        load_problem_input(str(path), "hexagon-v75")
    assert caught.value.rule == "TARGET" and "--target hexagon-v75" in caught.value.message
    document = problem_to_dict(problem)
    del document["meta"]
    write_json_atomic(path, document)
    with pytest.raises(InputError) as caught:
        load_problem_input(str(path), None)
    assert (caught.value.rule, caught.value.path) == ("TARGET", "$.meta")
    assert load_problem_input(str(path), "ascend-910b-core")[1].name == "ascend-910b-core"
    (tmp_path / "w.json").write_text(json.dumps(PAIR))
    _, target = load_problem_input(str(tmp_path / "w.json"), "hexagon-v68")
    assert target.name == "hexagon-v68"


def serial_schedule(problem: Problem, target: Target) -> Schedule:
    """Ops one after another in builder order (mode 0); each buffer live from its first to
    its last access, at the lowest aligned offset free of buffers live at the same time."""
    ops, time, first, last = {}, 0, {}, {}
    for name, op in problem.ops.items():
        mode = op.modes[0]
        ops[name] = OpPlacement(0, time, time + mode.duration,
                                {lane: tuple(range(n)) for lane, n in mode.lanes.items()})
        for access in (*op.reads, *op.writes):
            if access.buffer is not None:
                first.setdefault(access.buffer, time)
                last[access.buffer] = time + mode.duration
        time += mode.duration
    placed: dict[str, tuple[str, int, int]] = {}
    buffers = {}
    for name in sorted(problem.buffers, key=first.__getitem__):
        buffer, offset = problem.buffers[name], 0
        align = target.memories[buffer.memory].alignment_bytes
        while clash := [end for other, (memory, lo, end) in placed.items()
                        if memory == buffer.memory and lo < offset + buffer.size
                        and offset < end and first[other] < last[name]
                        and first[name] < last[other]]:
            offset = -(-max(clash) // align) * align
        placed[name] = (buffer.memory, offset, offset + buffer.size)
        buffers[name] = BufferPlacement(offset, first[name], last[name])
    return Schedule(target, problem, ops, buffers, time)


@pytest.mark.parametrize("name", example_names())
def test_a_serial_schedule_of_every_example_passes_the_checker(name: str) -> None:
    problem, target = load_problem_input(name, None)
    report = verify(schedule_to_dict(serial_schedule(problem, target)))
    assert not report.violations, report.violations[:5]


@pytest.mark.parametrize("factor", [0.0, -1.0, float("nan"), float("inf")])
def test_scaled_refuses_factors_that_are_not_finite_and_positive(factor: float) -> None:
    with pytest.raises(ValueError):
        scaled(load_workload("gemm-rmsnorm-v75"), factor)
