"""``schedsearch chain WORKLOAD``: paths A, B and C of every producer -> consumer edge.

For each edge (see :mod:`schedsearch.chains.paths`) prints one row per path: the variant
that won it, the end-to-end makespan, the device time, its critical path split into
compute, data movement (the intermediate's share in brackets), conversion, wait and
launch/sync, launches, events, peak memory and whether the checker accepts the
schedule; then the recoverable loss of A (the share B or C could remove at best and its
ceiling ``1 / (1 - f)``) beside the gains B and C reach. ``--json`` prints the same,
``--plot`` draws every path's schedule on one time axis.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from models.workload import load_workload, workload_target
from schedsearch.chains.paths import ChainResult, PathName, chain_paths
from schedsearch.commands.options import add_search_options, add_target_option
from schedsearch.commands.study import study_options
from schedsearch.output import image_file


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "chain",
        description="For every producer -> consumer edge of a workload build path A (each "
                    "task in its own layout, a conversion task between), B (one shared "
                    "layout) and C (the consumer reads the producer's on-chip buffers); "
                    "solve, verify and score each, and report the recoverable loss. "
                    "Studies: `schedsearch chain sweep --help` (the fused compute factor), "
                    "`schedsearch chain crossover --help` (the layout-crossing figures).")
    parser.add_argument("workload", metavar="WORKLOAD",
                        help="workload file or bundled example name")
    add_target_option(parser, default_from="the workload's")
    add_search_options(parser, time_limit=2.0,
                       time_help="seconds for the whole study, shared evenly among its "
                                 "solves (every kernel of paths A and B, and path C)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--plot", metavar="P.png", type=image_file,
                        help="draw every path's schedule on one time axis")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    workload = load_workload(args.workload)
    target = workload_target(workload, args.target)
    options = study_options(args)
    results = chain_paths(workload, target, options=options)
    if args.json:
        print(json.dumps({"workload": workload.name, "target": target.name,
                          "time_unit": target.time_unit,
                          "edges": [r.as_dict() for r in results]}, indent=1))
    else:
        print(f"{workload.name} on {target.name}; times in {target.time_unit}")
        for result in results:
            print()
            print(format_table(result))
    if args.plot:
        from schedsearch.plot import plot_paths

        plot_paths([(f"{r.edge.consumer.name} {p.path.value}: {p.variant}",
                     p.result.schedule) for r in results for p in r.paths], args.plot)
        if not args.json:
            print(f"wrote {args.plot}")
    return 0


def format_table(result: ChainResult) -> str:
    """One edge: its paths, then the recoverable loss beside the gains reached."""
    memories = list(result.paths[0].result.schedule.target.memories)
    header = (["path", "variant", "makespan", "device", "compute", "movement (interm.)",
               "conversion", "wait", "launch+sync", "launches", "events"]
              + [f"peak {m} KiB" for m in memories] + ["legal"])
    rows = []
    for p in result.paths:
        r, s = p.result, p.split
        rows.append([p.path.value, p.variant, str(r.makespan), str(r.device_makespan),
                     str(s.compute), f"{s.movement} ({s.intermediate})", str(s.conversion),
                     str(s.wait), str(s.sync), str(r.launches), str(r.events)]
                    + [f"{r.evaluation.peak_bytes[m] / 1024:.0f}" for m in memories]
                    + ["yes" if r.legal else "no: " + ",".join(r.violations)])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    gains = ", ".join(f"{name.value} {gain:.3f}x" for name in (PathName.B, PathName.C)
                      if (gain := result.gain(name)) is not None)
    out = [f"edge {result.edge.label}", line(header), *map(line, rows),
           f"best: {result.best.path.value} ({result.best.variant})",
           f"recoverable: at most {result.removable_share:.1%} of A's critical path "
           f"(conversion, the intermediate's movement, launches and events beyond one "
           f"launch), ceiling {result.ceiling:.3f}x; reached over A: {gains}"]
    beyond = [name.value for name in (PathName.B, PathName.C)
              if (gain := result.gain(name)) is not None and gain > result.ceiling]
    if beyond:
        out.append(f"  {', '.join(beyond)} beat the ceiling: its critical path holds less "
                   "compute, other movement or waiting than A's (overlap took them off it)")
    if result.c_note:
        out.append(f"  {result.c_note}")
    return "\n".join(out)
