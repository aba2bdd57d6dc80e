"""Where the gap lies: how much of the distance from the search's answer to the project's
lower bound is the bound being weak, and how much is the search (issue 32, item 1;
docs/search.md "Where the gap lies").

For each bundled decoder layer (Llama-3.2-1B and Qwen2.5-0.5B, prefill and decode, on
hexagon-v75 and v79), whole (scale ``full``) or scaled down (``h4``: 4 attention heads,
the hidden and intermediate sizes and the KV heads in proportion; ``t32``: 32 prefill
tokens; ``p128``: a 128-token KV cache for decode; e.g. ``h4t32``), prints:

- ``B``: the project's bound (``lower_bound``'s parts and the longest derived chain, as
  ``solve`` reports it, without CP-SAT's) and the part that decides it;
- ``A``: the search's answer (``solve_report`` at ``--limit``, ``--seed``, ``--workers``;
  reproducible unless ``--use-time``). On scaled layers the search runs as it does on
  the whole ones (no whole-model stage, which only problems of up to 200 ops get),
  unless ``--whole-model-stage``;
- ``P`` and ``U``: CP-SAT on the engine's model of the whole layer (memory relaxed to a
  cumulative, so its bound holds; hinted with ``A``; ``--cpsat-limit`` seconds of
  CP-SAT's own parallel search with ``--workers`` workers): the bound it proves (never
  below ``B``, given as the makespan's lower end) and the best answer it finds, kept only
  once the placement engine gives it addresses and the checker accepts it. ``P == U``
  is the optimum ``O``;
- relaxations (``--relax``; default the waiting lane kind alone, and the DMA queues with
  the DDR bandwidth): the same model with every other lane kind and budget unbounded,
  ``--relax-limit`` seconds each. Every legal schedule stays legal there, so a
  relaxation's proven bound is a bound (``P`` is the largest of all), and its best answer
  caps what that resource with every forced order can force: ``[P, U]`` per relaxation;
- the split of the gap ``A - B``: the bound's share ``(O - B) / (A - B)`` and the
  search's ``(A - O) / (A - B)``; without a proof, the bound's share lies in
  ``[(P - B), (U - B)] / (A - B)``;
- where the waiting lane kind (the one the binding part names, else the most loaded)
  is idle, in ``A`` and in ``U``: before its first op (``lead``), after its last
  (``tail``) and between (``inner``: its span minus its work over its units); beside
  them what every legal schedule has: the least lead and tail (the forced order's heads
  and tails) and the inner waits the bound sees (``phases:K - head_tail:K``). Where
  ``phases:K`` binds, ``A - B`` is the sum of the three excesses over the forced ones.

CP-SAT's model orders the writers of shared bytes as :mod:`schedsearch.engine.hazards`
picks; its bound holds for the problem only where those orders are forced. The column
``free`` counts derived orderings that the forced order does not imply (0 on every
bundled layer): where it is not 0 the row says so.

    python benchmarks/bench_gap.py --quick                       # a tiny layer, seconds
    python benchmarks/bench_gap.py --scales h4 h8 --cpsat-limit 90 --relax-limit 45
    python benchmarks/bench_gap.py --scales full --limit 60 --cpsat-limit 90
    python benchmarks/bench_gap.py --scales h8 --relax --json gap.json --markdown

CP-SAT proved nothing above ``B`` on any decoder layer, whole or scaled (docs/search.md
"Where the gap lies"); the rows bracket the split, and the idle gaps say where it lies.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import write_figures  # noqa: E402
from models.examples.decoders import MODELS, PHASES, Model, layer  # noqa: E402
from models.formats import Problem, Target, schedule_to_dict  # noqa: E402
from models.targets import load_target  # noqa: E402
from models.workload import load_workload, tile, workload_from_dict  # noqa: E402

LAYERS = ("llama-3.2-1b-prefill", "llama-3.2-1b-decode", "qwen2.5-0.5b-prefill",
          "qwen2.5-0.5b-decode")
TARGETS = ("hexagon-v75", "hexagon-v79")
_SCALE = re.compile(r"^(?:h(\d+))?(?:t(\d+))?(?:p(\d+))?$")
#: ``--quick``: one head, 32 tokens of Qwen prefill (74 ops), seconds per step.
QUICK = {"layers": ["qwen2.5-0.5b-prefill"], "targets": ["hexagon-v75"],
         "scales": ["h1t32"], "limit": 2.0, "cpsat_limit": 5.0, "relax_limit": 3.0}


@dataclass(frozen=True, slots=True)
class Case:
    """One layer on one target at one scale, tiled."""

    layer: str  # e.g. llama-3.2-1b-prefill
    target: Target
    scale: str  # "full" or a spec such as "h4t32"
    problem: Problem

    @property
    def label(self) -> str:
        return f"{self.layer}-{self.target.name.removeprefix('hexagon-')}"


def scaled_document(layer_name: str, scale: str) -> dict[str, Any]:
    """The workload document of ``layer_name`` (a bundled layer without its target
    suffix) at ``scale``: ``h<N>`` attention heads (hidden = N x head_dim, the
    intermediate size and the KV heads in the model's proportions, at least one KV
    head), ``t<N>`` prefill tokens, ``p<N>`` cached tokens for decode; what a spec leaves
    out stays as bundled."""
    match = _SCALE.match(scale)
    model_name, phase = layer_name.rsplit("-", 1)
    model = next((m for m in MODELS if m.name == model_name), None)
    tokens, past = next(((t, p) for name, t, p in PHASES if name == phase), (0, 0))
    if match is None or model is None or not tokens:
        raise ValueError(f"unknown layer {layer_name!r} or scale {scale!r}")
    heads, new_tokens, new_past = (int(g) if g else None for g in match.groups())
    if heads is not None:
        group = model.heads // model.kv_heads
        hidden = heads * model.head_dim
        intermediate = round(hidden * model.intermediate / model.hidden / 64) * 64
        model = Model(f"{model.name}-h{heads}", hidden, intermediate, heads,
                      max(1, heads // group), model.head_dim)
    if phase == "prefill" and new_tokens is not None:
        tokens = new_tokens
    if phase == "decode" and new_past is not None:
        past = new_past
    document = layer(model, phase, tokens, past)
    document["name"] = f"{layer_name}-{scale}"
    return document


def make_case(layer_name: str, target_name: str, scale: str) -> Case:
    target = load_target(target_name)
    if scale == "full":
        workload = load_workload(f"{layer_name}-v75")  # v79 runs the same file
    else:
        workload = workload_from_dict(scaled_document(layer_name, scale), layer_name)
    return Case(layer_name, target, scale, tile(workload, target))


@dataclass(frozen=True, slots=True)
class Waits:
    """Where lane kind ``kind`` is idle in one schedule: before its first op, between,
    after its last (``inner`` = span - work / units, rounded up)."""

    kind: str
    lead: int
    inner: int
    tail: int


def lane_waits(problem: Problem, target: Target, schedule: Any, kind: str) -> Waits:
    starts, ends, work = [], [], 0
    for name, placed in schedule.ops.items():
        units = problem.ops[name].modes[placed.mode].lanes.get(kind, 0)
        if units:
            starts.append(placed.start)
            ends.append(placed.end)
            work += (placed.end - placed.start) * units
    if not starts:
        return Waits(kind, schedule.makespan, 0, 0)
    span = max(ends) - min(starts)
    return Waits(kind, min(starts), span - math.ceil(work / target.lanes[kind]),
                 schedule.makespan - max(ends))


def waiting_kind(problem: Problem, target: Target, bound_part: str) -> str:
    """The lane kind whose waits matter: the one the binding part names (``phases:HMX``),
    else the one with the most least-work per unit."""
    named = bound_part.partition(":")[2]
    if named in target.lanes:
        return named
    work = dict.fromkeys(target.lanes, 0)
    for op in problem.ops.values():
        for kind in work:
            work[kind] += min(m.duration * m.lanes.get(kind, 0) for m in op.modes)
    return max(work, key=lambda k: work[k] / target.lanes[k])


#: A capacity no set of ops reaches: the resource is left out of a relaxation.
UNBOUNDED = 10**12


def relaxed(target: Target, kept: set[str]) -> Target:
    """``target`` with every lane kind and budget not in ``kept`` made unbounded: any
    legal schedule stays legal, so the optimum of the relaxation is a bound."""
    return dataclasses.replace(
        target, lanes={k: n if k in kept else UNBOUNDED for k, n in target.lanes.items()},
        budgets={k: c if k in kept else UNBOUNDED for k, c in target.budgets.items()})


def relaxations(target: Target, kind: str, asked: list[str] | None) -> list[str]:
    """The resource sets to keep, each ``A+B``: ``asked``, else the waiting lane kind
    alone and the DMA queues with the DDR bandwidth (the memory traffic)."""
    if asked is not None:
        return asked
    traffic = "+".join(k for k in ("DMA", *target.budgets) if k in target.lanes or
                       k in target.budgets)
    return [traffic] if kind == "DMA" else [kind, traffic]


def forced_lead_tail(problem: Problem, kind: str) -> tuple[int, int]:
    """The least time before any op on ``kind`` can start, and after any can end, in
    every legal schedule (the forced order's heads and tails at shortest durations)."""
    import numpy as np

    from schedsearch.engine.bounds.phases import forced_order

    ops = list(problem.ops.values())
    duration = np.array([min(m.duration for m in op.modes) for op in ops], dtype=np.int64)
    order = forced_order(problem, duration)
    on_kind = np.array([any(m.lanes.get(kind, 0) for m in op.modes) for op in ops])
    if order is None or not on_kind.any():
        return 0, 0
    return int(order.head[on_kind].min()), int(order.tail[on_kind].min())


def forced_inner(parts: dict[str, int], kind: str) -> int:
    """The waits between the ops of ``kind`` that the bound sees: what ``phases:K`` adds to
    ``head_tail:K`` (the forced lead, the work over the units and the forced tail)."""
    return max(0, parts.get(f"phases:{kind}", 0) - parts.get(f"head_tail:{kind}", 0))


def op_class(name: str, task: str) -> str:
    """``gate_proj.ldB`` for ``gate_proj.ldB.k0.n3.m0``: the task and the op's role."""
    role = name.removeprefix(task + ".")
    return f"{task}.{re.sub(r'[.][a-z]*[0-9]+', '', role)}"


def idle_gaps(problem: Problem, schedule: Any, kind: str) -> dict[str, dict[str, int]]:
    """The idle gaps of ``kind`` (before its first op and between its ops), each under the
    class of the op it waited for (the latest-ending forced predecessor of the op that
    ends it; ``none`` when it has none). Per class: ``idle`` time, and
    along the chain of latest-ending predecessors back into the gap, ``late`` (links that
    started after their inputs were ready: waiting for a lane, a budget or memory, or put
    there by the search) and ``slow`` (links in a mode slower than their fastest, such
    as a DMA at half bandwidth). Idle time that is neither is the chain itself at its
    fastest: forced once the gap's first op is where it is."""
    from schedsearch.engine.bounds.phases import forced_edges

    names = list(problem.ops)
    preds: list[list[int]] = [[] for _ in names]
    for a, b in forced_edges(problem).tolist():
        preds[b].append(a)
    placed = [schedule.ops[n] for n in names]
    ops = [problem.ops[n] for n in names]
    on_kind = [bool(op.modes[p.mode].lanes.get(kind, 0)) for op, p in zip(ops, placed, strict=True)]

    def latest(i: int) -> int | None:
        return max(preds[i], key=lambda p: placed[p].end, default=None)

    found: dict[str, dict[str, int]] = {}
    busy_until = 0
    for i in sorted((i for i in range(len(names)) if on_kind[i]),
                    key=lambda i: placed[i].start):
        begin, gap = busy_until, placed[i].start - busy_until
        busy_until = max(busy_until, placed[i].end)
        if gap <= 0:
            continue
        blocker = latest(i)
        key = "none" if blocker is None else op_class(names[blocker], ops[blocker].task)
        row = found.setdefault(key, {"idle": 0, "late": 0, "slow": 0, "gaps": 0})
        row["idle"] += gap
        row["gaps"] += 1
        link: int | None = i
        while link is not None and not (link != i and on_kind[link]):
            before = latest(link)
            ready = placed[before].end if before is not None else 0
            row["late"] += max(0, min(placed[link].start, placed[i].start) - max(ready, begin))
            if link != i:
                fastest = min(m.duration for m in ops[link].modes)
                row["slow"] += max(0, min(placed[link].end, placed[i].start)
                                   - max(placed[link].start + fastest, begin))
            link = before if before is not None and placed[before].end > begin else None
    return dict(sorted(found.items(), key=lambda kv: -kv[1]["idle"]))


def unforced_orders(problem: Problem, inst: Any, dag: Any) -> int:
    """How many of the derived orderings between ops the forced order does not imply."""
    import networkx as nx

    from schedsearch.engine.bounds.phases import forced_edges

    graph = nx.DiGraph()
    graph.add_nodes_from(range(inst.n_ops))
    graph.add_edges_from(map(tuple, forced_edges(problem).tolist()))
    return sum(1 for a, b, _ in dag.edges if a < inst.n_ops and b < inst.n_ops
               and not graph.has_edge(a, b) and not nx.has_path(graph, a, b))


def _solution(inst: Any, schedule: Any) -> Any:
    from schedsearch.engine.solution import Solution

    return Solution(tuple(schedule.ops[n].mode for n in inst.op_names),
                    tuple(schedule.ops[n].start for n in inst.op_names),
                    tuple(schedule.buffers[n].offset for n in inst.buffer_names))


def _legal(schedule: Any) -> bool:
    from checker import verify

    return verify(schedule_to_dict(schedule)).legal


def measure(case: Case, *, limit: float, cpsat_limit: float, seed: int, workers: int,
            reproducible: bool, whole_model_stage: bool, relax: list[str] | None = None,
            relax_limit: float = 60.0) -> dict[str, Any]:
    """One row: the bound, the answer, CP-SAT's proof and answer, the split, the waits."""
    from schedsearch.engine.cpsat.model import build, solve_built, whole_problem
    from schedsearch.engine.cpsat.variables import Incumbent
    from schedsearch.engine.hazards import build_dag
    from schedsearch.engine.instance import build_instance
    from schedsearch.engine.offsets import place_offsets
    from schedsearch.engine.params import DEFAULT
    from schedsearch.engine.search import solve_report
    from schedsearch.engine.solution import to_schedule
    from schedsearch.engine.timebudget import TimeBudget

    problem, target = case.problem, case.target
    params = DEFAULT if whole_model_stage or case.scale == "full" else \
        dataclasses.replace(DEFAULT, whole_model_max_ops=0)
    begin, cpu = time.perf_counter(), time.process_time()
    report = solve_report(problem, target, time_limit=limit, seed=seed, workers=workers,
                          reproducible=reproducible, params=params)
    solve_s, solve_cpu = time.perf_counter() - begin, time.process_time() - cpu
    parts = {k: v for k, v in report.bound_parts.items() if k != "cpsat"}
    bound_part = max(parts, key=lambda k: parts[k])
    bound, answer = parts[bound_part], report.schedule.makespan

    inst = build_instance(problem, target)
    dag = build_dag(inst)
    free = unforced_orders(problem, inst, dag)
    solution = _solution(inst, report.schedule)

    def whole(target_used: Target, seconds: float) -> tuple[dict[str, Any], Any]:
        """CP-SAT on the whole model on ``target_used``, hinted with the answer."""
        used = build_instance(problem, target_used)
        inc = Incumbent.of(used, dag, solution)
        begin, cpu = time.perf_counter(), time.process_time()
        built = build(used, dag, inc, whole_problem(dag, inc), bound, region_end=inc.makespan,
                      offsets=False)
        made = {"variables": len(built.model.proto.variables),
                "constraints": len(built.model.proto.constraints),
                "build_s": round(time.perf_counter() - begin, 3),
                "build_cpu_s": round(time.process_time() - cpu, 3)}
        begin, cpu = time.perf_counter(), time.process_time()
        outcome = solve_built(built, TimeBudget.start(seconds, reproducible=False),
                              work=1e9, seed=seed, workers=workers)
        made.update(status=outcome.status, bound=max(bound, outcome.bound or bound),
                    best=min(answer, outcome.objective or answer),
                    cpsat_s=round(time.perf_counter() - begin, 1),
                    cpsat_cpu_s=round(time.process_time() - cpu, 1))
        return made, outcome

    model, outcome = whole(target, cpsat_limit)
    best, best_schedule, unplaced = answer, report.schedule, False
    if outcome.solution is not None and outcome.solution.makespan(inst) < answer:
        placed = place_offsets(inst, outcome.solution, solution,
                               TimeBudget.start(60, reproducible=False), seed)
        candidate = None if placed is None else to_schedule(inst, placed, {})
        if candidate is not None and _legal(candidate):
            best, best_schedule = candidate.makespan, candidate
        else:
            unplaced = True
    kind = waiting_kind(problem, target, bound_part)
    relaxed_rows = {}
    for keep in relaxations(target, kind, relax):
        relaxed_rows[keep] = whole(relaxed(target, set(keep.split("+"))), relax_limit)[0]
    proven = max([model["bound"], *(r["bound"] for r in relaxed_rows.values())])
    lead, tail = forced_lead_tail(problem, kind)
    gap = answer - bound
    return {
        "layer": case.label, "scale": case.scale, "kind": kind, "ops": inst.n_ops,
        "bound": bound, "bound_part": bound_part, "answer": answer,
        "answer_legal": _legal(report.schedule), "solver": report.stats.solver,
        "reproducible": report.stats.reproducible, "proven": proven, "best": best,
        "optimal": proven == best, "cpsat_status": outcome.status,
        "cpsat_unplaced": unplaced, "free_orders": free, "relaxations": relaxed_rows,
        "bound_share": [(proven - bound) / gap, (best - bound) / gap] if gap else [0.0, 0.0],
        "model": model,
        "bound_parts": parts,
        "idle_gaps": {"answer": idle_gaps(problem, report.schedule, kind),
                      "best": idle_gaps(problem, best_schedule, kind)},
        "waits": {"forced_lead": lead, "forced_tail": tail,
                  "forced_inner": forced_inner(parts, kind),
                  "answer": dataclasses.asdict(lane_waits(problem, target, report.schedule,
                                                          kind)),
                  "best": dataclasses.asdict(lane_waits(problem, target, best_schedule,
                                                        kind))},
        "solve_s": round(solve_s, 1), "solve_cpu_s": round(solve_cpu, 1),
    }


def _share(row: dict[str, Any]) -> str:
    low, high = row["bound_share"]
    if row["answer"] == row["bound"]:
        return "no gap"
    return f"{low:.0%}" if low == high else f"{low:.0%}-{high:.0%}"


def _waits(w: dict[str, Any]) -> str:
    return f"{w['lead'] / 1000:.1f}/{w['inner'] / 1000:.1f}/{w['tail'] / 1000:.1f}"


COLUMNS = ("layer", "scale", "ops", "B (part)", "A (A/B)", "P", "U", "bound's share",
           "relaxations: [P, U]", "lane", "forced lead/inner/tail", "A lead/inner/tail",
           "U lead/inner/tail", "CP-SAT s (CPU)")


def _relaxation(keep: str, found: dict[str, Any]) -> str:
    mark = " opt" if found["status"] == "OPTIMAL" else ""
    return f"{keep} [{found['bound']:,}, {found['best']:,}]{mark}"


def cells(row: dict[str, Any]) -> list[str]:
    """One row of the table (µs for the waits)."""
    w = row["waits"]
    note = "" if row["free_orders"] == 0 else f" ({row['free_orders']} unforced orders)"
    seconds = [row["model"], *row["relaxations"].values()]
    return [row["layer"], row["scale"], f"{row['ops']:,}",
            f"{row['bound']:,} {row['bound_part']}",
            f"{row['answer']:,} ({row['answer'] / row['bound']:.3f})",
            f"{row['proven']:,}{note}",
            f"{row['best']:,}{' opt' if row['optimal'] else ''}", _share(row),
            "; ".join(_relaxation(k, r) for k, r in row["relaxations"].items()), row["kind"],
            f"{w['forced_lead'] / 1000:.1f}/{w['forced_inner'] / 1000:.1f}/"
            f"{w['forced_tail'] / 1000:.1f}",
            _waits(w["answer"]), _waits(w["best"]),
            f"{sum(r['cpsat_s'] for r in seconds):.0f} "
            f"({sum(r['cpsat_cpu_s'] for r in seconds):.0f})"]


def gap_summary(row: dict[str, Any], top: int = 4) -> str:
    def one(found: dict[str, dict[str, int]]) -> str:
        return ", ".join(f"{key} {g['idle'] / 1000:.1f} ({g['late'] / 1000:.1f} late, "
                         f"{g['slow'] / 1000:.1f} slow)"
                         for key, g in list(found.items())[:top])
    return f"A: {one(row['idle_gaps']['answer'])}; U: {one(row['idle_gaps']['best'])}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="one tiny layer, seconds (the test's run)")
    parser.add_argument("--layers", nargs="+", choices=LAYERS, default=None)
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=None)
    parser.add_argument("--scales", nargs="+", default=None, metavar="S",
                        help="full, or h<heads>[t<tokens>][p<past>] (default h4)")
    parser.add_argument("--limit", type=float, default=None, metavar="S",
                        help="the search's time limit (default 10)")
    parser.add_argument("--cpsat-limit", type=float, default=None, metavar="S",
                        help="CP-SAT's wall seconds on the whole model (default 120)")
    parser.add_argument("--relax", nargs="*", default=None, metavar="R+R",
                        help="resource sets each relaxation keeps (default: the waiting "
                             "lane kind; DMA+DDR_BW); none: no relaxation")
    parser.add_argument("--relax-limit", type=float, default=None, metavar="S",
                        help="CP-SAT's wall seconds on each relaxation (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--use-time", action="store_true",
                        help="the search uses its whole limit (not reproducible)")
    parser.add_argument("--whole-model-stage", action="store_true",
                        help="scaled layers keep the search's whole-model stage")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    quick = QUICK if args.quick else {}
    layers = args.layers or quick.get("layers") or list(LAYERS)
    targets = args.targets or quick.get("targets") or list(TARGETS)
    scales = args.scales or quick.get("scales") or ["h4"]
    limit = args.limit or quick.get("limit") or 10.0
    cpsat_limit = args.cpsat_limit or quick.get("cpsat_limit") or 120.0
    relax_limit = args.relax_limit or quick.get("relax_limit") or 60.0
    print(f"search {limit:g} s, CP-SAT {cpsat_limit:g} s (relaxations {relax_limit:g} s), "
          f"seed {args.seed}, "
          f"{args.workers} workers; B bound, A answer, P proven, U best found, "
          f"waits in µs", flush=True)
    print(" | ".join(COLUMNS), flush=True)
    rows = []
    for target in targets:
        for name in layers:
            for scale in scales:
                row = measure(make_case(name, target, scale), limit=limit,
                              cpsat_limit=cpsat_limit, seed=args.seed,
                              workers=args.workers, reproducible=not args.use_time,
                              whole_model_stage=args.whole_model_stage, relax=args.relax,
                              relax_limit=relax_limit)
                rows.append(row)
                print(" | ".join(cells(row)), flush=True)
    print("\nidle gaps of the waiting lane in A (and U), by the op waited for: µs idle "
          "(of which, along the chain it waited for, links late after their inputs, and "
          "links in a slower mode)")
    for row in rows:
        print(f"{row['layer']} {row['scale']} {row['kind']}: " + gap_summary(row))
    if args.markdown:
        print("\n| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
        for row in rows:
            print("| " + " | ".join(cells(row)) + " |")
    write_figures(args.json, {"limit": limit, "cpsat_limit": cpsat_limit,
                              "relax_limit": relax_limit, "seed": args.seed,
                              "workers": args.workers, "rows": rows})
    return 0 if all(r["answer_legal"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
