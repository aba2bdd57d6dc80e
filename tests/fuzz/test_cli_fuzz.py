"""Bad input through both command-line tools: never a traceback, exit status 0, 1 or 2.

Three kinds of junk, from far to near: random bytes; random JSON values; and legal
documents with one random subtree replaced, deleted or added, which get past the JSON
layer and deep into the readers, where a missing ``isinstance`` turns into a traceback.
Both CLIs run in-process (``main(argv) -> int``); stdout and stderr are captured.

The checker's CLI turns any internal exception into exit 2 with an ``INTERNAL`` line so a
user never sees a traceback; that is a safety net, not a pass, so ``checker.verify`` is
also called directly on the near-valid documents and may raise only ``UnusableInput``.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

import checker
import checker.cli
import schedsearch.cli

from ._budget import examples
from ._real import dump
from .junk import corrupted, json_hooks, json_values
from .strategies import legal_schedules


# ----------------------------------------------------------------------------- running
def _run(main: Any, argv: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    """Call a CLI in-process; any escaping exception fails the test with its argv."""
    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    try:
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as stop:  # allowed: argparse and sys.exit say their status
                status = stop.code if isinstance(stop.code, int) else 2
    finally:
        sys.stdin = saved_stdin
    return status, out.getvalue(), err.getvalue()


def _assert_clean(status: int, stderr: str, argv: list[str], allowed: set[int]) -> None:
    assert status in allowed, f"exit status {status} for {argv}: {stderr[-500:]}"
    assert "Traceback" not in stderr
    assert "INTERNAL" not in stderr, f"an internal error was caught: {stderr[-500:]}"


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    """A fresh directory per example (function-scoped fixtures do not reset per example)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-cli-") as name:
        yield Path(name)


def _write(path: Path, content: bytes | Any) -> Path:
    data = content if isinstance(content, bytes) else json.dumps(content).encode()
    path.write_bytes(data)
    return path


def _schedsearch_argvs(file: Path, target: Path, out: Path) -> list[list[str]]:
    """Every command of ``schedsearch`` that reads a file, pointed at ``file``."""
    commands = set(schedsearch.cli.COMMANDS)
    argvs = []
    if "bound" in commands:
        argvs += [["bound", str(file), "--target", str(target)],
                  ["bound", str(target), "--target", str(file)]]
    if "solve" in commands:
        argvs.append(["solve", str(file), "--target", str(target), "-o", str(out),
                      "--time-limit", "0.5", "--workers", "1"])
    if "target" in commands:
        argvs.append(["target", str(file)])
    if "tile" in commands:
        argvs.append(["tile", str(file), "-o", str(out)])
    if "trace" in commands:
        argvs.append(["trace", str(file), "-o", str(out)])
    if "plot" in commands:
        argvs.append(["plot", str(file), "-o", str(out.with_suffix(".png"))])
    return argvs


def _check_schedsearch(file: Path, target: Path, allowed: set[int]) -> None:
    out = file.parent / "out.json"
    for argv in _schedsearch_argvs(file, target, out):
        out.unlink(missing_ok=True)
        out.with_suffix(".png").unlink(missing_ok=True)
        status, _, stderr = _run(schedsearch.cli.main, argv)
        _assert_clean(status, stderr, argv, allowed)
        if status == 2:
            assert not out.exists() and not out.with_suffix(".png").exists(), \
                f"{argv}: exit 2 but an output file was written"
        event(f"schedsearch {argv[0]}: exit {status}")


def _a_target(directory: Path) -> Path:
    """A small valid npu-target/1 file, for commands whose other input is the junk."""
    return _write(directory / "target.json", {
        "format": "npu-target/1", "name": "fuzz", "lanes": {"DMA": 2, "HVX": 2},
        "budgets": {"DDR_BW": 8},
        "memories": {"VTCM": {"capacity_bytes": 64, "alignment_bytes": 4}}})


# ----------------------------------------------------------------------------- properties
@settings(max_examples=examples(1.0))
@given(junk=st.binary(max_size=400) | json_values.map(lambda v: json.dumps(v).encode())
       | json_hooks.map(lambda v: json.dumps(v).encode()))
def test_schedcheck_survives_junk(junk: bytes) -> None:
    with _workdir() as directory:
        argv = ["verify", str(_write(directory / "junk.json", junk))]
        status, _, stderr = _run(checker.cli.main, argv)
        _assert_clean(status, stderr, argv, {0, 1, 2})
        status, _, stderr = _run(checker.cli.main, ["verify", "-", "--json"], stdin=junk)
        _assert_clean(status, stderr, ["verify", "-", "--json"], {0, 1, 2})


@settings(max_examples=examples(2.0))
@given(data=st.data())
def test_checker_survives_near_valid_schedules(data: st.DataObject) -> None:
    """One corrupted subtree of a legal schedule: verify reports or refuses, never crashes."""
    doc = data.draw(corrupted(data.draw(legal_schedules(max_ops=5), label="original")),
                    label="corrupted")
    note(dump(doc))
    try:
        report = checker.verify(doc)
        event("verify: " + ("legal" if report.legal else "violations"))
    except checker.UnusableInput:
        event("verify: unusable")
    with _workdir() as directory:
        argv = ["verify", str(_write(directory / "s.json", doc)), "--json"]
        status, out, stderr = _run(checker.cli.main, argv)
        _assert_clean(status, stderr, argv, {0, 1, 2})
        if status in (0, 1):
            assert json.loads(out)["legal"] is (status == 0)


@settings(max_examples=examples(0.6))
@given(junk=st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode())
       | json_hooks.map(lambda v: json.dumps(v).encode()))
def test_schedsearch_survives_junk(junk: bytes) -> None:
    with _workdir() as directory:
        _check_schedsearch(_write(directory / "junk.json", junk), _a_target(directory), {2})


@settings(max_examples=examples(0.6))
@given(data=st.data())
def test_schedsearch_survives_near_valid_problems(data: st.DataObject) -> None:
    """A corrupted problem (or target): exit 2 with one line, or a normal run."""
    original = data.draw(legal_schedules(max_ops=4), label="original")
    which = data.draw(st.sampled_from(["problem", "target"]), label="corrupt which")
    with _workdir() as directory:
        docs = {"problem": original["problem"], "target": original["target"]}
        docs[which] = data.draw(corrupted(docs[which]), label="corrupted")
        note(dump(docs))
        problem = _write(directory / "problem.json", docs["problem"])
        target = _write(directory / "target.json", docs["target"])
        _check_schedsearch(problem, target, {0, 1, 2})


@pytest.mark.parametrize("argv", [["verify", "/nonexistent/schedule.json"], ["verify", "."]])
def test_schedcheck_unreadable_files(argv: list[str]) -> None:
    status, _, stderr = _run(checker.cli.main, argv)
    _assert_clean(status, stderr, argv, {2})
    assert stderr.strip().count("\n") == 0, "one line, naming the file"
