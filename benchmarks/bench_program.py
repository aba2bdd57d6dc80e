"""Programs: lowering and ``verify-program`` at scale, and four runtime policies under noise.

Prints, as plain tables:

1. scale: a bundled workload scaled to about 8,000 ops (``models.workload.scaled``),
   solved, lowered and verified; and the checker's synthetic legal schedule of
   ``bench_checker.py`` at 100,000 ops, lowered and verified. Seconds are wall clock
   (and CPU: on a shared machine the two differ);
2. waits: per bundled example, needed orders, waits before and after the reduction,
   and (``--drops``) whether dropping each kept wait fails with the code it guards;
3. policies: per bundled example and coefficient of variation, the static makespan and
   P50/P95/P99 of the four runtime policies (``schedsearch.program.policies``), all under
   the same noise, ``--runs`` runs each; and the dynamic runtime once more with a free
   dispatch (``dispatch_ns = 0``: what its flexibility alone recovers).

    python benchmarks/bench_program.py [--runs 1000] [--cv 0.1 0.3] [--examples NAME ...]
                                       [--skip-scale] [--skip-policies] [--drops]
                                       [--synthetic-only] [--phases]

This prints figures; it passes or fails nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_checker import synthetic_schedule  # noqa: E402
from checker.program import verify_program  # noqa: E402
from models.cost import overheads  # noqa: E402
from models.formats import schedule_from_dict  # noqa: E402
from models.targets import load_target  # noqa: E402
from models.workload import example_names, load_workload, scaled, tile  # noqa: E402
from schedsearch.engine.search import solve  # noqa: E402
from schedsearch.paths import SolveOptions  # noqa: E402
from schedsearch.program import lower_report, program_to_dict  # noqa: E402
from schedsearch.program.policies import Policy, plan_policy  # noqa: E402
from schedsearch.program.simulate import Jitter, noise, run_plan  # noqa: E402
from schedsearch.program.stats import simulate, summarise  # noqa: E402


def _timed(work):  # noqa: ANN001, ANN202 - a thunk and whatever it returns
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def _roundtrip(document: dict) -> dict:
    return json.loads(json.dumps(document))


def program_phases(document: dict) -> list[tuple[str, float]]:
    """CPU seconds of each part of ``verify_program`` on ``document``, run as it runs them
    (the collector paused): the model, the schedule rules, the queues and waits, the
    happens-before graph, and each order rule (its needs, then judged)."""
    from checker.load import build_model, no_gc
    from checker.program import _Program
    from checker.rules import RULES
    from checker.rules.program_graph import Graph
    from checker.rules.program_orders import (
        after_needs,
        buffer_needs,
        ddr_needs,
        judge,
        reuse_needs,
    )

    rows: list[tuple[str, float]] = []

    def timed(name: str, work):  # noqa: ANN001, ANN202 - a thunk and whatever it returns
        began = time.process_time()
        result = work()
        rows.append((name, time.process_time() - began))
        return result

    with no_gc():
        model, _ = timed("model", lambda: build_model(document["schedule"]))
        timed("schedule rules", lambda: [rule.check(model) for rule in RULES])
        program = timed("queues and waits", lambda: _Program(document, model))
        graph = timed("graph", lambda: Graph(len(program.names), list(program.queues.values()),
                                             program.waits))
        index = program.index
        for name, needs in (("ORDER_AFTER", lambda: after_needs(model, graph, index)),
                            ("ORDER_RAW/WAW", lambda: buffer_needs(model, graph, index)),
                            ("ORDER_REUSE", lambda: reuse_needs(model, graph, index)),
                            ("ORDER_DDR", lambda: ddr_needs(model))):
            timed(name, lambda needs=needs: judge(needs(), graph, index))
    return rows


def scale_rows(target_ops: int, workload_name: str, solve_seconds: float,
               synthetic_only: bool = False, phases: bool = False) -> None:
    rows = []
    if not synthetic_only:
        workload = load_workload(workload_name)
        target = load_target(workload.target)
        base = len(tile(workload, target).ops)
        problem = tile(scaled(workload, target_ops / base), target)
        schedule = solve(problem, target, time_limit=solve_seconds)
        rows.append((f"{workload_name} x{target_ops / base:.1f} ({schedule.meta['solver']})",
                     schedule))
    rows.append(("bench_checker synthetic 100k", schedule_from_dict(synthetic_schedule(100_000))))
    print("\n## scale (wall s / cpu s; the machine is shared, so wall is noisy)\n")
    print(f"{'input':<34}{'ops':>8}{'needed':>9}{'waits':>8}{'lower s':>15}"
          f"{'verify-program s':>20}  legal")
    for label, timed_schedule in rows:
        lowering, lower_wall, lower_cpu = _timed(lambda s=timed_schedule: lower_report(s))
        document = _roundtrip(program_to_dict(lowering.program))
        report, verify_wall, verify_cpu = _timed(lambda d=document: verify_program(d))
        print(f"{label:<34}{len(timed_schedule.ops):>8}{lowering.needed:>9}"
              f"{lowering.waits_after:>8}{lower_wall:>8.2f}/{lower_cpu:<6.2f}"
              f"{verify_wall:>12.2f}/{verify_cpu:<6.2f}  {report.legal}")
        if phases:
            rows = program_phases(document)
            print("  CPU s by phase: " + ", ".join(f"{name} {cpu:.3f}" for name, cpu in rows)
                  + f" (sum {sum(cpu for _, cpu in rows):.3f})")


def wait_rows(examples: list[str], solve_seconds: float, drops: bool) -> dict:
    print("\n## waits per bundled example (searched schedule, "
          f"{solve_seconds:g} s of search)\n")
    header = f"{'example':<36}{'ops':>6}{'needed':>8}{'queues':>8}{'before':>8}{'after':>7}" \
             f"{'per op':>8}"
    print(header + ("  drops failing with their code" if drops else ""))
    programs = {}
    for name in examples:
        try:
            problem, target = _example(name)
            schedule = solve(problem, target, time_limit=solve_seconds)
        except Exception as error:  # noqa: BLE001 - a row that says why is the figure
            print(f"{name:<36}  skipped: {error}")
            continue
        lowering = lower_report(schedule)
        programs[name] = lowering.program
        line = (f"{name:<36}{len(schedule.ops):>6}{lowering.needed:>8}"
                f"{lowering.implied_by_queues:>8}{lowering.waits_before:>8}"
                f"{lowering.waits_after:>7}{lowering.waits_per_op:>8.2f}")
        if drops:
            document = _roundtrip(program_to_dict(lowering.program))
            caught = 0
            for (before, after), codes in lowering.guards.items():
                document["waits"][after].remove(before)
                caught += bool(verify_program(document).codes() & set(codes))
                document["waits"][after].append(before)
            line += f"  {caught}/{len(lowering.guards)}"
        print(line)
    return programs


def _example(name: str):  # noqa: ANN202 - (problem, target)
    from models.workload import load_problem_input

    return load_problem_input(name, None)


def policy_rows(programs: dict, cvs: list[float], runs: int, solve_seconds: float) -> None:
    print(f"\n## policies: {runs} runs each, same noise for all four (seed 0); makespans in "
          "the target's ticks (ns)\n")
    print("(the last column: the dynamic runtime with dispatch_ns = 0, what its flexibility "
          "alone recovers)\n")
    print(f"{'example':<36}{'CV':>5}{'static':>9}  " + "  ".join(
        f"{name + ' P50/P95/P99':>26}" for name in [*(p.value for p in Policy), "dyn@0"]))
    for name, program in programs.items():
        for cv in cvs:
            study = simulate(program, runs=runs, jitter=Jitter(cv), seed=0,
                             policies=tuple(Policy),
                             options=SolveOptions(time_limit=solve_seconds, seed=0))
            free = replace(overheads(program.schedule.target), dispatch_ns=0)
            ideal = plan_policy(program, Policy.DYNAMIC, SolveOptions(), free)
            results = [*study.results, summarise(ideal, run_plan(
                ideal.plan, noise(list(program.schedule.ops), runs, 0), runs, Jitter(cv)))]
            cells = [f"{r.percentile(50):>8.0f}/{r.percentile(95):>8.0f}/"
                     f"{r.percentile(99):>8.0f}" for r in results]
            print(f"{name:<36}{cv:>5.2f}{study.static_makespan:>9}  " + "  ".join(
                f"{c:>26}" for c in cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--cv", type=float, nargs="+", default=[0.1, 0.3])
    parser.add_argument("--examples", nargs="+", default=None)
    parser.add_argument("--solve-seconds", type=float, default=2.0)
    parser.add_argument("--scale-ops", type=int, default=8000)
    parser.add_argument("--scale-workload", default="gemm-rmsnorm-v75")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--skip-policies", action="store_true")
    parser.add_argument("--drops", action="store_true")
    parser.add_argument("--synthetic-only", action="store_true",
                        help="only the synthetic 100k row of the scale table, then stop")
    parser.add_argument("--phases", action="store_true",
                        help="also print the CPU seconds of each part of verify-program")
    args = parser.parse_args()
    if args.synthetic_only:
        scale_rows(args.scale_ops, args.scale_workload, 10.0, synthetic_only=True,
                   phases=args.phases)
        return
    if not args.skip_scale:
        scale_rows(args.scale_ops, args.scale_workload, 10.0, phases=args.phases)
    programs = wait_rows(args.examples or example_names(), args.solve_seconds, args.drops)
    if not args.skip_policies:
        policy_rows(programs, args.cv, args.runs, args.solve_seconds)


if __name__ == "__main__":
    main()
