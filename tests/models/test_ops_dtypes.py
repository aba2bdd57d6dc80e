"""Element types change cost: per-dtype rates in the targets, refusals per engine."""

from __future__ import annotations

import dataclasses

import pytest

from models.cost import cost_model, matrix_ns
from models.dtypes import DTYPE_BYTES
from models.errors import InputError
from models.targets import load_target, target_names
from tests.models.ops_helpers import one_task


def test_int8_runs_at_its_own_rate_with_int32_accumulators() -> None:
    f16 = one_task("gemm", "hexagon-v75", "g", M=128, N=128, K=128)
    i8 = one_task("gemm", "hexagon-v75", "g", M=128, N=128, K=128, dtype="i8")
    engine = cost_model(load_target("hexagon-v75")).matrix
    assert i8.ops["g.mm.m0.n0.k0"].modes[0].duration == matrix_ns(engine, 128, 128, 128, "i8")
    assert (i8.ops["g.mm.m0.n0.k0"].modes[0].duration - engine.latency_ns) * 2 == (
        f16.ops["g.mm.m0.n0.k0"].modes[0].duration - engine.latency_ns)
    assert i8.buffers["g.acc.m0.n0"].size == f16.buffers["g.acc.m0.n0"].size == 128 * 128 * 4
    assert i8.buffers["g.A.m0.k0"].size * 2 == f16.buffers["g.A.m0.k0"].size


def test_an_f32_gemm_is_refused_naming_what_the_matrix_engine_takes() -> None:
    with pytest.raises(InputError) as caught:
        one_task("gemm", "hexagon-v75", M=32, N=32, K=32, dtype="f32")
    error = caught.value
    assert error.rule == "DTYPE"
    assert "matrix engine of hexagon-v75 does not take f32" in error.message
    assert "f16, i8" in error.message and "vector engine only" in error.message


def test_bf16_only_where_the_target_has_it() -> None:
    one_task("gemm", "ascend-910b-core", M=32, N=32, K=32, dtype="bf16")
    with pytest.raises(InputError):
        one_task("gemm", "hexagon-v79", M=32, N=32, K=32, dtype="bf16")


@pytest.mark.parametrize("name", target_names())
def test_every_bundled_target_lists_its_types(name: str) -> None:
    model = cost_model(load_target(name))
    assert "f16" in model.matrix.accepted() and "f32" not in model.matrix.accepted()
    assert {"f16", "f32"} <= set(model.vector.accepted())
    assert set(model.matrix.accepted()) | set(model.vector.accepted()) <= set(DTYPE_BYTES)


def test_a_target_without_tables_takes_every_type_at_its_top_level_rate() -> None:
    target = load_target("hexagon-v75")
    costs = {k: dict(v) if isinstance(v, dict) else v for k, v in target.costs.items()}
    del costs["matrix"]["dtypes"], costs["vector"]["dtypes"]
    model = cost_model(dataclasses.replace(target, costs=costs))
    assert model.matrix.accepted() == tuple(DTYPE_BYTES)
    assert model.matrix.rate("f32").macs_per_ns == costs["matrix"]["macs_per_ns"]


@pytest.mark.parametrize(("change", "path"), [
    (lambda c: c["matrix"].update(dtypes=[]), "$.costs.matrix.dtypes"),
    (lambda c: c["matrix"].update(dtypes={"f64": {}}), "$.costs.matrix.dtypes.f64"),
    (lambda c: c["matrix"].update(dtypes={"f16": {"rate": 1}}),
     "$.costs.matrix.dtypes.f16.rate"),
    (lambda c: c["vector"].update(dtypes={"f16": {"bytes_per_ns": 0}}),
     "$.costs.vector.dtypes.f16.bytes_per_ns"),
    (lambda c: c["matrix"].update(dtypes={"i8": {"accumulator_bytes": 2.5}}),
     "$.costs.matrix.dtypes.i8.accumulator_bytes"),
])
def test_bad_tables_name_the_path(change, path: str) -> None:
    target = load_target("hexagon-v75")
    costs = {k: dict(v) if isinstance(v, dict) else v for k, v in target.costs.items()}
    change(costs)
    with pytest.raises(InputError) as caught:
        cost_model(dataclasses.replace(target, costs=costs))
    assert (caught.value.rule, caught.value.path) == ("COSTS", path)
