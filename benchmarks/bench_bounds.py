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

``--witness`` also prints the search's split-bus schedule
(:mod:`schedsearch.engine.split_bus`), to show how close the bound is where it works: the
``energy`` LP's mode mix made whole (two DMA queues, at most one op at a time in the fast
mode; which ops run fast is the greedy fractional knapsack that fills both queues
equally), ops placed longest tail first, then moved as late and again as early as they
can go (forward-backward, three rounds), buffers at first-fit addresses. Where
``schedcheck``'s verifier accepts it, the optimum lies between the bound and it; ``-``
where the layer is not of that shape or the buffers do not fit.
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


def witness(problem: Problem, target: Target) -> tuple[int, str]:
    """The split-bus schedule's makespan (:mod:`schedsearch.engine.split_bus`, the
    search's own) and the verifier's verdict: ``legal`` or the codes of the rules it
    breaks, or ``-`` where the layer is not of the shape it knows or its buffers do not
    fit (see the module docstring)."""
    from checker import verify
    from models.formats import schedule_to_dict
    from schedsearch.engine.hazards import build_dag
    from schedsearch.engine.instance import build_instance
    from schedsearch.engine.modes import lean_split
    from schedsearch.engine.solution import to_schedule
    from schedsearch.engine.split_bus import split_bus_schedule

    inst = build_instance(problem, target)
    found = split_bus_schedule(inst, build_dag(inst), lean_split(inst))
    if found is None:
        return 0, "-"
    report = verify(schedule_to_dict(to_schedule(inst, found, {"solver": "split-bus"})))
    return found.makespan(inst), "legal" if report.legal else " ".join(sorted(report.codes()))


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
