"""A window's CP-SAT model holds what can meet the window, not the whole schedule: its
size does not grow with the ops before it, nor with a buffer's other readers."""

from __future__ import annotations

from models.formats import Buffer, Problem, Task, Tensor
from schedsearch.engine.cpsat.model import build, solve_built
from schedsearch.engine.cpsat.variables import Incumbent
from schedsearch.engine.fallback import construct
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.lns import window
from schedsearch.engine.solution import to_schedule
from schedsearch.engine.timebudget import TimeBudget
from tests.engine.problems import compute, load, store, target, verify


def _rows(rows: int) -> Problem:
    """A weight loaded once and read by every row's compute; per row a load, the
    compute and a store (the RMSNorm's shape)."""
    ops = {"ldW": load("r", "W", "w", "w")}
    buffers = {"W": Buffer("M", 64)}
    for i in range(rows):
        buffers[f"X{i}"], buffers[f"Y{i}"] = Buffer("M", 256), Buffer("M", 256)
        ops[f"ldX{i}"] = load("r", f"X{i}", "x", f"x{i}")
        ops[f"norm{i}"] = compute("r", [(f"X{i}", f"x{i}"), ("W", "w")], [(f"Y{i}", f"y{i}")],
                                  lane="VX")
        ops[f"st{i}"] = store("r", f"Y{i}", f"y{i}", "y", i)
    tensors = {"w": Tensor((1,), "i8", "input"), "x": Tensor((1,), "i8", "input"),
               "y": Tensor((rows,), "i8", "output")}
    return Problem(name="rows", tensors=tensors, tasks={"r": Task("rmsnorm")}, buffers=buffers,
                   ops=ops)


def _last_window_size(rows: int) -> tuple[int, bool]:
    """Constraints of the model freeing the last 6 ops (relaxed memory), and whether
    its answer is legal once the offsets are the incumbent's."""
    inst = build_instance(_rows(rows), target(capacity=1024))
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, construct(inst, dag))
    hood, region_end = window(inst, dag, inc, dag.n_nodes - 6, 6)
    built = build(inst, dag, inc, hood, 0, region_end)
    outcome = solve_built(built, TimeBudget.start(30), work=0.5, seed=0, workers=1)
    assert outcome.solution is not None
    legal = verify(to_schedule(inst, outcome.solution, {})) == []
    return len(built.model.proto.constraints), legal


def test_a_window_at_the_end_is_as_large_after_10_rows_as_after_60() -> None:
    """Before, every op that ended before the window still had an interval, and the
    weight's window one bound per reader: the model grew with the schedule's length
    (and CP-SAT's conflicts were charged by its size)."""
    short, short_legal = _last_window_size(10)
    long, long_legal = _last_window_size(60)
    assert short_legal and long_legal
    assert long == short


def test_the_weight_read_by_every_row_is_still_bounded_by_its_readers() -> None:
    """The weight's lifetime covers its pinned readers (one bound for all of them), so
    the window cannot free it early: every answer keeps it live up to the last read."""
    inst = build_instance(_rows(12), target(capacity=1024))
    dag = build_dag(inst)
    inc = Incumbent.of(inst, dag, construct(inst, dag))
    weight = inst.buffer_index["W"]
    readers = [v for v in inst.buffer_ops[weight] if inst.op_names[v].startswith("norm")]
    first = inc.ranked.index(readers[5])
    hood, region_end = window(inst, dag, inc, first, 4)
    built = build(inst, dag, inc, hood, 0, region_end)
    assert weight in built.buffers
    outcome = solve_built(built, TimeBudget.start(30), work=0.5, seed=0, workers=1)
    assert outcome.solution is not None
    ends = outcome.solution.ends(inst)
    assert verify(to_schedule(inst, outcome.solution, {})) == []
    assert all(outcome.solution.starts[v] >= outcome.solution.starts[readers[0]]
               and ends[v] <= max(ends[r] for r in readers) for v in readers)
