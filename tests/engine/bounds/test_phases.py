"""``head_tail:K`` and ``phases:K``: exact on hand-made phases, the forced orders they
build on, and never above the optimum (CP-SAT) on small random problems."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from models.formats import (
    Access,
    Buffer,
    BufferPlacement,
    Memory,
    Mode,
    Op,
    OpPlacement,
    Problem,
    Schedule,
    Target,
    Task,
    Tensor,
)
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.bounds.phases import forced_edges, phase_parts
from tests.engine.bounds.test_lower import optimum
from tests.engine.problems import verify
from tests.fuzz._budget import examples

TARGET = Target("t", lanes={"HMX": 1, "HVX": 2, "DMA": 2}, budgets={"BW": 60},
                memories={"M": Memory(1 << 20)})
KINDS = ("HMX", "HVX", "DMA")


def op(lane: str, duration: int, reads: tuple[Access, ...] = (),
       writes: tuple[Access, ...] = ()) -> Op:
    return Op("t", (Mode(duration, {lane: 1}),), reads=reads, writes=writes)


def buf(name: str, value: str | None) -> Access:
    return Access(buffer=name, value=value)


def rows(tensor: str, lo: int, hi: int) -> Access:
    return Access(tensor=tensor, box=((lo, hi),))


def problem(ops: dict[str, Op], after: tuple[tuple[str, str], ...] = (),
            temp_rows: int = 0) -> Problem:
    tensors = {"X": Tensor((4,), "i8", "input")}
    if temp_rows:
        tensors["T"] = Tensor((temp_rows,), "i8", "temp")
    buffers = {a.buffer: Buffer("M", 16) for o in ops.values() for a in (*o.reads, *o.writes)
               if a.buffer is not None}
    return Problem("p", tensors, {"t": Task("x")}, buffers, ops, after)


def gemm_phases() -> Problem:
    """Load A; two GEMMs on it; a vector op that needs both results (an RMSNorm, say);
    two GEMMs on its output; a store. Every dependency is a value in a buffer."""
    return problem({
        "ld": op("DMA", 10, (rows("X", 0, 4),), (buf("a", "A"),)),
        "mm1": op("HMX", 50, (buf("a", "A"),), (buf("p", "P"),)),
        "mm2": op("HMX", 50, (buf("a", "A"),), (buf("q", "Q"),)),
        "norm": op("HVX", 30, (buf("p", "P"), buf("q", "Q")), (buf("n", "N"),)),
        "mm3": op("HMX", 50, (buf("n", "N"),), (buf("r", "R"),)),
        "mm4": op("HMX", 50, (buf("n", "N"),), (buf("s", "S"),)),
        "st": op("DMA", 10, (buf("r", "R"), buf("s", "S"))),
    })


def test_a_vector_op_between_two_gemm_phases_is_a_forced_wait() -> None:
    # The matrix engine works 200, waits 10 for the load, 30 for the norm and 10 for
    # the store: 250 is also a schedule's makespan, so the optimum.
    parts = phase_parts(gemm_phases(), TARGET)
    assert parts["head_tail:HMX"] == 10 + 200 + 10
    assert parts["phases:HMX"] == 10 + 100 + 30 + 100 + 10
    assert optimum(with_forced_edges(gemm_phases()), TARGET) == 250
    assert lower_bound(gemm_phases(), TARGET).value == 250


def test_work_unordered_with_the_gate_fills_the_wait() -> None:
    # A fifth GEMM that depends on nothing runs while the norm does (optimum 10 + 250 +
    # 10). It is in no phase of the norm, so the chain counts 200 of the 250: no more
    # than head_tail (0 + 250 + 0, the free GEMM may start at once and end last).
    p = gemm_phases()
    p = replace(p, ops={**p.ops, "free": op("HMX", 50)})
    parts = phase_parts(p, TARGET)
    assert parts["phases:HMX"] == parts["head_tail:HMX"] == 250
    assert optimum(with_forced_edges(p), TARGET) == 270


def test_loads_before_the_first_gemm_are_a_head() -> None:
    # The weight's load (30, behind a 20 address load) comes before any GEMM; the store
    # of the last result after: 20 + 30 + 3 * 40 + 10, the optimum.
    p = problem({
        "ld0": op("DMA", 20, (rows("X", 0, 1),), (buf("i", "I"),)),
        "ldw": op("DMA", 30, (buf("i", "I"),), (buf("w", "W"),)),
        **{f"mm{k}": op("HMX", 40, (buf("w", "W"),), (buf(f"o{k}", "O"),)) for k in range(3)},
        "st": op("DMA", 10, tuple(buf(f"o{k}", "O") for k in range(3))),
    })
    parts = phase_parts(p, TARGET)
    assert parts["head_tail:HMX"] == parts["phases:HMX"] == 20 + 30 + 120 + 10
    assert optimum(with_forced_edges(p), TARGET) == 180


def test_a_chain_of_gates_through_ddr_counts_every_phase() -> None:
    # Three GEMM phases; each writes its results to a DDR temp tensor that the next
    # phase's vector op reads (DDR RAW), and that op's value feeds the next GEMMs: two
    # waits of 20, and 6 GEMMs of 40.
    ops = {"mm0.0": op("HMX", 40, (rows("X", 0, 4),), (rows("T", 0, 1),)),
           "mm0.1": op("HMX", 40, (rows("X", 0, 4),), (rows("T", 1, 2),))}
    for phase in (1, 2):
        ops[f"vec{phase}"] = op("HVX", 20, (rows("T", 2 * phase - 2, 2 * phase),),
                                (buf(f"v{phase}", "V"),))
        for k in (0, 1):
            row = 2 * phase + k
            ops[f"mm{phase}.{k}"] = op("HMX", 40, (buf(f"v{phase}", "V"),),
                                       (rows("T", row, row + 1),))
    p = problem(ops, temp_rows=6)
    parts = phase_parts(p, TARGET)
    assert parts["head_tail:HMX"] == 240
    assert parts["phases:HMX"] == 240 + 2 * 20
    assert optimum(with_forced_edges(p), TARGET) == 280


def test_traffic_that_crosses_a_phase_boundary_counts_its_bandwidth() -> None:
    # Two GEMMs, then two transfers that each need both GEMMs' results and the whole DDR
    # bandwidth (two DMA units, but 60 of 60 each: one at a time), a vector op on both
    # and a GEMM on that. The matrix engine alone sees 200 + 50 + 10 + 100; the
    # transfers start at 200 at the earliest and take 100 together: 410, the optimum.
    def transfer(name: str) -> Op:
        return Op("t", (Mode(50, {"DMA": 1}, {"BW": 60}),),
                  reads=(buf("a1", "A1"), buf("a2", "A2")), writes=(buf(name, name.upper()),))

    p = problem({
        "a1": op("HMX", 100, (rows("X", 0, 4),), (buf("a1", "A1"),)),
        "a2": op("HMX", 100, (rows("X", 0, 4),), (buf("a2", "A2"),)),
        "x1": transfer("x1"), "x2": transfer("x2"),
        "v": op("HVX", 10, (buf("x1", "X1"), buf("x2", "X2")), (buf("v", "V"),)),
        "b": op("HMX", 100, (buf("v", "V"),)),
    })
    assert phase_parts(p, TARGET)["phases:HMX"] == 410
    assert optimum(with_forced_edges(p), TARGET) == 410
    assert lower_bound(p, TARGET).value == 410


def test_the_single_writer_of_a_value_orders_its_readers() -> None:
    p = gemm_phases()
    index = {name: i for i, name in enumerate(p.ops)}
    edges = set(map(tuple, forced_edges(p).tolist()))
    assert (index["ld"], index["mm1"]) in edges
    assert (index["mm1"], index["norm"]) in edges and (index["mm2"], index["norm"]) in edges
    assert (index["mm1"], index["mm2"]) not in edges  # both only read A


def test_a_value_two_ops_write_orders_nothing() -> None:
    p = problem({"w1": op("DMA", 10, (), (buf("b", "v"),)),
                 "w2": op("DMA", 10, (), (buf("b", "v"),)),
                 "r": op("HVX", 10, (buf("b", "v"),))})
    assert forced_edges(p).tolist() == []


def test_a_write_without_value_may_be_the_one_a_read_sees() -> None:
    # FORMATS.md: values are not compared where the write a read sees has none. So the
    # writer of "v" need not precede the reader: the checker accepts r before w1.
    p = problem({"w0": op("DMA", 10, (), (buf("b", None),)),
                 "r": op("HVX", 10, (buf("b", "v"),)),
                 "w1": op("DMA", 10, (), (buf("b", "v"),))})
    assert forced_edges(p).tolist() == []
    placed = {"w0": (0, 10, "DMA"), "r": (10, 20, "HVX"), "w1": (20, 30, "DMA")}
    schedule = Schedule(TARGET, p, {name: OpPlacement(0, s, e, {lane: (0,)})
                                    for name, (s, e, lane) in placed.items()},
                        {"b": BufferPlacement(0, 0, 30)}, 30)
    assert verify(schedule) == []


def test_a_writer_that_does_not_cover_the_read_is_not_the_one_it_sees() -> None:
    partial = Access(buffer="b", bytes=(0, 8), value="v")
    p = problem({"w1": op("DMA", 10, (), (partial,)),
                 "w2": op("DMA", 10, (), (buf("b", "v"),)),
                 "r": op("HVX", 10, (buf("b", "v"),))})
    assert forced_edges(p).tolist() == [[1, 2]]


def test_ddr_writes_precede_every_read_that_meets_them() -> None:
    p = problem({"w0": op("DMA", 10, (), (rows("T", 0, 2),)),
                 "w1": op("DMA", 10, (), (rows("T", 2, 4),)),
                 "r": op("DMA", 10, (rows("T", 1, 3),)),
                 "r0": op("DMA", 10, (rows("T", 0, 1),))}, temp_rows=4)
    assert forced_edges(p).tolist() == [[0, 2], [0, 3], [1, 2]]


def test_a_mode_that_takes_no_time_may_draw_more_than_the_budget() -> None:
    # An empty window draws nothing (FORMATS.md), so the norm may take 0 and the phases
    # meet: only a mode asking more units than the target has is never usable.
    p = gemm_phases()
    fast = Op("t", (Mode(30, {"HVX": 1}), Mode(0, {"HVX": 1}, {"BW": 99}),
                    Mode(0, {"HVX": 3})), reads=p.ops["norm"].reads, writes=p.ops["norm"].writes)
    p = replace(p, ops={**p.ops, "norm": fast})
    assert phase_parts(p, TARGET)["phases:HMX"] == 220
    placed = {"ld": (0, 10, "DMA", 0), "mm1": (10, 60, "HMX", 0), "mm2": (60, 110, "HMX", 0),
              "norm": (110, 110, "HVX", 1), "mm3": (110, 160, "HMX", 0),
              "mm4": (160, 210, "HMX", 0), "st": (210, 220, "DMA", 0)}
    schedule = Schedule(TARGET, p, {name: OpPlacement(mode, s, e, {lane: (0,)})
                                    for name, (s, e, lane, mode) in placed.items()},
                        {b: BufferPlacement(16 * k, 0, 220) for k, b in enumerate(p.buffers)},
                        220)
    assert verify(schedule) == []


def test_forced_edges_in_a_cycle_give_no_part() -> None:
    p = problem({"a": op("HMX", 10, (buf("y", "Y"),), (buf("x", "X"),)),
                 "b": op("HMX", 10, (buf("x", "X"),), (buf("y", "Y"),))})
    assert phase_parts(p, TARGET) == {}


def test_fewer_gates_give_a_lower_or_equal_figure() -> None:
    full = phase_parts(gemm_phases(), TARGET)
    assert phase_parts(gemm_phases(), TARGET, max_gates=0) == {
        **full, "phases:HMX": full["head_tail:HMX"], "phases:HVX": full["head_tail:HVX"],
        "phases:DMA": full["head_tail:DMA"]}


def with_forced_edges(p: Problem) -> Problem:
    """``p`` with the orders FORMATS.md forces written as ``after`` edges, derived here
    from the rules directly (the test's own reading, not the module's): DDR_RAW from
    every write of a temp region to every read meeting it; STALE_READ from the only
    other op that writes, over all the bytes read, the value read or none."""
    after = set(p.after)
    for reader, r in p.ops.items():
        for access in r.reads:
            if access.tensor == "T":
                (lo, hi), = access.box or ((0, 1 << 30),)
                after.update((writer, reader) for writer, w in p.ops.items()
                             for out in w.writes if out.tensor == "T" and writer != reader
                             and (out.box or ((0, 1 << 30),))[0][0] < hi
                             and lo < (out.box or ((0, 1 << 30),))[0][1])
            elif access.buffer is not None:
                lo, hi = access.bytes or (0, 16)
                seen = {writer for writer, w in p.ops.items() for out in w.writes
                        if writer != reader and out.buffer == access.buffer
                        and (out.bytes or (0, 16))[0] <= lo and hi <= (out.bytes or (0, 16))[1]
                        and (out.value in (None, access.value) or access.value is None)}
                if len(seen) == 1:
                    after.add((seen.pop(), reader))
    return replace(p, after=tuple(sorted(after)))


@st.composite
def dataflow_problems(draw: st.DrawFn) -> Problem:
    """Up to 7 ops on three lane kinds (one or two modes each); each op may write a
    buffer value, sometimes rewritten by a second op (with the same value or none, so no
    order is forced), or a row of a DDR temp tensor; later ops read values and row
    ranges; a few ``after`` edges. Reads point back only, so the forced orders are
    acyclic."""
    count = draw(st.integers(2, 7))
    ops: dict[str, Op] = {}
    values: list[str] = []  # buffer names, one value each (its name in capitals)
    temp = 0
    for i in range(count):
        modes = []
        for _ in range(draw(st.integers(1, 2))):
            lane = draw(st.sampled_from(KINDS))
            units = draw(st.integers(1, TARGET.lanes[lane]))
            budgets = {"BW": draw(st.integers(1, 60))} if draw(st.booleans()) else {}
            modes.append(Mode(draw(st.integers(0, 20)), {lane: units}, budgets))
        reads: list[Access] = []
        if values:
            for name in draw(st.lists(st.sampled_from(values), max_size=2, unique=True)):
                reads.append(buf(name, name.upper()))
        if temp:
            lo = draw(st.integers(0, temp - 1))
            if draw(st.booleans()):
                reads.append(rows("T", lo, draw(st.integers(lo + 1, temp))))
        writes: list[Access] = []
        kind = draw(st.sampled_from(["buffer", "again", "blank", "ddr", "none"]))
        if kind == "buffer" or (kind in ("again", "blank") and not values):
            values.append(f"b{i}")
            writes.append(buf(f"b{i}", f"B{i}"))
        elif kind in ("again", "blank"):
            name = draw(st.sampled_from(values))
            writes.append(buf(name, name.upper() if kind == "again" else None))
        elif kind == "ddr":
            writes.append(rows("T", temp, temp + 1))
            temp += 1
        ops[f"o{i}"] = Op("t", tuple(modes), reads=tuple(reads), writes=tuple(writes))
    names = list(ops)
    edges = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names))
                          .filter(lambda e: names.index(e[0]) < names.index(e[1])),
                          max_size=3))
    return problem(ops, tuple(dict.fromkeys(edges)), temp_rows=temp)


@settings(max_examples=examples(1))
@given(dataflow_problems())
def test_the_parts_never_exceed_the_optimum(p: Problem) -> None:
    parts = phase_parts(p, TARGET)
    best = optimum(with_forced_edges(p), TARGET)
    assert max(parts.values(), default=0) <= best, (parts, best, p)
    assert all(parts[f"phases:{k}"] >= parts[f"head_tail:{k}"] for k in KINDS
               if f"phases:{k}" in parts)


@st.composite
def phased_problems(draw: st.DrawFn) -> Problem:
    """Layers of ops that alternate between GEMM-like work (HMX, sometimes with an HVX
    mode too) and vector work (HVX), up to 10 ops: each op reads the value of one or more
    ops of the layer before (a buffer it alone writes, or a DDR temp row), so vector ops
    gate the next GEMMs, fully or in part; an optional load first and a free GEMM."""
    ops: dict[str, Op] = {}
    previous: list[str] = []
    rows_written = 0
    for layer in range(draw(st.integers(2, 4))):
        current = []
        for k in range(draw(st.integers(1, 3 if layer % 2 == 0 else 2))):
            name = f"l{layer}.{k}"
            if layer % 2 == 0:
                modes = [Mode(draw(st.integers(1, 30)), {"HMX": 1})]
                if draw(st.integers(0, 3)) == 0:
                    modes.append(Mode(draw(st.integers(10, 60)), {"HVX": 2}))
            else:
                modes = [Mode(draw(st.integers(0, 20)), {"HVX": draw(st.integers(1, 2))})]
            reads = []
            if previous:
                for source in draw(st.lists(st.sampled_from(previous), min_size=1,
                                            max_size=len(previous), unique=True)):
                    row = int(source.split("@")[1]) if "@" in source else None
                    reads.append(rows("T", row, row + 1) if row is not None
                                 else buf(source, source.upper()))
            if draw(st.booleans()):
                write, label = rows("T", rows_written, rows_written + 1), \
                    f"{name}@{rows_written}"
                rows_written += 1
            else:
                write, label = buf(name, name.upper()), name
            ops[name] = Op("t", tuple(modes), reads=tuple(reads), writes=(write,))
            current.append(label)
        previous = current
        if len(ops) >= 8:
            break
    if draw(st.booleans()):
        ops["free"] = op("HMX", draw(st.integers(1, 30)))
    return problem(ops, temp_rows=rows_written)


@settings(max_examples=examples(1))
@given(phased_problems())
def test_the_parts_never_exceed_the_optimum_of_phased_work(p: Problem) -> None:
    parts = phase_parts(p, TARGET)
    best = optimum(with_forced_edges(p), TARGET)
    assert max(parts.values(), default=0) <= best, (parts, best, p)
