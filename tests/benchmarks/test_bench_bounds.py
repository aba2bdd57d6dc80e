"""The bound benchmark's witness: a legal schedule where the verifier says so, never
below the bound; none where the layer is not of its shape."""

from __future__ import annotations

from benchmarks.bench_bounds import witness
from models.formats import Mode, Op, Problem, Task
from models.targets import load_target
from models.workload import load_workload, tile
from schedsearch.engine.bounds.lower import lower_bound


def test_the_witness_of_a_decode_layer_is_legal_and_not_below_the_bound() -> None:
    target = load_target("hexagon-v75")
    problem = tile(load_workload("qwen2.5-0.5b-decode-v75"), target)
    makespan, verdict = witness(problem, target)
    assert verdict == "legal"
    assert makespan >= lower_bound(problem, target).value


def test_an_op_that_needs_two_units_is_not_of_its_shape() -> None:
    target = load_target("hexagon-v75")
    op = Op("t", (Mode(10, {"HVX": 2}),))
    problem = Problem("p", {}, {"t": Task("x")}, {}, {"v": op}, ())
    assert witness(problem, target) == (0, "-")
