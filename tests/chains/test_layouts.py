"""Layouts: reading ``costs.layouts``, and what apply_layout charges to which op."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from models.cost import cost_model
from models.errors import InputError
from models.formats import Problem, Target
from models.layouts import (
    Layout,
    apply_layout,
    fused_pressure,
    layout_costs,
    layout_of,
    strided_ns,
    with_fused_factor,
)
from models.targets import load_target, target_names
from models.workload import tile, workload_from_dict
from tests.chains.conftest import CHAIN


def test_every_bundled_target_states_its_layout_figures_with_sources() -> None:
    assert len(target_names()) >= 4
    for name in target_names():
        target = load_target(name)
        layout_costs(target)
        sources = (target.meta or {})["sources"]
        for key in target.costs["layouts"]:
            assert sources[f"costs.layouts.{key}"].startswith(("source:", "assumption:"))


@pytest.mark.parametrize(("section", "where"), [
    (None, "$.costs.layouts"),
    ({"strided_efficiency": 0, "scatter_passes": 1, "relayout_passes": 2},
     "strided_efficiency"),
    ({"strided_efficiency": 1.5, "scatter_passes": 1, "relayout_passes": 2},
     "strided_efficiency"),
    ({"strided_efficiency": 0.5, "scatter_passes": -1, "relayout_passes": 2},
     "scatter_passes"),
    ({"strided_efficiency": 0.5, "scatter_passes": 1, "relayout_passes": True},
     "relayout_passes"),
    ({"strided_efficiency": 0.5, "scatter_passes": 1, "relayout_passes": 2},
     "fused_compute_factor"),
    ({"strided_efficiency": 0.5, "scatter_passes": 1, "relayout_passes": 2,
      "fused_compute_factor": 0.9}, "fused_compute_factor"),
    ({"strided_efficiency": 0.5, "scatter_passes": 1, "relayout_passes": 2,
      "fused_compute_factor": True}, "fused_compute_factor"),
])
def test_bad_layout_figures_name_the_key(section: object, where: str) -> None:
    target = load_target("hexagon-v75")
    costs = {k: v for k, v in target.costs.items() if k != "layouts"}
    if section is not None:
        costs["layouts"] = section
    with pytest.raises(InputError) as caught:
        layout_costs(replace(target, costs=costs))
    assert caught.value.rule == "COSTS"
    assert where in caught.value.path


def test_strided_rate_hand_computed() -> None:
    # 8192 bytes at 40 bytes/ns keeping half the rate: 400 + 8192 / 20 = 809.6 -> 810
    assert strided_ns(400, 8192, 40, 0.5) == 810


def _ops_touching(problem: Problem, tensor: str, *, writes: bool) -> list[str]:
    return [n for n, op in problem.ops.items()
            if any(a.tensor == tensor for a in (op.writes if writes else op.reads))]


def test_row_major_operand_costs_the_gemm_loads_only(
        chain_problem: tuple[Problem, Target]) -> None:
    problem, target = chain_problem
    row = apply_layout(problem, target, "H", Layout.ROW)
    loads = set(_ops_touching(problem, "H", writes=False))
    assert loads
    model = cost_model(target)
    for name, op in problem.ops.items():
        if name not in loads:
            assert row.ops[name] == op, name
            continue
        box = next(a.box for a in op.reads if a.tensor == "H")
        assert box is not None
        nbytes = math.prod(hi - lo for lo, hi in box) * 2
        for before, after in zip(op.modes, row.ops[name].modes, strict=True):
            rate = before.budgets[model.ddr_budget]
            assert after.duration == strided_ns(model.load.latency_ns, nbytes, rate, 0.5)
            assert after.duration > before.duration
    assert layout_of(row, "H") is Layout.ROW


def test_tiled_output_costs_the_producer_its_scatter_pass(
        chain_problem: tuple[Problem, Target]) -> None:
    problem, target = chain_problem
    tiled = apply_layout(problem, target, "H", Layout.TILED)
    norms = {n for n, op in problem.ops.items() if n.startswith("r0.norm.")}
    assert norms
    vector = cost_model(target).vector
    for name, op in problem.ops.items():
        if name not in norms:
            assert tiled.ops[name] == op, name
            continue
        block = problem.buffers[op.writes[0].buffer].size
        for before, after in zip(op.modes, tiled.ops[name].modes, strict=True):
            units = before.lanes[vector.lane]
            extra = math.ceil(block / (vector.rate("f16") * units))
            assert after.duration == before.duration + extra
    assert layout_of(tiled, "H") is Layout.TILED


def test_fused_pressure_slows_the_named_tasks_compute_ops_only(
        chain_problem: tuple[Problem, Target]) -> None:
    problem, v75 = chain_problem
    target = with_fused_factor(v75, 1.1)
    assert layout_costs(target).fused_compute_factor == 1.1
    model = cost_model(target)
    engines = {model.matrix.lane, model.vector.lane}
    pressed = fused_pressure(problem, target, frozenset({"g0"}))
    scaled = 0
    for name, op in problem.ops.items():
        compute = any(m.lanes.get(lane, 0) for m in op.modes for lane in engines)
        for before, after in zip(op.modes, pressed.ops[name].modes, strict=True):
            if op.task == "g0" and compute:
                # exactly ceil(d * 11 / 10): 1.1 read as its decimal, not its binary float
                assert after.duration == -(-before.duration * 11 // 10), name
                scaled += 1
            else:
                assert after == before, name
    assert scaled and any(op.task == "r0" for op in problem.ops.values())
    assert fused_pressure(problem, with_fused_factor(v75, 1.0),
                          frozenset({"r0", "g0"})) == problem


def test_row_operand_is_strided_on_every_reload_when_the_gemm_reloads_it() -> None:
    """Order ``nmk`` loads the A block again for every n block; each reload pays the
    strided rate in the shared ``row`` layout (``mnk``, the default, loads it once)."""
    norm, gemm = CHAIN["tasks"]
    target = load_target("hexagon-v75")
    loads = {}
    for order in ("mnk", "nmk"):
        document = {**CHAIN, "tasks": [norm, {**gemm, "N": 128, "bn": 64, "order": order}]}
        problem = tile(workload_from_dict(document, "w"), target)
        row = apply_layout(problem, target, "H", Layout.ROW)
        names = _ops_touching(problem, "H", writes=False)
        assert all(row.ops[n].modes[0].duration > problem.ops[n].modes[0].duration
                   for n in names)
        loads[order] = len(names)
    assert loads["nmk"] == 2 * loads["mnk"]
