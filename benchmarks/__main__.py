"""Run every benchmark; write a JSON file and a Markdown table per run.

``python -m benchmarks [--quick | --full]``. The Markdown table is printed to stdout too;
progress goes to stderr. Results land in ``benchmarks/results/`` (git-ignored) as
``<UTC timestamp>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import REPO
from benchmarks.report import markdown
from benchmarks.runner import profile, run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--quick", dest="profile", action="store_const", const="quick",
                       help="a sample with short limits, under 5 minutes on 2 cores "
                            "(the default)")
    which.add_argument("--full", dest="profile", action="store_const", const="full",
                       help="every PSPLIB instance at 10 s, every size: hours")
    which.add_argument("--render", metavar="JSON",
                       help="print the Markdown of a saved run and exit")
    names = [job.name for job in profile("quick", seed=0, workers=2, external=None)]
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=names,
                        help="run only these benchmarks: " + ", ".join(names))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--external", default=None,
                        help="public data folder (default ../shared/external)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args(argv)
    if args.render:
        print(markdown(json.loads(Path(args.render).read_text(encoding="utf-8"))))
        return 0
    json_path, md_path, text = run(args.profile or "quick", seed=args.seed,
                                   workers=args.workers, external=args.external,
                                   only=args.only, out_dir=args.out)
    print(text)
    print(f"[benchmarks] wrote {json_path} and {md_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
