"""What the phase parts and the ``windows`` part add to the lower bound of each bundled
decoder layer, and what they cost (docs/bounds.md).

For the Llama-3.2-1B and Qwen2.5-0.5B layers (prefill 128 tokens, decode 1 token) on
hexagon-v75 and v79, prints: ops; the bound without the new parts (``before``: the
largest of the other parts, and its name); the largest ``head_tail:K`` and
``phases:K`` (and K); ``windows``; the bound with them; their ratio; the seconds the
whole bound took and the seconds the phase parts and ``windows`` take alone (wall clock,
then all three again in CPU time of the process, which a machine shared with other jobs
inflates less). ``--imported`` adds
the Llama-3.2-1B prefill layer of the ONNX corpus tiled into about 10,000 ops (as
``bench_prepare.py`` builds it), for the time at that size. Figures, not pass/fail; times
are noisy on a shared machine.

    python benchmarks/bench_bounds.py                   # the eight bundled layers
    python benchmarks/bench_bounds.py --imported 768    # and the imported layer, seq 768
    python benchmarks/bench_bounds.py --json figures.json
    python benchmarks/bench_bounds.py --witness         # and a legal schedule near it

``--witness`` also builds a schedule from what the bound sees alone, to show how close
the bound is where it works: the ``energy`` LP's mode mix made whole (two DMA queues, at
most one op at a time in the fast mode, so the bus never takes more than a fast and a
lean one together; which ops run fast is the greedy fractional knapsack that
fills both queues equally; the fast ops all on one queue, the lean ones on the other or
on either, whichever ends sooner), each other op in its cheapest mode, ops placed longest
forced tail first on their queue, then moved as late and again as early as they can go
(forward-backward improvement, three rounds), buffers at first-fit addresses. It knows
lanes, the bandwidth and the forced orders, not memory: where its buffers do not fit,
it is not a schedule (the verifier says ``MEM_RANGE``); where ``schedcheck``'s verifier
accepts it, the optimum lies between the bound and it. Not part of the search.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO, write_figures  # noqa: E402
from models.formats import Problem, Target  # noqa: E402

LAYERS = ("llama-3.2-1b-prefill", "llama-3.2-1b-decode", "qwen2.5-0.5b-prefill",
          "qwen2.5-0.5b-decode")
TARGETS = ("hexagon-v75", "hexagon-v79")
IMPORTED = REPO / "benchmarks" / "corpus" / "llama-layer-prefill-dynamo-op20.onnx"
NEW = ("head_tail:", "phases:", "windows")


def _largest(parts: dict[str, int], prefix: str) -> tuple[str, int]:
    found = [(value, name) for name, value in parts.items() if name.startswith(prefix)]
    value, name = max(found, default=(0, "-"))
    return name, value


def measure(name: str, problem: Problem, target: Target) -> dict[str, Any]:
    """One layer: the bound with and without the phase parts, and their times."""
    from schedsearch.engine.bounds.configurations import configuration_bound
    from schedsearch.engine.bounds.lower import energy_relaxation, lower_bound
    from schedsearch.engine.bounds.phases import phase_parts
    from schedsearch.engine.bounds.windows import window_part

    begin, cpu = time.perf_counter(), time.process_time()
    bound = lower_bound(problem, target)
    bound_s, bound_cpu = time.perf_counter() - begin, time.process_time() - cpu
    begin, cpu = time.perf_counter(), time.process_time()
    phase_parts(problem, target)
    phases_s, phases_cpu = time.perf_counter() - begin, time.process_time() - cpu
    relaxation = energy_relaxation(problem, target)
    begin, cpu = time.perf_counter(), time.process_time()
    if relaxation is not None:
        window_part(problem, target, relaxation.prices)
    windows_s, windows_cpu = time.perf_counter() - begin, time.process_time() - cpu
    before = {k: v for k, v in bound.parts.items() if not k.startswith(NEW)}
    if "configuration" not in before:  # left out against the new parts: as it was before
        configuration = configuration_bound(problem, target, known=max(before.values()))
        if configuration is not None:
            before["configuration"] = configuration
    old_part, old = max(((n, v) for n, v in before.items()), key=lambda item: item[1])
    head_tail_part, head_tail = _largest(bound.parts, "head_tail:")
    phases_part, phases = _largest(bound.parts, "phases:")
    return {"layer": name, "target": target.name, "ops": len(problem.ops), "before": old,
            "before_part": old_part, "head_tail": head_tail, "head_tail_part": head_tail_part,
            "phases": phases, "phases_part": phases_part,
            "windows": bound.parts.get("windows", 0), "bound": bound.value,
            "gain": bound.value / old if old else 1.0, "bound_s": bound_s,
            "bound_cpu_s": bound_cpu, "phases_s": phases_s, "phases_cpu_s": phases_cpu,
            "windows_s": windows_s, "windows_cpu_s": windows_cpu}


def _lean_split(problem: Problem, target: Target, shared: bool
                ) -> dict[str, tuple[int, int]] | None:
    """Per op, its mode and lane unit in the witness, or None where the layer is not of
    the shape the witness knows: ops of one lane unit each (in a mode of one unit), and
    on a lane kind of two units every op of several modes holding one fast mode and one
    lean one whose draws fit the budget together while two fast ones do not. The fast
    ops go on unit 0, the lean ones on unit 1 or, ``shared``, on either."""
    budgets = target.budgets
    choice: dict[str, tuple[int, int]] = {}
    split: list[tuple[float, str, int, int]] = []
    lean_total = 0
    for name, op in problem.ops.items():
        single = [i for i, m in enumerate(op.modes) if sum(m.lanes.values()) == 1]
        if not single:
            return None
        kind = next(iter(op.modes[single[0]].lanes))
        if len(op.modes) == 1 or target.lanes.get(kind) != 2:
            choice[name] = (min(single, key=lambda i: op.modes[i].duration), -1)
            continue
        fast = min(single, key=lambda i: op.modes[i].duration)
        lean = min(single, key=lambda i: sum(op.modes[i].budgets.values()))
        f, s = op.modes[fast], op.modes[lean]
        if not all(f.budgets.get(b, 0) + s.budgets.get(b, 0) <= c
                   and 2 * f.budgets.get(b, 0) > c for b, c in budgets.items()
                   if f.budgets.get(b, 0)):
            return None
        choice[name] = (lean, -1 if shared else 1)  # at most one fast op at a time
        lean_total += s.duration
        split.append(((s.duration - f.duration) / (s.duration + f.duration), name, fast,
                      f.duration + s.duration))
    room = lean_total
    for _, name, fast, both in sorted(split, reverse=True):
        if both <= room:
            choice[name] = (fast, 0)
            room -= both
    return choice


def witness(problem: Problem, target: Target) -> tuple[int, str]:
    """The witness schedule's makespan and the verifier's verdict: ``legal``, the codes
    of the rules it breaks (``MEM_RANGE``: its buffers do not fit), or ``-`` where the
    layer is not of the shape it knows (see the module docstring). Of the lean ops on
    their own queue and on either, the shorter legal one (or the shorter)."""
    found = [_witness(problem, target, shared) for shared in (False, True)]
    return min(found, key=lambda f: (f[1] != "legal", f[1] == "-", f[0]))


def _witness(problem: Problem, target: Target, shared: bool) -> tuple[int, str]:
    import bisect
    import heapq

    import numpy as np

    from checker import verify
    from models.formats import problem_to_dict, target_to_dict
    from schedsearch.engine.bounds.phases import forced_edges, forced_order

    choice = _lean_split(problem, target, shared)
    if choice is None:
        return 0, "-"
    names = list(problem.ops)
    n = len(names)
    modes = [problem.ops[name].modes[choice[name][0]] for name in names]
    duration = np.array([m.duration for m in modes], dtype=np.int64)
    kind = [next(iter(m.lanes)) for m in modes]
    pool = [(kind[i], choice[names[i]][1]) for i in range(n)]  # unit -1: any of the kind
    order = forced_order(problem, duration)
    if order is None:
        return 0, "-"
    edges = forced_edges(problem)
    succ: list[list[int]] = [[] for _ in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        succ[a].append(int(b))
        pred[b].append(int(a))

    def units(i: int) -> list[int]:
        return list(range(target.lanes[kind[i]])) if pool[i][1] < 0 else [pool[i][1]]

    def fit(busy: list[tuple[int, int]], d: int, edge: int, forward: bool) -> int:
        """The earliest start at or after ``edge`` (forward), or the latest start
        ending by ``edge``, clear of the sorted intervals ``busy``."""
        if forward:
            start = edge
            for lo, hi in busy:
                if lo >= start + d:
                    break
                start = max(start, hi)
            return start
        end = edge
        for lo, hi in reversed(busy):
            if hi <= end - d:
                break
            end = min(end, lo)
        return end - d

    def place(sequence: list[int], start: np.ndarray | None) -> tuple[np.ndarray, list]:
        """Each op of ``sequence`` as early (``start`` None) or as late as it can go."""
        busy = {(k, u): [] for k in target.lanes for u in range(target.lanes[k])}
        new = np.zeros(n, dtype=np.int64)
        unit = [0] * n
        horizon = int((start + duration).max()) if start is not None else 0
        for i in sequence:
            d = int(duration[i])
            if start is None:
                edge = max((int(new[p] + duration[p]) for p in pred[i]), default=0)
                s, u = min((fit(busy[kind[i], u], d, edge, True), u) for u in units(i))
            else:
                edge = min((int(new[j]) for j in succ[i]), default=horizon)
                s, u = max((fit(busy[kind[i], u], d, edge, False), u) for u in units(i))
            new[i], unit[i] = s, u
            bisect.insort(busy[kind[i], u], (s, s + d))
        return (new - new.min() if start is not None else new), unit

    waiting = np.bincount(edges[:, 1], minlength=n)
    ready = [(-int(order.tail[i]), i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)
    sequence = []
    while ready:
        _, i = heapq.heappop(ready)
        sequence.append(i)
        for j in succ[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, (-int(order.tail[j]), j))
    start, unit = place(sequence, None)
    for _ in range(3):  # a successor ends later, or as late and deeper (zero durations)
        late, _ = place(list(np.lexsort((-order.level, -(start + duration)))), start)
        start, unit = place(list(np.lexsort((order.level, late))), None)
    end = start + duration
    life: dict[str, tuple[int, int]] = {}
    for i, name in enumerate(names):
        op = problem.ops[name]
        for access in (*op.reads, *op.writes):
            if access.buffer is not None:
                lo, hi = life.get(access.buffer, (int(start[i]), int(end[i])))
                life[access.buffer] = (min(lo, int(start[i])), max(hi, int(end[i])))
    placed: list[tuple[int, int, int, int]] = []
    buffers = {}
    for buffer, (alloc, free) in sorted(life.items(), key=lambda item: item[1]):
        align = max(target.memories[problem.buffers[buffer].memory].alignment_bytes, 1)
        size = -(-problem.buffers[buffer].size // align) * align
        offset = 0
        for lo, hi in sorted((o, o + z) for o, z, a, f in placed if a < free and alloc < f):
            if offset + size <= lo:
                break
            offset = max(offset, -(-hi // align) * align)
        placed.append((offset, size, alloc, free))
        buffers[buffer] = {"offset": offset, "alloc": alloc, "free": free}
    for buffer in problem.buffers:
        buffers.setdefault(buffer, {"offset": 0, "alloc": 0, "free": 0})
    document = {"format": "npu-schedule/1", "target": target_to_dict(target),
                "problem": problem_to_dict(problem), "buffers": buffers,
                "ops": {name: {"mode": choice[name][0], "start": int(start[i]),
                               "end": int(end[i]), "units": {kind[i]: [unit[i]]}}
                        for i, name in enumerate(names)},
                "makespan": int(end.max()), "meta": {"solver": "bench_bounds witness"}}
    report = verify(document)
    return int(end.max()), "legal" if report.legal else " ".join(sorted(report.codes()))


def imported_layer(seq: int) -> tuple[str, Problem, Target] | None:
    """The corpus's Llama-3.2-1B prefill layer at ``seq`` tokens, tiled (None if absent)."""
    if not IMPORTED.is_file():
        return None
    from models.onnx.lower import import_onnx
    from models.targets import load_target
    from models.workload import op_count, tile

    workload, _ = import_onnx(str(IMPORTED), {"seq": seq})
    target = load_target(workload.target)
    problem = tile(workload, target, max_ops=op_count(workload, target))
    return f"{IMPORTED.stem} seq {seq}", problem, target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--imported", type=int, metavar="SEQ",
                        help="also the imported Llama prefill layer at SEQ tokens (768: "
                             "about 10,000 ops)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures here")
    parser.add_argument("--witness", action="store_true",
                        help="also a schedule from what the bound sees (module docstring)")
    args = parser.parse_args(argv)
    from models.targets import load_target
    from models.workload import load_workload, tile

    cases = []
    for layer in LAYERS:
        for target_name in TARGETS:
            target = load_target(target_name)
            version = target_name.split("-")[-1]
            problem = tile(load_workload(f"{layer}-v75"), target)
            cases.append((f"{layer}-{version}", problem, target))
    if args.imported:
        found = imported_layer(args.imported)
        if found is None:
            print(f"(no {IMPORTED.relative_to(REPO)}: python benchmarks/onnx_corpus.py "
                  f"makes it)")
        else:
            cases.append(found)
    print("seconds on this machine (noisy when shared)")
    print(f"{'layer':<32} {'ops':>6} {'before':>10} {'(part)':<16} {'head_tail':>10} "
          f"{'phases':>10} {'(part)':<11} {'windows':>10} {'bound':>10} {'gain':>6} "
          f"{'bound s':>8} {'phases s':>8} {'win s':>6} {'cpu':>5} {'cpu':>5} {'cpu':>5}")
    rows = []
    for name, problem, target in cases:
        row = measure(name, problem, target)
        if args.witness:
            row["witness"], row["witness_verdict"] = witness(problem, target)
        rows.append(row)
        print(f"{name:<32} {row['ops']:>6} {row['before']:>10,} {row['before_part']:<16} "
              f"{row['head_tail']:>10,} {row['phases']:>10,} {row['phases_part']:<11} "
              f"{row['windows']:>10,} {row['bound']:>10,} {row['gain']:>6.3f} "
              f"{row['bound_s']:>8.2f} {row['phases_s']:>8.2f} {row['windows_s']:>6.2f} "
              f"{row['bound_cpu_s']:>5.2f} {row['phases_cpu_s']:>5.2f} "
              f"{row['windows_cpu_s']:>5.2f}")
        if args.witness:
            print(f"{'':<32} witness {row['witness']:,} "
                  f"({row['witness'] / row['bound']:.4f} of the bound): "
                  f"{row['witness_verdict']}")
    write_figures(args.json, {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
