"""``schedsearch place FILE.csv``: place buffers with fixed lifetimes (MiniMalloc CSV).

With ``--capacity C`` every buffer must fit below C (exit 0 placed, 1 infeasible or timed
out); without it, or with ``--minimise``, the peak address is minimised. The placement is
verified by the project's checker (as a schedule with fixed windows) before it is
written; ``-o`` writes the CSV with an ``offset`` column, whole or not at all.
"""

from __future__ import annotations

import argparse

from schedsearch.commands.options import byte_count, limit_seconds, seed_number
from schedsearch.engine.placement import (
    place,
    placement_to_schedule_document,
    read_csv,
    write_csv,
)
from schedsearch.engine.result import SolveStatus
from schedsearch.output import output_file_only
from schedsearch.wording import counted


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "place",
        description="Choose an offset for every buffer of a MiniMalloc CSV file "
                    "(id,lower,upper,size[,alignment][,offset]; lifetimes [lower, upper)) "
                    "so that buffers live at the same time do not overlap. With --capacity "
                    "the placement must fit below it; otherwise the peak is minimised and "
                    "reported against the max-load lower bound.")
    parser.add_argument("file", metavar="FILE.csv", help="buffers to place")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--capacity", type=byte_count, metavar="C", help="memory size in bytes")
    mode.add_argument("--minimise", "--minimize", action="store_true",
                      help="minimise the peak address (the default without --capacity)")
    parser.add_argument("-o", "--output", metavar="OUT.csv", type=output_file_only,
                        help="write the buffers with an offset column")
    parser.add_argument("--time-limit", type=limit_seconds, default=10.0, metavar="S",
                        help="seconds for the search (default 10)")
    parser.add_argument("--seed", type=seed_number, default=0, help="seed (default 0)")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the checker (the engine's own validator still runs)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    buffers = read_csv(args.file)
    result = place(buffers, args.capacity, time_limit=args.time_limit, seed=args.seed)
    ratio = f" ({result.peak / result.lower_bound:.4f}x)" if result.lower_bound else ""
    peak = f"peak {result.peak}{ratio}" if result.placed else "no placement"
    print(f"{result.status}: {peak}, lower bound {result.lower_bound}, "
          f"{counted(len(buffers), 'buffer')}, {result.wall_s:.2f} s ({result.method})")
    if not result.placed:
        if result.status is SolveStatus.INFEASIBLE:
            print(f"infeasible: no placement fits capacity {args.capacity} ({result.method})")
        else:
            print(f"timed out after {args.time_limit:g} s without a placement")
        return 1
    if not args.no_check:
        from checker import verify

        report = verify(placement_to_schedule_document(buffers, result.offsets, args.capacity))
        if not report.legal:
            codes = sorted({v.code for v in report.violations})
            print(f"checker: ILLEGAL ({', '.join(codes)}); nothing written")
            return 1
        print("checker: legal")
    if args.output:
        write_csv(args.output, buffers, result.offsets)
    return 0
