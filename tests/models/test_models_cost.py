"""The cost model: one formula per engine, strict reading of ``costs``, overheads."""

from __future__ import annotations

import dataclasses

import pytest

from models.cost import (
    cost_model,
    matrix_ns,
    overheads,
    transfer_modes,
    transfer_ns,
    vector_copy_mode,
    vector_modes,
    vector_ns,
)
from models.errors import InputError
from models.targets import load_target, target_names


def test_every_bundled_target_has_a_usable_cost_model() -> None:
    for name in target_names():
        model = cost_model(load_target(name))
        assert model.overheads.launch_ns > model.overheads.event_ns > 0


def test_matrix_time_pads_to_whole_tiles() -> None:
    engine = cost_model(load_target("hexagon-v75")).matrix
    full = matrix_ns(engine, 32, 32, 32)
    assert full == engine.latency_ns + 16  # ceil(32768 / 2048)
    assert matrix_ns(engine, 1, 1, 1) == full
    assert matrix_ns(engine, 33, 32, 32) == engine.latency_ns + 32


def test_vector_time_and_its_split_over_units() -> None:
    engine = cost_model(load_target("hexagon-v75")).vector
    assert vector_ns(engine, 128 * 100, 4) == engine.latency_ns + 400
    assert vector_ns(engine, 128 * 100, 4, units=2) == engine.latency_ns + 200
    assert vector_ns(engine, 1, 1) == engine.latency_ns + 1  # rounded up, never 0


def test_transfer_modes_draw_their_rate() -> None:
    model = cost_model(load_target("hexagon-v75"))
    modes = transfer_modes(model, model.load, 4000)
    assert [(m.duration, m.budgets) for m in modes] == [
        (transfer_ns(400, 4000, 40), {"DDR_BW": 40}), (400 + 200, {"DDR_BW": 20})]
    assert [m.lanes for m in vector_modes(model, 4096, 1)] == [{"HVX": 1}, {"HVX": 2}]
    assert [m.lanes for m in vector_modes(model, 4096, 1, max_units=1)] == [{"HVX": 1}]


def test_vector_copy_only_where_the_target_allows_it() -> None:
    hexagon = cost_model(load_target("hexagon-v75"))
    mode = vector_copy_mode(hexagon, 800)
    assert mode is not None and mode.budgets == {"DDR_BW": 8} and mode.duration == 20 + 100
    assert vector_copy_mode(cost_model(load_target("ascend-910b-core")), 800) is None


def test_overheads() -> None:
    assert dataclasses.astuple(overheads(load_target("hexagon-v75"))) == (10000, 500, 2000,
                                                                          1000)


@pytest.mark.parametrize(("change", "path"), [
    (lambda c: c.pop("matrix"), "$.costs.matrix"),
    (lambda c: c["matrix"].update(lane="NPU"), "$.costs.matrix.lane"),
    (lambda c: c["vector"].update(memory="L2"), "$.costs.vector.memory"),
    (lambda c: c["load"].update(bytes_per_ns=[]), "$.costs.load.bytes_per_ns"),
    (lambda c: c["store"].update(latency_ns=-1), "$.costs.store.latency_ns"),
    (lambda c: c.update(ddr_budget="HBM"), "$.costs.ddr_budget"),
    (lambda c: c["overheads"].update(launch_ns="1us"), "$.costs.overheads.launch_ns"),
])
def test_unusable_costs_name_the_path(change, path: str) -> None:
    target = load_target("hexagon-v75")
    costs = {k: dict(v) if isinstance(v, dict) else v for k, v in target.costs.items()}
    change(costs)
    with pytest.raises(InputError) as caught:
        cost_model(dataclasses.replace(target, costs=costs))
    assert (caught.value.rule, caught.value.path, caught.value.source) == (
        "COSTS", path, "hexagon-v75")
