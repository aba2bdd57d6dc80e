"""Checks of a problem against a target: unknown names, FIT and CYCLE, with JSON paths."""

from __future__ import annotations

import pytest

from models.errors import InputError
from models.formats import Access, Buffer, Memory, Mode, Op, Problem, Target, Task
from models.validate import find_problem_error, placed_bytes, usable_modes, validate_problem

TARGET = Target("t", lanes={"DMA": 2}, budgets={"BW": 60},
                memories={"VTCM": Memory(8192, 2048)})


def problem_of(buffers: dict[str, int], ops: dict[str, Op], after: tuple = ()) -> Problem:
    return Problem("p", {}, {"t": Task("x")},
                   {name: Buffer("VTCM", size, 1) for name, size in buffers.items()},
                   ops, after)


ONE_DMA = Mode(1, {"DMA": 1})


def op(*buffers: str, mode: Mode = ONE_DMA) -> Op:
    return Op("t", (mode,), writes=tuple(Access(buffer=b, value="v") for b in buffers))


def error_of(problem: Problem) -> InputError:
    with pytest.raises(InputError) as caught:
        validate_problem(problem, TARGET, "p.json")
    return caught.value


def test_a_good_problem_passes() -> None:
    problem = problem_of({"a": 4096, "b": 2048}, {"x": op("a", "b"), "y": op("a")},
                         (("x", "y"),))
    assert find_problem_error(problem, TARGET) is None
    validate_problem(problem, TARGET)


def test_a_buffer_larger_than_its_memory() -> None:
    error = error_of(problem_of({"big": 8193}, {"x": op("big")}))
    assert (error.rule, error.path, error.source) == ("FIT", '$.buffers.big.size', "p.json")


def test_the_buffers_of_one_op_must_fit_together_after_alignment() -> None:
    # 3 x 2049 bytes: each but the top one is padded to 4096: 4096 * 2 + 2049 > 8192
    error = error_of(problem_of({"a": 2049, "b": 2049, "c": 2049}, {"x": op("a", "b", "c")}))
    assert (error.rule, error.path) == ("FIT", "$.ops.x")
    fits = problem_of({"a": 2048, "b": 2048, "c": 4096}, {"x": op("a", "b", "c")})
    assert find_problem_error(fits, TARGET) is None


def test_placed_bytes_pads_all_but_the_top_buffer() -> None:
    assert placed_bytes([], 2048) == 0
    assert placed_bytes([3000], 2048) == 3000
    assert placed_bytes([3000, 100], 2048) == 4096 + 100  # 3000 at 0, 100 at 4096
    assert placed_bytes([4096, 2048], 2048) == 6144


def test_a_mode_asking_more_units_or_budget_than_the_target_has() -> None:
    error = error_of(problem_of({}, {"x": op(mode=Mode(1, {"DMA": 3}))}))
    assert (error.rule, error.path) == ("FIT", "$.ops.x.modes[0].lanes.DMA")
    error = error_of(problem_of({}, {"x": op(mode=Mode(1, {}, {"BW": 61}))}))
    assert (error.rule, error.path) == ("FIT", "$.ops.x.modes[0].budgets.BW")


def test_a_mode_too_big_is_harmless_when_another_mode_fits() -> None:
    # Regression (found by fuzzing the search): FIT refused a feasible problem.
    modes = (Mode(1, {"DMA": 3}), Mode(2, {"DMA": 1}))
    assert usable_modes(modes, TARGET) == [1]
    assert find_problem_error(problem_of({}, {"x": Op("t", modes)}), TARGET) is None
    error = error_of(problem_of({}, {"x": Op("t", (modes[0], Mode(1, {}, {"BW": 61})))}))
    assert (error.rule, error.path) == ("FIT", "$.ops.x.modes[0].lanes.DMA")


@pytest.mark.parametrize(("mode", "path"), [
    (Mode(1, {"HMX": 1}), "$.ops.x.modes[0].lanes.HMX"),
    (Mode(1, {}, {"GM": 1}), "$.ops.x.modes[0].budgets.GM")])
def test_unknown_lane_or_budget(mode: Mode, path: str) -> None:
    error = error_of(problem_of({}, {"x": op(mode=mode)}))
    assert (error.rule, error.path) == ("FORMAT", path)


def test_unknown_memory() -> None:
    problem = Problem("p", {}, {"t": Task("x")}, {"a": Buffer("L1", 8)}, {"x": op("a")})
    error = error_of(problem)
    assert (error.rule, error.path) == ("FORMAT", "$.buffers.a.memory")
    assert "unknown memory 'L1'" in error.message


def test_a_cycle_names_its_ops() -> None:
    ops = {name: op() for name in "xyz"}
    error = error_of(problem_of({}, ops, (("x", "y"), ("y", "z"), ("z", "y"))))
    assert (error.rule, error.path) == ("CYCLE", "$.after")
    assert "y -> z -> y" in error.message or "z -> y -> z" in error.message


def test_a_mode_of_no_time_may_draw_more_than_the_budget_but_not_more_lanes() -> None:
    # FORMATS.md: an empty window draws nothing at any instant, so such a mode can run.
    assert usable_modes((Mode(0, {}, {"BW": 99}),), TARGET) == [0]
    assert usable_modes((Mode(0, {"DMA": 3}),), TARGET) == []
    assert find_problem_error(problem_of({}, {"x": op(mode=Mode(0, {}, {"BW": 99}))}),
                              TARGET) is None
