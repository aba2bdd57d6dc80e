"""The ``schedsearch`` command: a thin ``main(argv) -> int`` over the library.

Each subcommand lives in ``schedsearch/commands/<name>.py`` with ``register(subparsers)``;
the parser it adds sets ``handler`` to a function ``(args) -> int``. A study under a
command (``schedsearch chain sweep``) lives in ``schedsearch/commands/<name>_<study>.py``.
A handler finds in ``args.started`` (a :func:`time.perf_counter` value) when the command
began, before its module and libraries were imported: ``--time-limit`` is the budget of
the whole command (:mod:`schedsearch.allotment`). Unusable input is an
:class:`~models.errors.InputError`: one line on stderr and exit
status 2, never a traceback.
SIGINT and SIGTERM stop any command with exit status 130
(:mod:`schedsearch.engine.interrupt`: a search stops through CP-SAT's own mechanism and keeps
its best answer).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

from models.errors import InputError
from schedsearch.engine import interrupt
from schedsearch.version import DISTRIBUTION, package_version

#: Subcommand modules under schedsearch.commands, in the order ``--help`` lists them.

COMMANDS = ("examples", "targets", "target", "tile", "bound", "solve", "place", "trace", "plot",
            "compare", "select", "tune", "chain", "whatif", "lower", "simulate", "calibrate",
            "replay", "mix", "import")
#: What each command does, as ``schedsearch --help`` lists it (the listing needs no
#: command module: each imports its own heavy libraries).
SUMMARIES = {
    "examples": "list the bundled example workloads, or print one",
    "targets": "list the bundled targets",
    "target": "print a target's npu-target/1 JSON",
    "tile": "tile a workload into an npu-problem/1 file",
    "bound": "print a lower bound on the makespan and its parts",
    "solve": "search a legal schedule with the shortest makespan",
    "place": "place buffers with fixed lifetimes in one memory (MiniMalloc CSV)",
    "trace": "write a schedule as a Chrome trace (Perfetto, chrome://tracing)",
    "plot": "draw a schedule: lanes, memory occupancy, budget draw",
    "compare": "compare separate, concurrent and fused execution of a workload",
    "select": "choose the plan whose domain holds for a request, or a fallback",
    "tune": "choose tile sizes, vector units and buffer depths jointly",
    "chain": "a chain's paths A/B/C: convert, share a layout, forward on chip",
    "whatif": "solve again with one resource idealised at a time, then all",
    "lower": "lower a schedule to a program (queues per unit, waits)",
    "simulate": "run a program many times under noisy durations",
    "calibrate": "fit a target's cost parameters to measured timings",
    "replay": "compare a measured run (trace) with its schedule",
    "mix": "serve a mix of requests: sequential, chunked prefill, searched",
    "import": "import an ONNX model into an editable workload file",
}
#: Studies under a command, which take other arguments than the command itself:
#: ``schedsearch chain sweep`` is ``schedsearch/commands/chain_sweep.py``.
STUDIES = {"chain": ("sweep", "crossover")}


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (the usage is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Formatter(argparse.HelpFormatter):
    """Measures subcommand names at the indent they are printed at: argparse measures them
    two columns short, so the longest name (``calibrate``) wrapped onto a line of its own."""

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if action.help is not argparse.SUPPRESS:
            for subaction in self._iter_indented_subactions(action):
                length = len(self._format_action_invocation(subaction)) + self._current_indent
                self._action_max_length = max(self._action_max_length, length)


def build_parser(commands: tuple[str, ...] = COMMANDS, study: str | None = None, *,
                 listing: bool = False) -> argparse.ArgumentParser:
    """The parser of ``commands`` (all of them by default), or of one command's ``study``;
    with ``listing``, the commands of :data:`SUMMARIES` are only named with their summary
    (enough for ``--help`` and for refusing an unknown command), their modules unloaded."""
    parser = _Parser(
        prog="schedsearch", formatter_class=_Formatter,
        description="Search static schedules for NPU engines; see `schedcheck` to verify.")
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {package_version()} ({DISTRIBUTION})")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in commands:
        if listing and name in SUMMARIES:
            subparsers.add_parser(name, help=SUMMARIES[name])
            continue
        module = f"{name}_{study}" if study else name
        importlib.import_module(f"schedsearch.commands.{module}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()  # the command's time limit counts from here
    with interrupt.installed():
        interrupt.reset()
        return _guarded(argv, started)


def _guarded(argv: list[str] | None, started: float) -> int:
    """:func:`_run`, with every way a command can end badly turned into its exit status."""
    try:
        return _run(argv, started)
    except InputError as error:
        print(f"schedsearch: error: {error}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, interrupt.Interrupted):
        print("schedsearch: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`schedsearch target X | head`): stop quietly, as cat does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as error:  # a file that became unwritable after the options were checked
        print(f"schedsearch: error: {error.filename or '<file>'}: $: FILE: "
              f"{error.strerror or error}", file=sys.stderr)
        return 2


@contextmanager
def _imports_uncollected(freeze: bool) -> Iterator[None]:
    """Import a command's libraries with the cycle collector paused and, in a process of
    its own (``freeze``), move what they built (modules, classes, functions: alive until
    the process ends) out of its reach (:func:`gc.freeze`): collections during the
    imports took 0.1-0.2 s of a search command's 1.0-1.3 s of imports, and every later
    full collection walked them again. A caller's process (``main(argv)`` from Python, a
    test session) is not frozen: what it holds is its own."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze and not gc.get_freeze_count():
            gc.freeze()
        if enabled:
            gc.enable()


def _run(argv: list[str] | None, started: float) -> int:
    words = sys.argv[1:] if argv is None else argv
    # Only the named command's module is imported: each pulls in its own heavy libraries
    # (OR-Tools, SciPy, Matplotlib), which would otherwise cost every command seconds.
    with _imports_uncollected(freeze=argv is None):
        if words and words[0] in COMMANDS:
            study = words[1] if len(words) > 1 and words[1] in STUDIES.get(words[0],
                                                                             ()) else None
            parser = build_parser((words[0],), study)
        else:  # --help, no command or an unknown one: the listing is all it takes
            parser = build_parser(listing=True)
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, or a bad option (argparse printed why)
        return stop.code if isinstance(stop.code, int) else 2
    args.started = started
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
