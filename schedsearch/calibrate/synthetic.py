"""Synthetic measurements drawn from a known parameter set with noise (for tests and docs).

Nothing here is measured on a device. A *truth* is a target whose figures are set to a
known parameter set (:data:`TRUTH_V75`: plausible figures that differ from the bundled
assumptions, so that a calibration visibly moves them); rows get the truth's roofline
duration times ``exp(N(0, noise))`` (relative jitter). A run of a schedule is simulated
event by event by the program simulator (:mod:`schedsearch.program.simulate`, the one
event simulator): queues and waits as the schedule orders them, transfers sharing a bus
of a known bandwidth max-min fairly (:func:`schedsearch.contention.fair_shares`, the one
bus model, which :mod:`schedsearch.calibrate.ddr` fits).

``python -m schedsearch.calibrate.synthetic -o FILE.csv`` writes the bundled example
``models/examples/measurements-v75.csv`` (seed 0), marked synthetic in its first lines;
``--coverage N`` prints how often N seeded calibrations cover every true parameter;
``--run S.json -o RUN.json`` writes a trace of a simulated run of a schedule.
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
from dataclasses import dataclass, replace

import numpy as np

from models.cost import VECTOR_PASSES, CostModel, cost_model
from models.dtypes import DTYPE_BYTES
from models.formats import (
    Schedule,
    Target,
    read_schedule,
    target_from_dict,
    target_to_dict,
)
from models.layouts import layout_costs, strided_ns
from models.targets import load_target
from schedsearch.calibrate.calibration import set_figure
from schedsearch.calibrate.engines import model_figures
from schedsearch.calibrate.measurements import (
    MATMUL,
    SCATTER,
    STRIDED,
    MeasuredRun,
    Measurement,
)
from schedsearch.calibrate.replay import measured_schedule
from schedsearch.calibrate.work import Engine, FitRow, measurement_row, run_rows
from schedsearch.chains.critical import predecessors
from schedsearch.program.simulate import Jitter, RunPlan, run_plan
from schedsearch.trace import schedule_to_trace, write_trace

__all__ = ["TRUTH_V75", "TRUTH_BANDWIDTH", "truth_target", "synthetic_measurements",
           "synthetic_crossings", "synthetic_run", "write_csv"]

#: The known parameter set of the synthetic example on hexagon-v75 (names as the
#: calibration report gives them).
TRUTH_V75: dict[str, float] = {
    "costs.matrix.latency_ns": 55, "costs.matrix.dtypes.f16.macs_per_ns": 1700,
    "costs.matrix.dtypes.i8.macs_per_ns": 3100,
    "costs.vector.latency_ns": 30, "costs.vector.dtypes.f16.bytes_per_ns": 100,
    "costs.vector.dtypes.f32.bytes_per_ns": 90, "costs.vector.dtypes.i8.bytes_per_ns": 110,
    "costs.load.latency_ns": 350, "costs.load.bytes_per_ns[0]": 33,
    "costs.load.bytes_per_ns[1]": 17,
    "costs.store.latency_ns": 420, "costs.store.bytes_per_ns[0]": 36,
    "costs.store.bytes_per_ns[1]": 18,
}
#: The bus bandwidth of the synthetic traced runs (bytes per ns), below two full DMAs.
TRUTH_BANDWIDTH = 45.0
_EXTENTS = (32, 64, 96, 128, 256)
_ROWS = (16, 32, 64, 128)
_COLS = (256, 896, 2048, 4096)


def truth_target(base: Target, truth: dict[str, float]) -> Target:
    """``base`` with the figures of ``truth`` set (names as in the calibration report)."""
    document = copy.deepcopy(target_to_dict(base))
    for name, value in truth.items():
        set_figure(document, name, value)
    return target_from_dict(document, f"{base.name} (synthetic truth)")


def _duration(row: FitRow, model: CostModel) -> float:
    latency, rate = model_figures(model, row.engine, row.key)
    assert rate is not None
    return latency + row.work / rate


def synthetic_measurements(truth: Target, *, seed: int, noise: float = 0.03,
                           rows_per_kind: int = 40) -> list[Measurement]:
    """Rows of every kind the truth's engines run, at random shapes from a fixed grid."""
    model = cost_model(truth)
    rng = np.random.default_rng(seed)
    vector_kinds = ("rmsnorm", "silu", "gelu", "convert")
    matrix_types = model.matrix.accepted() if model.matrix.dtypes else ("f16",)
    vector_types = model.vector.accepted() if model.vector.dtypes else ("f16",)
    convert_types = [t for t in matrix_types if t in vector_types]
    found = []
    for kind in (MATMUL, *vector_kinds, "load", "store"):
        for _ in range(rows_per_kind):
            units, mode = 1, 0
            if kind == MATMUL:
                dtype = str(rng.choice(matrix_types))
                dims = tuple(int(rng.choice(_EXTENTS)) for _ in range(3))
            else:
                dims = (int(rng.choice(_ROWS)), int(rng.choice(_COLS)))
                dtype = str(rng.choice(convert_types if kind == "convert" else vector_types))
            if kind in VECTOR_PASSES:
                units = int(rng.integers(1, model.vector.max_units + 1))
            elif kind != MATMUL:
                rates = (model.load if kind == "load" else model.store).rates
                mode = int(rng.integers(0, len(rates)))
                dtype = "f16"
            placeholder = Measurement(kind, dtype, dims, units, mode, "", 1.0, "synthetic:0")
            duration = _duration(measurement_row(placeholder, model), model)
            found.append(replace(placeholder, duration=duration * math.exp(
                rng.normal(0, noise)), origin=f"synthetic:{len(found)}"))
    return found


def synthetic_crossings(truth: Target, *, seed: int, noise: float = 0.03,
                        rows_per_kind: int = 24) -> list[Measurement]:
    """Rows that crossed layouts (``strided`` loads and stores, ``scatter`` RMSNorm and
    SiLU kernels), timed by the truth's ``costs.layouts`` figures as
    :func:`models.layouts.apply_layout` charges them."""
    model, costs = cost_model(truth), layout_costs(truth)
    rng = np.random.default_rng(seed)
    found = []
    for kind in ("load", "store", "rmsnorm", "silu"):
        for _ in range(rows_per_kind):
            rows, cols = int(rng.choice(_ROWS)), int(rng.choice(_COLS))
            nbytes = rows * cols * DTYPE_BYTES["f16"]
            if kind in VECTOR_PASSES:
                units = int(rng.integers(1, model.vector.max_units + 1))
                rate = model.vector.rate("f16") or model.vector.bytes_per_ns
                passes = VECTOR_PASSES[kind] + costs.scatter_passes
                duration = model.vector.latency_ns + nbytes * passes / (rate * units)
                measured = Measurement(kind, "f16", (rows, cols), units, 0, SCATTER,
                                       duration, "")
            else:
                engine = model.load if kind == "load" else model.store
                mode = int(rng.integers(0, len(engine.rates)))
                duration = strided_ns(engine.latency_ns, nbytes, engine.rates[mode],
                                      costs.strided_efficiency)
                measured = Measurement(kind, "f16", (rows, cols), 1, mode, STRIDED,
                                       duration, "")
            found.append(replace(measured, duration=measured.duration * math.exp(
                rng.normal(0, noise)), origin=f"synthetic-crossing:{len(found)}"))
    return found


@dataclass
class _Op:
    """One op of a simulated run: a fixed duration, or a transfer's latency and bytes."""

    duration: float
    latency: float = 0.0
    left: float = 0.0
    cap: float = 0.0
    start: float = math.nan
    end: float = math.nan

    @property
    def transfer(self) -> bool:
        return self.cap > 0


def _ops(schedule: Schedule, truth: Target, rng: np.random.Generator,
         noise: float) -> dict[str, _Op]:
    model = cost_model(truth)
    planned = {name: (p.start, p.end) for name, p in schedule.ops.items()}
    rows = run_rows(MeasuredRun(schedule, planned, "<schedule>"), model)
    ops = {}
    for name, placement in schedule.ops.items():
        jitter = math.exp(rng.normal(0, noise))
        row = rows.get(name)
        if row is None:
            ops[name] = _Op(float(placement.end - placement.start))
        elif row.engine in (Engine.LOAD, Engine.STORE):
            latency, rate = model_figures(model, row.engine, row.key)
            ops[name] = _Op(0.0, latency, row.work * jitter, float(rate or 1))
        else:
            ops[name] = _Op(_duration(row, model) * jitter)
    return ops


def synthetic_run(schedule: Schedule, truth: Target, *, bandwidth: float, seed: int,
                  noise: float = 0.03) -> MeasuredRun:
    """A run of ``schedule`` on the truth, simulated by the program simulator
    (:func:`schedsearch.program.simulate.run_plan`).

    An op starts at its planned start or, if later, once the ops it waits for have ended
    (the previous op in each of its units' queues, its ``after`` edges, the writers of
    what it reads); compute ops take their truth duration with jitter; a transfer waits
    its latency (a node that draws nothing), then streams its bytes (with jitter) at its
    mode's rate, sharing a bus of ``bandwidth`` as :func:`schedsearch.contention.
    fair_shares` does (a node drawing its rate).
    """
    ops = _ops(schedule, truth, np.random.default_rng(seed), noise)
    plan, first, last = _run_plan(schedule, ops, bandwidth)
    runs = run_plan(plan, {}, 1, Jitter())
    if np.isnan(runs.end).any():
        raise ValueError("the schedule's waits form a cycle")
    return MeasuredRun(schedule, {name: (float(runs.start[0, first[name]]),
                                         float(runs.end[0, last[name]])) for name in ops},
                       "<synthetic run>")


def _run_plan(schedule: Schedule, ops: dict[str, _Op], bandwidth: float
              ) -> tuple[RunPlan, dict[str, int], dict[str, int]]:
    """The run of :func:`synthetic_run` as a static plan: a node per op (a transfer's
    latency, then a node streaming its bytes), released at the op's planned start and
    ordered after the ops it waits for; and per op its first and last node."""
    names: list[str] = []
    duration: list[float] = []
    release: list[float] = []
    draw: list[float] = []
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    orders: list[tuple[int, int]] = []
    for name, op in ops.items():
        first[name] = last[name] = len(names)
        names.append(name)
        duration.append(op.latency if op.transfer else op.duration)
        release.append(float(schedule.ops[name].start))
        draw.append(0.0)
        if op.transfer:
            last[name] = len(names)
            orders.append((first[name], last[name]))
            names.append(f"{name} (streaming)")
            duration.append(op.left / op.cap)
            release.append(0.0)
            draw.append(op.cap)
    for name, waited in predecessors(schedule).items():
        orders += [(last[before], first[name]) for before in sorted(waited)]
    src, dst = (np.array(ends, dtype=np.int64) for ends in zip(*orders, strict=True)) \
        if orders else (np.zeros(0, dtype=np.int64),) * 2
    n = len(names)
    plan = RunPlan(names=names, ops=n, duration=np.array(duration), kind=[None] * n,
                   release=np.array(release), src=src, dst=dst, delay=np.zeros(len(src)),
                   draws=np.array(draw).reshape(n, 1), capacity=np.array([bandwidth]),
                   lanes=[], units=np.zeros((n, 0), dtype=np.int64),
                   unit_counts=np.zeros(0, dtype=np.int64))
    return plan, first, last


def write_csv(rows: list[Measurement], stream: object, header: str) -> None:
    """Write measurement rows as the calibration CSV (``header`` as ``#`` comment lines)."""
    write = stream.write  # type: ignore[attr-defined]
    for line in header.splitlines():
        write(f"# {line}\n")
    write("kind,dtype,shape,units,mode,layout,duration\n")
    for m in rows:
        write(f"{m.kind},{m.dtype},{'x'.join(map(str, m.dims))},{m.units},{m.mode},"
              f"{m.layout},{m.duration:.3f}\n")


def coverage(repeats: int, rows_per_kind: int = 24) -> tuple[int, int, dict[str, int]]:
    """Calibrate ``repeats`` seeded synthetic sets on hexagon-v75: how many had every
    true parameter inside its reported interval, how many parameters each had, and
    which parameters missed how often (passes are judged against the library's)."""
    from schedsearch.calibrate.calibration import calibrate

    base = load_target("hexagon-v75")
    truth = truth_target(base, TRUTH_V75)
    covered, count = 0, 0
    missed: dict[str, int] = {}
    for seed in range(repeats):
        rows = synthetic_measurements(truth, seed=seed, rows_per_kind=rows_per_kind)
        report = calibrate(base, rows, [], sources=["synthetic"], output="-").report
        parameters = [p for group in report.groups for p in group.parameters]
        count = len(parameters)
        misses = [p.name for p in parameters
                  if not p.low <= _truth_of(p.name) <= (math.inf if p.high is None else p.high)]
        covered += not misses
        for name in misses:
            missed[name] = missed.get(name, 0) + 1
    return covered, count, missed


def _truth_of(name: str) -> float:
    if name in TRUTH_V75:
        return TRUTH_V75[name]
    return VECTOR_PASSES[name.removeprefix("passes.").split("[")[0]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", metavar="FILE.csv", help="write a synthetic CSV")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=0.03)
    parser.add_argument("--run", metavar="SCHEDULE",
                        help="instead: write to -o a Chrome trace of a simulated run of "
                             "SCHEDULE on the truth (bus of TRUTH_BANDWIDTH bytes/ns)")
    parser.add_argument("--coverage", type=int, metavar="N",
                        help="instead: print how many of N seeded calibrations had every "
                             "true parameter inside its interval")
    args = parser.parse_args(argv)
    if args.coverage:
        covered, count, missed = coverage(args.coverage)
        print(f"{covered} of {args.coverage} seeded repeats had all {count} true parameters "
              f"inside their simultaneous 99% intervals ({covered / args.coverage:.1%}); "
              f"misses: {missed or 'none'}")
        return 0
    if not args.output:
        parser.error("give -o FILE.csv or --coverage N")
    if args.run:
        truth = truth_target(load_target("hexagon-v75"), TRUTH_V75)
        run = synthetic_run(read_schedule(args.run), truth, bandwidth=TRUTH_BANDWIDTH,
                            seed=args.seed, noise=args.noise)
        trace = schedule_to_trace(measured_schedule(run))
        trace["otherData"]["synthetic"] = (f"not measured on any device: a simulated run on "
                                           f"TRUTH_V75, seed {args.seed}")
        write_trace(trace, args.output)
        print(f"wrote {args.output}: a SYNTHETIC run of {args.run}", file=sys.stderr)
        return 0
    truth = truth_target(load_target("hexagon-v75"), TRUTH_V75)
    rows = synthetic_measurements(truth, seed=args.seed, noise=args.noise)
    header = (f"SYNTHETIC: not measured on any device. Drawn by `python -m "
              f"schedsearch.calibrate.synthetic -o {args.output} --seed {args.seed} "
              f"--noise {args.noise}`\nfrom the known parameter set TRUTH_V75 "
              f"(schedsearch/calibrate/synthetic.py) on hexagon-v75, with relative noise "
              f"exp(N(0, {args.noise})).\nDurations in ns.")
    with open(args.output, "w", encoding="utf-8") as stream:
        write_csv(rows, stream, header)
    print(f"wrote {args.output}: {len(rows)} synthetic rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
