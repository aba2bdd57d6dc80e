"""Hypothesis strategies: random targets, problems, and a legal schedule for each.

Why a generator of our own: the checker must be judged against schedules whose legality
does not depend on the search being right. So the legal schedule is built constructively,
here, from the rules of FORMATS.md alone:

1. a target (1-3 lane kinds of 1-3 units, 0-2 budgets, 1-2 memories with an alignment);
2. tasks, each with an optional iteration ``space`` cut into a grid whose cells become the
   ops' ``space`` boxes (COVERAGE holds by construction), plus a few ops without space;
3. ops with 1-3 modes, ``after`` edges from a lower to a higher op index (a DAG);
4. a list scheduler in op-index order: each op starts at the first tick after its
   predecessors' ends and a drawn release time at which enough units of every lane kind
   it needs are free for its whole window (LANE_OVERLAP, UNITS, AFTER hold);
5. budget capacities and memory capacities derived afterwards from the peak use (or the
   largest 64-bit integer);
6. buffers split into byte segments; each segment lives through a chain of "epochs": one
   writer, then readers that start after it ends, then the next writer starts after all
   those readers end (or is one of them, updating in place). STALE_READ and WRITE_RACE
   hold by construction; ``[alloc, free)`` spans every access (LIFETIME); addresses come
   from a first-fit allocator that never lets two live buffers share a byte (ALIAS);
7. DDR tensors: inputs read anywhere; output/temp tensors split among tasks along their
   first dimension and gridded among the owning task's ops (OUTPUT holds), then read
   only by ops that start after every write of the region they read (DDR_RAW holds).

8. ``meta`` (free-form, ignored) on any object that may carry it, with odd contents.

Every draw is small and every count shrinks towards zero, so a failing example shrinks to
a handful of ops with one or two buffers. All times are positive-length windows: an op's
duration is at least 1 tick, which keeps the legality arguments above simple.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "LANE_NAMES", "BUDGET_NAMES", "MEMORY_NAMES", "legal_schedules", "targets", "problems",
    "feasible_instances", "Box", "box_cells", "cut_points",
]

LANE_NAMES = ("DMA", "HVX", "HMX")
BUDGET_NAMES = ("DDR_BW", "PWR")
MEMORY_NAMES = ("VTCM", "L2")

Box = list[list[int]]
#: The largest figure FORMATS.md allows (a signed 64-bit integer); capacities may be it.
MAX_INT = 2**63 - 1


def box_cells(box: Box) -> set[tuple[int, ...]]:
    """Every index tuple inside ``box`` (empty if any dimension is empty)."""
    return set(itertools.product(*(range(lo, hi) for lo, hi in box)))


@st.composite
def cut_points(draw: st.DrawFn, extent: int, pieces: int) -> list[tuple[int, int]]:
    """Split ``[0, extent)`` into ``pieces`` non-empty consecutive intervals."""
    inner = draw(st.lists(st.integers(1, extent - 1), min_size=pieces - 1,
                          max_size=pieces - 1, unique=True)) if pieces > 1 else []
    bounds = [0, *sorted(inner), extent]
    return [(bounds[i], bounds[i + 1]) for i in range(pieces)]


@st.composite
def _grid(draw: st.DrawFn, shape: list[int], max_cells: int) -> list[Box]:
    """Cut a box ``[0, shape)`` into at most ``max_cells`` grid cells (row-major)."""
    per_dim = []
    budget = max(1, max_cells)
    for extent in shape:
        pieces = draw(st.integers(1, max(1, min(extent, budget))))
        budget //= pieces
        per_dim.append(draw(cut_points(extent, pieces)) if extent > 0 else [(0, 0)])
    return [[list(iv) for iv in cell] for cell in itertools.product(*per_dim)]


@dataclass
class _Op:
    name: str
    task: str
    modes: list[dict[str, Any]]
    space: Box | None = None
    reads: list[dict[str, Any]] = field(default_factory=list)
    writes: list[dict[str, Any]] = field(default_factory=list)
    mode: int = 0
    start: int = 0
    end: int = 0
    units: dict[str, list[int]] = field(default_factory=dict)


def _overlaps(a0: int, a1: int, b0: int, b1: int) -> bool:
    return a0 < b1 and b0 < a1


@st.composite
def legal_schedules(draw: st.DrawFn, max_ops: int = 10, max_buffers: int = 4,
                    max_tensors: int = 3, *, fit_modes: bool = False,
                    task_barriers: bool = False) -> dict[str, Any]:
    """A legal ``npu-schedule/1`` document (target and problem embedded), built as above.

    ``fit_modes``: every mode of every op fits the target on its own (budget capacities
    cover the largest draw of any mode, not only of the chosen ones), for consumers that
    refuse a problem with a mode that can never run. ``task_barriers``: each task starts
    after every op of the tasks before it has ended, so the schedule is also a witness
    that the problem is feasible with a barrier between consecutive tasks.
    """
    # --- target structure (capacities come at the end, from the schedule's peak use)
    lanes = {name: draw(st.integers(1, 3), label=f"units of {name}")
             for name in LANE_NAMES[:draw(st.integers(1, 3), label="lane kinds")]}
    budget_names = list(BUDGET_NAMES[:draw(st.integers(0, 2), label="budgets")])
    mem_align = {name: draw(st.sampled_from([1, 2, 4, 8]), label=f"align of {name}")
                 for name in MEMORY_NAMES[:draw(st.integers(1, 2), label="memories")]}

    # --- tasks and their ops; a task's space is gridded into its ops' spaces
    ops: list[_Op] = []
    tasks: dict[str, dict[str, Any]] = {}
    for k in range(draw(st.integers(1, 3), label="tasks")):
        remaining = max_ops - len(ops)
        if remaining <= 0:
            break
        name = f"t{k}"
        task: dict[str, Any] = {"kind": draw(st.sampled_from(["gemm", "vec", "copy"]))}
        spaces: list[Box | None] = []
        if draw(st.booleans(), label=f"{name} has space"):
            shape = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 2)))]
            task["space"] = [[0, n] for n in shape]
            spaces = list(draw(_grid(shape, remaining)))
        n_plain = draw(st.integers(0 if spaces else 1, max(0, min(2, remaining - len(spaces)))))
        spaces += [None] * n_plain
        if draw(st.booleans()):
            task["params"] = {"note": "free-form, ignored by the checker"}
        tasks[name] = task
        for i, space in enumerate(spaces):
            ops.append(_Op(name=f"{name}.op{i}", task=name, space=space,
                           modes=[draw(_modes(lanes, budget_names))
                                  for _ in range(draw(st.integers(1, 3)))]))

    # --- after edges: lower index -> higher index, so the placement order respects them
    after: list[tuple[int, int]] = []
    if len(ops) > 1:
        for _ in range(draw(st.integers(0, min(4, len(ops))), label="after edges")):
            i = draw(st.integers(0, len(ops) - 2))
            j = draw(st.integers(i + 1, len(ops) - 1))
            if (i, j) not in after:
                after.append((i, j))

    # --- list scheduling in index order
    for j, op in enumerate(ops):
        op.mode = draw(st.integers(0, len(op.modes) - 1), label="mode")
        mode = op.modes[op.mode]
        length = mode["duration"] + draw(st.sampled_from([0, 0, 0, 1, 2]), label="slack")
        barrier = [o.end for o in ops[:j] if o.task != op.task] if task_barriers else []
        t = max([ops[i].end for i, k in after if k == j] + barrier
                + [draw(st.integers(0, 4), label="release")])
        while True:
            free = {lane: [u for u in range(lanes[lane])
                           if not any(lane in o.units and u in o.units[lane]
                                      and _overlaps(t, t + length, o.start, o.end)
                                      for o in ops[:j])]
                    for lane in mode.get("lanes", {})}
            if all(len(free[lane]) >= n for lane, n in mode.get("lanes", {}).items()):
                break
            t += 1
        op.start, op.end = t, t + length
        for lane, n in mode.get("lanes", {}).items():
            if n:
                order = draw(st.permutations(free[lane]))
                op.units[lane] = sorted(order[:n])

    makespan = max(op.end for op in ops)
    budgets = {}
    for b in budget_names:
        peak = max(sum(op.modes[op.mode].get("budgets", {}).get(b, 0)
                       for op in ops if op.start <= t < op.end) for t in range(makespan))
        if fit_modes:
            peak = max([peak] + [m.get("budgets", {}).get(b, 0) for o in ops for m in o.modes])
        budgets[b] = max(1, peak) + draw(st.integers(0, 2) | st.just(MAX_INT - max(1, peak)),
                                         label=f"headroom of {b}")

    # --- buffers: segments, epochs of one writer and its readers, then addresses
    buffers: dict[str, dict[str, Any]] = {}
    placements: dict[str, dict[str, int]] = {}
    for b in range(draw(st.integers(0, max_buffers), label="buffers")):
        name = f"b{b}"
        seg_sizes = [draw(st.integers(1, 6)) for _ in range(draw(st.integers(1, 2)))]
        size = sum(seg_sizes) + draw(st.sampled_from([0, 0, 1, 3]), label="spare bytes")
        buffers[name] = {"memory": draw(st.sampled_from(sorted(mem_align))),
                         "size": size, "align": draw(st.sampled_from([1, 2, 4]))}
        lo = 0
        touched: list[_Op] = []
        for s, seg in enumerate(seg_sizes):
            touched += draw(_segment_epochs(ops, name, s, (lo, lo + seg), size))
            lo += seg
        first = min(op.start for op in touched)
        last = max(op.end for op in touched)
        placements[name] = {"offset": 0,
                            "alloc": max(0, first - draw(st.integers(0, 2))),
                            "free": last + draw(st.integers(0, 2))}
    capacities = {}
    for mem, align in mem_align.items():
        placed: list[str] = []
        for name, buf in buffers.items():
            if buf["memory"] != mem:
                continue
            step = math.lcm(align, buf["align"])
            p = placements[name]
            k = draw(st.integers(0, 2), label="address gap")
            while any(_overlaps(p["alloc"], p["free"], placements[o]["alloc"],
                                placements[o]["free"])
                      and _overlaps(k * step, k * step + buf["size"], placements[o]["offset"],
                                    placements[o]["offset"] + buffers[o]["size"])
                      for o in placed):
                k += 1
            p["offset"] = k * step
            placed.append(name)
        top = max([placements[n]["offset"] + buffers[n]["size"] for n in placed], default=1)
        capacities[mem] = top + draw(st.integers(0, 8) | st.just(MAX_INT - top),
                                     label=f"spare of {mem}")

    # --- DDR tensors
    tensors: dict[str, dict[str, Any]] = {}
    for i in range(draw(st.integers(0, max_tensors), label="tensors")):
        role = draw(st.sampled_from(["input", "output", "temp"]))
        name = f"{role[:3]}{i}"
        shape = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 2)))]
        tensors[name] = {"shape": shape, "dtype": "f16", "role": role}
        if role == "input":
            for _ in range(draw(st.integers(0, 2), label="input reads")):
                op = draw(st.sampled_from(ops))
                op.reads.append({"tensor": name, "box": draw(_sub_box(shape))})
            continue
        draw(_produce_tensor(ops, tasks, name, shape))

    doc_problem: dict[str, Any] = {
        "format": "npu-problem/1", "name": "fuzz", "tensors": tensors, "tasks": tasks,
        "buffers": buffers, "ops": {op.name: _op_dict(op) for op in ops},
        "after": [[ops[i].name, ops[j].name] for i, j in after]}
    document = {
        "format": "npu-schedule/1",
        "target": {"format": "npu-target/1", "name": "fuzz", "time_unit": "ns",
                   "lanes": lanes, "budgets": budgets,
                   "memories": {m: {"capacity_bytes": capacities[m], "alignment_bytes": a}
                                for m, a in mem_align.items()},
                   "costs": {}},
        "problem": doc_problem,
        "ops": {op.name: {"mode": op.mode, "start": op.start, "end": op.end,
                          "units": op.units} for op in ops},
        "buffers": placements,
        "makespan": makespan,
        "meta": {"solver": "tests/fuzz", "status": "LEGAL_BY_CONSTRUCTION"},
    }
    if draw(st.booleans(), label="meta anywhere"):
        for site in _meta_sites(document):
            if draw(st.booleans(), label="meta here"):
                site["meta"] = draw(META_VALUES, label="meta")
    return document


#: ``meta`` contents: free-form objects, ignored by every rule (FORMATS.md, Boundaries).
META_VALUES = st.sampled_from([{}, {"note": "free-form"},
                               {"figures": [1, 2.5, None, True], "nested": {"a": {"b": []}}}])


def _meta_sites(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object of a schedule document that may carry ``meta``: the documents, memory
    entries, tensors, tasks, buffers, ops, modes, accesses, op and buffer placements."""
    target, problem = doc["target"], doc["problem"]
    ops = list(problem["ops"].values())
    return [doc, target, problem, *target["memories"].values(),
            *problem["tensors"].values(), *problem["tasks"].values(),
            *problem["buffers"].values(), *ops,
            *(mode for op in ops for mode in op["modes"]),
            *(access for op in ops for key in ("reads", "writes")
              for access in op.get(key, [])),
            *doc["ops"].values(), *doc["buffers"].values()]


@st.composite
def _modes(draw: st.DrawFn, lanes: dict[str, int], budgets: list[str]) -> dict[str, Any]:
    """One mode: a duration >= 1, some lane kinds with unit counts, some budget draws."""
    mode: dict[str, Any] = {"duration": draw(st.integers(1, 4), label="duration")}
    used = draw(st.lists(st.sampled_from(sorted(lanes)), unique=True, max_size=2))
    if used:
        mode["lanes"] = {lane: draw(st.integers(1, lanes[lane])) for lane in used}
    drawn = draw(st.lists(st.sampled_from(budgets), unique=True)) if budgets else []
    if drawn:
        mode["budgets"] = {b: draw(st.integers(1, 4)) for b in drawn}
    return mode


@st.composite
def _sub_box(draw: st.DrawFn, shape: list[int]) -> Box:
    """A non-empty box inside ``[0, shape)``."""
    box = []
    for extent in shape:
        lo = draw(st.integers(0, extent - 1))
        box.append([lo, draw(st.integers(lo + 1, extent))])
    return box


@st.composite
def _segment_epochs(draw: st.DrawFn, ops: list[_Op], buffer: str, seg: int,
                    span: tuple[int, int], size: int) -> list[_Op]:
    """Give one byte segment a legal history of writes and reads; return the ops touching it.

    Epoch ``e``: writer ``W_e`` writes the whole segment with tag ``v_e``; readers start at
    or after ``W_e.end`` and read a sub-range with tag ``v_e``; ``W_{e+1}`` starts at or
    after ``W_e.end`` and after every other reader's end (it may itself be a reader: an
    in-place update). So the last write a reader sees is ``W_e``, it covers the read, and
    nobody else writes the segment until the reader ends.
    """
    touched: list[_Op] = []
    writer: _Op | None = None
    readers: list[_Op] = []
    for e in range(draw(st.integers(1, 3), label="epochs")):
        if writer is None:
            eligible = ops
        else:
            w_end = writer.end
            eligible = [o for o in ops
                        if o.start >= max([w_end] + [r.end for r in readers if r is not o])]
        if not eligible:
            break
        writer = draw(st.sampled_from(eligible), label="writer")
        value = f"{buffer}.s{seg}@{e}"
        writer.writes.append(_buffer_access(buffer, span, size, value))
        touched.append(writer)
        after_write = [o for o in ops if o.start >= writer.end]
        readers = draw(st.lists(st.sampled_from(after_write), unique_by=lambda o: o.name,
                                max_size=3), label="readers") if after_write else []
        for reader in readers:
            lo = draw(st.integers(span[0], span[1] - 1))
            hi = draw(st.integers(lo + 1, span[1]))
            reader.reads.append(_buffer_access(buffer, (lo, hi), size, value))
            touched.append(reader)
    return touched


def _buffer_access(buffer: str, span: tuple[int, int], size: int,
                   value: str) -> dict[str, Any]:
    access: dict[str, Any] = {"buffer": buffer}
    if span != (0, size):
        access["bytes"] = list(span)
    access["value"] = value
    return access


@st.composite
def _produce_tensor(draw: st.DrawFn, ops: list[_Op], tasks: dict[str, dict[str, Any]],
                    name: str, shape: list[int]) -> None:
    """Write every element of an output/temp tensor exactly once, then add safe reads.

    The first dimension is cut into up to one part per task; each part belongs to a
    distinct task (its ``outputs`` box, when listed) and is gridded among that task's ops.
    """
    owners = draw(st.permutations(sorted(tasks)))
    owners = [t for t in owners if any(o.task == t for o in ops)]
    parts = draw(cut_points(shape[0], draw(st.integers(1, min(len(owners), shape[0])))))
    writes: list[tuple[Box, _Op]] = []
    for (lo, hi), owner in zip(parts, owners, strict=False):
        part = [[lo, hi]] + [[0, n] for n in shape[1:]]
        if draw(st.booleans(), label="listed in outputs"):
            tasks[owner].setdefault("outputs", {})[name] = part
        own_ops = [o for o in ops if o.task == owner]
        sub_shape = [hi - lo] + shape[1:]
        for cell in draw(_grid(sub_shape, 4)):
            cell[0] = [cell[0][0] + lo, cell[0][1] + lo]
            writer = draw(st.sampled_from(own_ops), label="tensor writer")
            writer.writes.append({"tensor": name, "box": cell})
            writes.append((cell, writer))
    for _ in range(draw(st.integers(0, 3), label="tensor reads")):
        box = draw(_sub_box(shape))
        ready = max(w.end for cell, w in writes if box_cells(cell) & box_cells(box))
        eligible = [o for o in ops if o.start >= ready]
        if eligible:
            draw(st.sampled_from(eligible)).reads.append({"tensor": name, "box": box})


def _op_dict(op: _Op) -> dict[str, Any]:
    d: dict[str, Any] = {"task": op.task}
    if op.space is not None:
        d["space"] = op.space
    d["modes"] = op.modes
    if op.reads:
        d["reads"] = op.reads
    if op.writes:
        d["writes"] = op.writes
    return d


def targets() -> st.SearchStrategy[dict[str, Any]]:
    """Random ``npu-target/1`` documents (those of the legal schedules)."""
    return legal_schedules().map(lambda doc: doc["target"])


def problems() -> st.SearchStrategy[dict[str, Any]]:
    """Random ``npu-problem/1`` documents, each feasible on its target (see below)."""
    return legal_schedules().map(lambda doc: doc["problem"])


def feasible_instances(max_ops: int = 10, *, task_barriers: bool = False
                       ) -> st.SearchStrategy[dict[str, Any]]:
    """A legal schedule whose embedded target and problem form a feasible instance (the
    schedule is the witness) in which every mode fits the target."""
    return legal_schedules(max_ops=max_ops, fit_modes=True, task_barriers=task_barriers)
