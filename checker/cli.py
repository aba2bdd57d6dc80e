"""The ``schedcheck`` command: a thin ``main(argv) -> int`` over :func:`checker.verify_file`.

Exit status: 0 legal, 1 violations found, 2 input that cannot be used (one line on
stderr naming the file, the JSON path and the rule; never a traceback).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from importlib import metadata

from checker.load import MAX_INPUT_BYTES, UnusableInput
from checker.program import verify_program_file
from checker.report import render_human
from checker.verify import verify_file

__all__ = ["main", "build_parser"]

#: How many violations the human report lists unless ``--max-violations`` says otherwise.
DEFAULT_LISTED = 100
#: The distribution that installs ``schedcheck`` (the checker ships inside it).
DISTRIBUTION = "npu-schedsearch"


def package_version() -> str:
    """The installed version, or a note that the code runs from a checkout not installed.
    Read from the distribution's metadata: the checker imports nothing of ``schedsearch``."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _count(text: str) -> int:
    """A count of violations to list: a whole number, at least 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedcheck",
        description="Prove an npu-schedule/1 file legal, or list every rule it breaks.")
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {package_version()} ({DISTRIBUTION})")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    verify = commands.add_parser(
        "verify", help="check one schedule file against every rule of docs/formats.md",
        description=f"Check FILE ('-' for standard input, at most {MAX_INPUT_BYTES} bytes). "
                    "Exit 0 if legal, 1 if violations were found, 2 if unusable.")
    verify.add_argument("file", metavar="FILE")
    verify.add_argument("--json", action="store_true",
                        help='print {"legal", "violations", "stats"} as JSON')
    verify.add_argument("--max-violations", type=_count, default=None, metavar="N",
                        help=f"list at most N violations (default: {DEFAULT_LISTED} in the "
                             "human report, all with --json); counts stay complete")
    program = commands.add_parser(
        "verify-program", help="check one npu-program/1 file: its schedule, then its orders",
        description="Check FILE (an npu-program/1; '-' for standard input): the embedded "
                    "schedule against every schedule rule, then the program rules (queues, "
                    "DEADLOCK, ORDER_*: legal for every duration). Exit 0 if legal, 1 if "
                    "violations were found, 2 if unusable.")
    program.add_argument("file", metavar="FILE")
    program.add_argument("--json", action="store_true",
                         help='print {"legal", "violations", "stats"} as JSON')
    program.add_argument("--max-violations", type=_count, default=None, metavar="N",
                         help=f"list at most N violations (default: {DEFAULT_LISTED} in the "
                              "human report, all with --json); counts stay complete")
    return parser


def _verify(args: argparse.Namespace) -> int:
    source = "<stdin>" if args.file == "-" else args.file
    check = verify_program_file if args.command == "verify-program" else verify_file
    report = check(args.file)
    if args.json:
        text = json.dumps(report.to_dict(args.max_violations), indent=1)
    else:
        limit = DEFAULT_LISTED if args.max_violations is None else args.max_violations
        text = render_human(report, source, limit)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return 0 if report.legal else 1


def main(argv: list[str] | None = None) -> int:
    if threading.current_thread() is threading.main_thread():
        # SIGTERM ends a check the way Ctrl-C does: one line, exit 130, no traceback.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # argparse has printed its usage message
        return int(stop.code or 0)
    try:
        return _verify(args)
    except UnusableInput as error:
        print(f"schedcheck: error: {error}", file=sys.stderr)
    except MemoryError:
        print(f"schedcheck: error: {args.file}: $: SIZE: not enough memory to check this "
              "input", file=sys.stderr)
    except RecursionError:
        print(f"schedcheck: error: {args.file}: $: JSON: nesting too deep", file=sys.stderr)
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away; nothing more to say
    except KeyboardInterrupt:
        print("schedcheck: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a checker bug must still not end in a traceback
        print(f"schedcheck: error: {args.file}: $: INTERNAL: the checker failed "
              f"({type(error).__name__}: {error})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
