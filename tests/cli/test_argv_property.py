"""Random argument vectors for every command never end in a traceback (issue #17).

The vectors are drawn from the argparse definitions themselves (every subcommand of
``schedsearch`` and ``schedcheck``, every positional and option, its declared type and
choices), with values that are right, of the wrong type, missing files, directories,
unwritable outputs, huge, negative, NaN. Whatever the draw, the command exits with 0, 1,
2 or 130 and prints no traceback. Searches get a short time limit first (an argument
drawn later overrides it); valid values that only ask for long work (an hour's time
limit, a million-op limit) are left out of the pools, since the property is about
refusing and reporting, not about speed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.cli import build_parser as schedcheck_parser
from checker.cli import main as schedcheck_main
from models.formats import problem_to_dict, schedule_to_dict
from models.targets import load_target
from models.workload import load_workload, tile
from schedsearch.cli import build_parser as schedsearch_parser
from schedsearch.cli import main as schedsearch_main
from schedsearch.engine.search import solve
from tests.fuzz._budget import examples

EXIT_CODES = {0, 1, 2, 130}
EXAMPLE = "rmsnorm-gemm-chain-v75"
NUMBERS = ["0", "1", "2", "-1", "0.5", "nan", "inf", "-inf", "1e309", "abc", "",
           "99999999999999999999999999", str(2**63), str(2**63 - 1)]
#: Values per declared type. Large valid values that only mean long work are left out.
BY_TYPE = {
    "limit_seconds": ["0.1", "0.05", "0", "-1", "nan", "inf", "1e300", "abc", "604801"],
    "positive_number": ["0.5", "2", "0", "-1", "nan", "inf", "1e12", "abc"],
    "worker_count": ["1", "2", "0", "-1", "257", "abc", "99999999999999999999"],
    "at_least_one": ["1", "50", "0", "-1", "abc", "1.5"],
    "seed_number": ["0", "7", str(2**40), str(2**63 - 1), str(2**63), "-1", "abc"],
    "byte_count": ["0", "300", "1000000", "-1", str(2**63), "abc", "1e3"],
}


@pytest.fixture(scope="module")
def pools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Value pools: input paths of every kind, outputs, directories."""
    root = tmp_path_factory.mktemp("argv")
    workload = load_workload(EXAMPLE)
    target = load_target(workload.target)
    problem = tile(workload, target)
    schedule = schedule_to_dict(solve(problem, target, time_limit=0.3))
    files = {"schedule.json": json.dumps(schedule),
             "problem.json": json.dumps(problem_to_dict(problem)),
             "report.json": json.dumps({"legal": True, "violations": [], "stats": {}}),
             "workload.toml": 'name = "w"\ntarget = "hexagon-v75"\n[[tasks]]\nname = "r"\n'
                              'kind = "rmsnorm"\nrows = 64\ncols = 64\n',
             "nan.toml": 'name = "w"\ntarget = "hexagon-v75"\n[[tasks]]\nname = "r"\n'
                         'kind = "rmsnorm"\nrows = 64\ncols = 64\neps = nan\n',
             "buffers.csv": "id,lower,upper,size\na,0,10,100\nb,5,15,200\n",
             "empty.json": "", "broken.json": "{", "list.json": "[1, 2]"}
    for name, text in files.items():
        (root / name).write_text(text)
    empty = root / "empty-dir"
    empty.mkdir()
    (root / "not-workloads").mkdir()
    (root / "not-workloads" / "b.csv").write_text(files["buffers.csv"])
    inputs = [str(root / name) for name in files] + [
        EXAMPLE, "hexagon-v75", "hexagon-v68", str(empty), str(root / "nosuch.json"), "-"]
    outputs = [str(root / name) for name in ("out.json", "out.png", "out.toml", "out.csv",
                                             "out.svg", "out.xyz")] + [
        str(root / "nodir" / "x.json"), "/proc/x.json", str(empty), "-"]
    directories = [str(root / "plans"), str(empty), str(root / "not-workloads"),
                   str(root / "nodir" / "deeper"), "/proc/x", str(root / "schedule.json")]
    return {"inputs": inputs, "outputs": outputs, "directories": directories}


Program = tuple[Callable[[list[str]], int], argparse.ArgumentParser]


@pytest.fixture(scope="module")
def programs() -> list[Program]:
    """Both command-line tools with their parsers, built once (building one imports every
    command module, which has no place inside a strategy)."""
    return [(schedsearch_main, schedsearch_parser()), (schedcheck_main, schedcheck_parser())]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _values(action: argparse.Action, pools: dict[str, list[str]]) -> list[str]:
    """The values worth trying for ``action``, from its declared type and choices."""
    name = getattr(action.type, "__name__", "")
    if action.choices is not None:
        return [str(c) for c in action.choices] + ["bogus", ""]
    if name in ("output_file", "output_file_only", "image_file"):
        return pools["outputs"]
    if name == "output_dir":
        return pools["directories"]
    if name in BY_TYPE:
        return BY_TYPE[name]
    if action.type is None and action.dest in ("many", "plans"):
        return pools["directories"] + pools["inputs"][:2]
    return pools["inputs"] + NUMBERS[:6]


@st.composite
def argv(draw: st.DrawFn, programs: list[Program], pools: dict[str, list[str]]
         ) -> tuple[Callable[[list[str]], int], list[str]]:
    """A command line for one subcommand of schedsearch or schedcheck."""
    program, parser = draw(st.sampled_from(programs))
    commands = _subcommands(parser)
    command = draw(st.sampled_from(sorted(commands)))
    sub = commands[command]
    args = [command]
    if any("--time-limit" in a.option_strings for a in sub._actions):
        args += ["--time-limit", "0.1"]
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not action.option_strings:  # positional
            if draw(st.integers(0, 9)) == 0:
                continue  # now and then missing
            count = draw(st.integers(1, 2)) if action.nargs == "+" else 1
            args += [draw(st.sampled_from(_values(action, pools))) for _ in range(count)]
        elif draw(st.integers(0, 3)) == 0:
            args.append(draw(st.sampled_from(action.option_strings)))
            if action.nargs != 0:
                args.append(draw(st.sampled_from(_values(action, pools))))
    if draw(st.integers(0, 9)) == 0:
        args.insert(draw(st.integers(0, len(args))), draw(st.sampled_from(
            ["--bogus", "junk", "--", "-o"])))
    return program, args


@settings(max_examples=examples(0.6, minimum=10))
@given(data=st.data())
def test_random_command_lines_exit_0_1_2_or_130_without_a_traceback(
        programs: list[Program], pools: dict[str, list[str]], data: st.DataObject) -> None:
    program, args = data.draw(argv(programs, pools), label="argv")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = program(args)
    assert code in EXIT_CODES, (args, code, err.getvalue())
    assert "Traceback" not in err.getvalue(), (args, err.getvalue())
