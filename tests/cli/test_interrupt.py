"""SIGINT and SIGTERM stop `schedsearch solve` cleanly (issue #17, item 1).

A real process is signalled mid-search: CP-SAT runs in threads, and a crash there
(``terminate called ...``, a pybind11 abort) only shows in a real process.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checker import verify
from schedsearch import cli
from schedsearch.engine import interrupt

#: How long to wait for the search to start, and then to stop, before failing: nets for
#: a hang, not speed goals (a stop at load 15 on 2 cores took more than 10 s).
STARTUP_S = 60.0
STOP_S = 60.0


def _signalled(signum: int, out: Path) -> tuple[int, str]:
    """Start an 8 s solve, send ``signum`` once the search has started, return the exit
    status and stderr.

    8 s, not more: a quarter of the limit goes to the tasks-in-sequence pass before the
    search reports its constructive schedule (15 s of waiting at 60 s); the signal comes
    milliseconds after that report, with most of the 8 s still to search."""
    child = subprocess.Popen(
        [sys.executable, "-m", "schedsearch", "solve", "gemm-rmsnorm-v75", "-o", str(out),
         "--time-limit", "8"], stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    lines = []
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        line = child.stderr.readline()
        lines.append(line)
        if "constructive" in line or not line:  # the search is under way (or it died)
            break
    child.send_signal(signum)
    try:
        _, rest = child.communicate(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail(f"still running {STOP_S} s after the signal")
    return child.returncode, "".join(lines) + rest


def test_a_signal_mid_search_writes_the_best_legal_schedule_and_exits_130(
        tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    code, err = _signalled(signal.SIGINT, out)
    assert code == 130, err
    assert "Traceback" not in err and "terminate called" not in err, err
    assert out.exists(), err  # the constructive had answered when the signal came
    document = json.loads(out.read_text())
    assert verify(document).legal
    assert document["meta"]["status"] == "INTERRUPTED"
    assert not list(tmp_path.glob(".*")), "a temporary file was left behind"


def test_an_interrupt_before_any_schedule_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted_while_tiling(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("schedsearch.commands.solve.load_problem_input",
                        interrupted_while_tiling)
    out = tmp_path / "s.json"
    assert cli.main(["solve", "gemm-rmsnorm-v75", "-o", str(out)]) == 130
    assert not out.exists()
    assert capsys.readouterr().err.strip() == "schedsearch: interrupted"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_inside_a_cooperating_section_only_records_a_request(signum: int) -> None:
    """SIGTERM takes the same path as SIGINT (the subprocess test sends SIGINT)."""
    interrupt.reset()
    try:
        with interrupt.installed():
            with interrupt.cooperating():
                signal.raise_signal(signum)  # no KeyboardInterrupt here
            assert interrupt.requested()
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signum)
    finally:
        interrupt.reset()


@pytest.mark.parametrize("argv", [
    ["compare", "rmsnorm-gemm-chain-v75", "--time-limit", "300"],
    ["tune", "rmsnorm-gemm-chain-v75", "--time-limit", "300", "-o", "{out}"],
    ["solve", "rmsnorm-gemm-chain-v75", "--time-limit", "300", "-o", "{out}"],
])
def test_a_stop_requested_during_a_search_command_ends_it_with_130(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The request arrives once the input is read (as a signal would, mid-run): the
    command stops long before its 300 s (a margin no load reaches: the stop is not timed,
only told apart from a run to the limit) and prints nothing as if it had finished."""
    from models import workload

    def read_then_stop(*args: object) -> object:
        loaded = real(*args)
        interrupt.request()
        return loaded

    command = argv[0]
    name = "load_workload" if command == "tune" else "load_problem_input"
    real = getattr(workload, name)
    monkeypatch.setattr(f"schedsearch.commands.{command}.{name}", read_then_stop)
    out = tmp_path / "out.json"
    begin = time.monotonic()
    code = cli.main([part.format(out=out) for part in argv])
    captured = capsys.readouterr()
    assert code == 130, captured.err
    assert time.monotonic() - begin < 150
    if command == "solve":  # the best legal schedule so far, checked and marked
        assert json.loads(out.read_text())["meta"]["status"] == "INTERRUPTED"
    else:
        assert captured.out == "" and not out.exists()
        assert captured.err.strip().endswith("schedsearch: interrupted")
    interrupt.reset()


def test_the_configuration_bound_leaves_the_sigint_handler_in_place() -> None:
    """CP-SAT's own SIGINT catching resets the handler to the default when a solve ends;
    a Ctrl-C after a lower bound then killed the process instead of stopping it."""
    script = ("import signal, sys\n"
              "from schedsearch.engine.bounds.lower import lower_bound\n"
              "from models.targets import load_target\n"
              "from models.workload import load_workload, tile\n"
              "seen = []\n"
              "signal.signal(signal.SIGINT, lambda *a: seen.append(1))\n"
              "target = load_target('hexagon-v75')\n"
              "lower_bound(tile(load_workload('gemm-rmsnorm-v75'), target), target)\n"
              "signal.raise_signal(signal.SIGINT)\n"
              "sys.exit(0 if seen else 3)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr)


def test_main_gives_the_caller_its_signal_handlers_back() -> None:
    """A process that runs the CLI in-process (this test runner) keeps its own SIGINT and
    SIGTERM handlers afterwards: a later SIGTERM must not raise KeyboardInterrupt."""
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    assert cli.main(["targets"]) == 0
    after = {signum: signal.getsignal(signum) for signum in before}
    assert after == before
    assert all(handler is not interrupt._on_signal for handler in after.values())
