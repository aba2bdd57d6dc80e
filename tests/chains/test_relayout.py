"""The relayout task kind: an explicit conversion with its own cost, on either engine."""

from __future__ import annotations

import math
from typing import Any

import pytest

from checker import verify
from models.cost import cost_model
from models.errors import InputError
from models.formats import schedule_to_dict
from models.layouts import layout_costs, strided_ns
from schedsearch.engine.search import solve
from tests.chains.conftest import OPTIONS, tiled


def _convert(engine: str, **extra: Any) -> dict[str, Any]:
    return {"name": "cv", "target": "hexagon-v75",
            "tasks": [{"name": "cv", "kind": "relayout", "rows": 100, "cols": 256,
                       "x": "H", "out": "T", "engine": engine, "block_rows": 64, **extra}]}


def test_dma_conversion_is_a_strided_load_and_a_plain_store() -> None:
    problem, target = tiled(_convert("dma"))
    model, costs = cost_model(target), layout_costs(target)
    loads = {n: op for n, op in problem.ops.items() if ".ld." in n}
    assert len(loads) == 2  # 100 rows in blocks of 64
    for op in loads.values():
        box = op.reads[0].box
        assert box is not None
        nbytes = (box[0][1] - box[0][0]) * 256 * 2
        assert [m.duration for m in op.modes] == [
            strided_ns(model.load.latency_ns, nbytes, rate, costs.strided_efficiency)
            for rate in model.load.rates]
    assert not any(".cv." in n for n in problem.ops)


def test_vector_conversion_costs_its_passes() -> None:
    problem, target = tiled(_convert("vector"))
    model, costs = cost_model(target), layout_costs(target)
    passes = [op for n, op in problem.ops.items() if ".cv." in n]
    assert len(passes) == 2
    nbytes = 64 * 256 * 2
    one_unit = passes[0].modes[0]
    assert one_unit.duration == model.vector.latency_ns + math.ceil(
        nbytes * costs.relayout_passes / model.vector.rate("f16"))


@pytest.mark.parametrize("engine", ["dma", "vector"])
def test_conversion_schedules_pass_the_checker(engine: str) -> None:
    problem, target = tiled(_convert(engine))
    schedule = solve(problem, target, time_limit=OPTIONS.time_limit, seed=OPTIONS.seed,
                     workers=OPTIONS.workers)
    assert verify(schedule_to_dict(schedule)).legal


def test_converting_a_layout_into_itself_is_refused() -> None:
    with pytest.raises(InputError) as caught:
        tiled(_convert("dma", src="row", dst="row"))
    assert caught.value.rule == "LAYOUT"
    assert caught.value.path == "$.tasks[0]"
