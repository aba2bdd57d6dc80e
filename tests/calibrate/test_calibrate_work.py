"""Work per op: a traced op's work read back from its planned duration agrees with the
work the cost model's functions give for the op's shape (the CSV path)."""

from __future__ import annotations

from models.cost import VECTOR_PASSES, cost_model
from models.formats import Schedule
from schedsearch.calibrate.measurements import MeasuredRun, Measurement
from schedsearch.calibrate.work import Engine, matrix_work, measurement_row, run_rows


def test_traced_work_matches_the_shape_within_a_tick(schedule: Schedule) -> None:
    model = cost_model(schedule.target)
    run = MeasuredRun(schedule, {n: (p.start, p.end) for n, p in schedule.ops.items()}, "r")
    rows = run_rows(run, model)
    engines = {row.engine for row in rows.values()}
    assert engines == set(Engine)
    for name, row in rows.items():
        op = schedule.problem.ops[name]
        if row.engine is Engine.MATRIX:
            m, n, k = (hi - lo for lo, hi in op.space)
            expected, rate = matrix_work(model, m, n, k), model.matrix.rate("f16").macs_per_ns
        elif row.engine is Engine.VECTOR and row.kind == "rmsnorm":
            (rows_lo, rows_hi), (_, cols) = op.space
            expected = measurement_row(Measurement(
                "rmsnorm", "f16", (rows_hi - rows_lo, cols), row.factors["units"], 0, "", 1,
                "x:1"), model).work
            rate = model.vector.rate("f16")
            assert VECTOR_PASSES["rmsnorm"] * (rows_hi - rows_lo) * cols * 2 \
                == expected * row.factors["units"]
        else:
            continue
        assert abs(row.work - expected) <= rate / 2 + 1e-9, name
