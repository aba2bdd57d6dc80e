"""The configuration parameters the tuner sets: buffer depth, vector units, candidates."""

from __future__ import annotations

import pytest

from checker import verify
from models.cost import cost_model
from models.errors import InputError
from models.formats import schedule_to_dict
from models.ops import KINDS
from models.targets import load_target
from models.workload import tile
from schedsearch.engine.search import solve
from tests.tuning.workloads import configured, tiny


def _after(problem) -> set[tuple[str, str]]:
    return set(problem.after)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_rowwise_depth_orders_load_i_plus_depth_after_the_use_of_load_i(depth: int) -> None:
    target = load_target("hexagon-v75")
    base = tile(configured(tiny(), {"g0": {}, "r0": {"block_rows": 16}}), target)
    limited = tile(configured(tiny(), {"g0": {}, "r0": {"block_rows": 16, "depth": depth}}),
                   target)
    added = _after(limited) - _after(base)
    assert added == {(f"r0.norm.b{i}", f"r0.ldX.b{i + depth}") for i in range(4 - depth)}


def test_gemm_depth_limits_each_operand_stream_without_a_cycle() -> None:
    target = load_target("hexagon-v75")
    # K has two blocks, so the third A load of the stream is the first of the next panel
    third_a = {"mnk": "g0.ldA.m1.k0", "kmn": "g0.ldA.m1.k0", "nmk": "g0.ldA.m0.k0.n1"}
    for order in ("mnk", "nmk", "kmn"):
        params = {"bm": 64, "bn": 64, "bk": 32, "order": order}
        base = tile(configured(tiny(), {"g0": params, "r0": {}}), target)
        limited = tile(configured(tiny(), {"g0": {**params, "depth": 2}, "r0": {}}), target)
        added = _after(limited) - _after(base)
        assert added, order
        assert all(pred.startswith("g0.mm.") and succ.startswith(("g0.ldA.", "g0.ldB."))
                   for pred, succ in added)
        assert ("g0.mm.m0.n0.k0", third_a[order]) in added


def test_depth_one_serialises_loads_and_use_and_the_search_respects_it() -> None:
    target = load_target("hexagon-v75")
    workload = configured(tiny(), {"g0": {"depth": 1}, "r0": {"block_rows": 16, "depth": 1}})
    schedule = solve(tile(workload, target), target, time_limit=0.3)
    assert verify(schedule_to_dict(schedule)).legal
    ops = schedule.ops
    for i in range(3):
        assert ops[f"r0.ldX.b{i + 1}"].start >= ops[f"r0.norm.b{i}"].end


@pytest.mark.parametrize("units", [1, 2])
def test_units_fix_the_vector_units_of_every_block_op(units: int) -> None:
    problem = tile(configured(tiny(), {"g0": {}, "r0": {"units": units}}),
                   load_target("hexagon-v75"))
    norms = [op for name, op in problem.ops.items() if ".norm." in name]
    assert norms and all(len(op.modes) == 1 and op.modes[0].lanes == {"HVX": units}
                         for op in norms)
    default = tile(tiny(), load_target("hexagon-v75"))
    assert all(len(op.modes) == 2 for name, op in default.ops.items() if ".norm." in name)


def test_more_units_than_the_engine_has_is_a_fit_error_at_the_task() -> None:
    with pytest.raises(InputError) as caught:
        tile(configured(tiny(), {"g0": {}, "r0": {"units": 3}}), load_target("hexagon-v75"))
    assert (caught.value.rule, caught.value.path) == ("FIT", "$.tasks[1]")


@pytest.mark.parametrize("target", ["hexagon-v75", "ascend-910b-core"])
def test_gemm_candidates_are_tile_multiples_capped_at_the_dimension(target: str) -> None:
    model = cost_model(load_target(target))
    found = KINDS["gemm"].candidates({"M": 100, "N": 512, "K": 64}, model)
    tile_size = model.matrix.tile
    for key in ("bm", "bn", "bk"):
        assert all(size % tile_size == 0 for size in found[key])
    whole_m = -(-100 // tile_size) * tile_size  # 128 on HMX, 112 on Cube
    assert found["bm"] == (64, whole_m) and found["bn"] == (64, 128, 256)
    assert found["bk"] == (64,)
    assert found["order"] == ("mnk", "nmk", "kmn") and found["depth"] == (0, 1, 2, 3)


def test_row_candidates_offer_units_only_where_a_vector_op_computes() -> None:
    model = cost_model(load_target("hexagon-v75"))
    norm = KINDS["rmsnorm"].candidates({"rows": 40}, model)
    assert norm["block_rows"] == (16, 32, 40) and norm["units"] == (0, 1, 2)
    assert "units" not in KINDS["copy"].candidates({"rows": 40}, model)
