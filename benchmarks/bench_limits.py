"""Does ``--time-limit`` bound the whole command? Each search command's wall time per limit.

A user reads ``--time-limit`` as the budget of the whole command (issue 31, item 4). This
runs each command as a user would (``python -m schedsearch ...`` in a fresh process,
so imports count too) at each limit and prints its wall time against the goal of
``1.1 x limit + 1 s``, with ``over`` where it is missed, and beside it how long a fresh
process took to import the command's libraries just before (``imports``: the part of
the wall time no limit can shorten; on a loaded machine it alone can exceed the goal),
and the CPU time (user + system) of the run itself (``cpu``: on a loaded machine the
wall time is mostly waiting for a core, the CPU time is what the command did).
Figures, not pass/fail; timings on a shared machine are noisy, so the load average (one
minute, read as each run ends) is printed beside each.

Every run finds this checkout's modules compiled (a bytecode cache in a temporary
folder, filled by the first run): an installed package has its bytecode, and with
``PYTHONDONTWRITEBYTECODE`` set (as on the project's machine) each fresh process
compiled about 140 modules again, 0.25-0.3 s of every run.

    python -m benchmarks.bench_limits                              # every command, 0.5..10 s
    python -m benchmarks.bench_limits --limits 1 2 --commands compare tune
    python -m benchmarks.bench_limits --workload qwen2.5-0.5b-decode-v75
    python -m benchmarks.bench_limits --versus-list-only --sizes 150 600 2000

Then, at the same limits, the second half of the issue's question: is the answer ever
worse than the plain list schedule? That table is :mod:`benchmarks.bench_memory`'s
``--versus-list`` on its tight-VTCM problems (one home for it), at ``--sizes`` ops.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

#: The limits of the issue, in seconds.
LIMITS = (0.5, 1.0, 2.0, 5.0, 10.0)
#: Each search command and its arguments beside the workload and the limit.
COMMANDS: dict[str, list[str]] = {
    "solve": ["solve", "{workload}", "-o", "{out}/s.json"],
    "compare": ["compare", "{workload}"],
    "chain": ["chain", "{workload}"],
    "whatif": ["whatif", "{workload}"],
    "tune": ["tune", "{workload}"],
    "mix": ["mix", "{out}/mix.toml"],
}
#: The serving mix ``mix`` runs: a prefill beside four decode steps of one family.
MIX = """name = "limits-mix"
target = "hexagon-v75"
[[requests]]
name = "p0"
model = "qwen2.5-0.5b"
phase = "prefill"
tokens = 128
""" + "".join(f"""[[requests]]
name = "d{k}"
model = "qwen2.5-0.5b"
phase = "decode"
past = 512
""" for k in range(4))
#: A workload every command takes: two chained tasks (an edge for chain, a pair to tune).
WORKLOAD = "rmsnorm-gemm-chain-v75"


def goal(limit: float) -> float:
    """The wall time a command given ``limit`` should stay within."""
    return 1.1 * limit + 1.0


def _environment(cache: str) -> dict[str, str]:
    """The environment of each run: this checkout first, bytecode cached in ``cache``."""
    env = {**os.environ, "PYTHONPATH": str(Path.cwd()), "PYTHONPYCACHEPREFIX": cache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _children_cpu() -> float:
    """CPU seconds (user + system) of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def import_time(command: str, env: dict[str, str]) -> float:
    """Seconds a fresh process takes to import ``schedsearch COMMAND``'s module (its
    libraries: OR-Tools, pandas, NumPy, NetworkX): what the command spends before it can
    do anything, on this machine at this load. The limit counts it too."""
    begin = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import schedsearch.commands.{command}"],
                   capture_output=True, check=False, env=env)
    return time.perf_counter() - begin


def wall_time(command: str, workload: str, limit: float, env: dict[str, str]
              ) -> tuple[float, float, int]:
    """Seconds ``schedsearch COMMAND`` took at ``limit``, its CPU seconds, and its exit
    status."""
    with tempfile.TemporaryDirectory() as out:
        Path(out, "mix.toml").write_text(MIX)
        argv = [word.format(workload=workload, out=out) for word in COMMANDS[command]]
        cpu = _children_cpu()
        begin = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "schedsearch", *argv, "--time-limit",
                               f"{limit:g}"], capture_output=True, text=True, check=False,
                              env=env)
        return time.perf_counter() - begin, _children_cpu() - cpu, done.returncode


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_limits",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--limits", type=float, nargs="+", default=list(LIMITS))
    parser.add_argument("--commands", nargs="+", choices=list(COMMANDS),
                        default=list(COMMANDS))
    parser.add_argument("--workload", default=WORKLOAD)
    parser.add_argument("--sizes", nargs="+", type=int, default=[150, 600], metavar="OPS",
                        help="sizes of bench_memory's problems for the plain list "
                             "comparison (default 150 600)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--no-versus-list", action="store_true",
                       help="only the wall times, not the plain list comparison")
    which.add_argument("--versus-list-only", action="store_true",
                       help="only the plain list comparison, not the wall times")
    args = parser.parse_args(argv)
    status = 0 if args.versus_list_only else _wall_times(args)
    if not args.no_versus_list:
        from benchmarks import bench_memory

        print(f"\nat each limit against the plain list schedule (bench_memory's tight-VTCM "
              f"problems at {', '.join(map(str, args.sizes))} ops)", flush=True)
        status = max(status, bench_memory.main(
            ["--versus-list", "--limits", *map(str, args.limits),
             "--sizes", *map(str, args.sizes)]))
    return status


def _wall_times(args: argparse.Namespace) -> int:
    """The table of each command's wall time at each limit."""
    print(f"workload {args.workload}; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores; goal 1.1 x limit + 1 s")
    with tempfile.TemporaryDirectory(prefix="bench-limits-pyc-") as cache:
        env = _environment(cache)
        begin = time.perf_counter()
        subprocess.run([sys.executable, "-m", "schedsearch", "targets"], capture_output=True,
                       check=False, env=env)
        for command in args.commands:  # compiles each command's modules into the cache
            import_time(command, env)
        print(f"startup (schedsearch targets, compiling): {time.perf_counter() - begin:.1f} s")
        print(f"{'command':<9}{'limit':>7}{'wall':>8}{'cpu':>7}{'goal':>8}{'imports':>9}"
              f"{'load':>6}  verdict")
        for command in args.commands:
            for limit in args.limits:
                imports = import_time(command, env)
                seconds, cpu, status = wall_time(command, args.workload, limit, env)
                verdict = f"exit {status}" if status != 0 else \
                    "ok" if seconds <= goal(limit) else "over"
                print(f"{command:<9}{limit:>7g}{seconds:>8.1f}{cpu:>7.1f}{goal(limit):>8.1f}"
                      f"{imports:>9.1f}{os.getloadavg()[0]:>6.1f}  {verdict}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
