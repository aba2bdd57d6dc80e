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
from schedsearch import cli, interrupt

#: How long to wait for the search to start, and then to stop, before failing.
STARTUP_S = 30.0
STOP_S = 10.0


def _signalled(signum: int, out: Path) -> tuple[int, str]:
    """Start a 60 s solve, send ``signum`` once the search has started, return the exit
    status and stderr."""
    child = subprocess.Popen(
        [sys.executable, "-m", "schedsearch", "solve", "gemm-rmsnorm-v75", "-o", str(out),
         "--time-limit", "60"], stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    lines = []
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        line = child.stderr.readline()
        lines.append(line)
        if "constructive" in line or not line:  # the search is under way (or it died)
            break
    child.send_signal(signum)
    begin = time.monotonic()
    try:
        _, rest = child.communicate(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail(f"still running {STOP_S} s after the signal")
    assert time.monotonic() - begin < STOP_S
    return child.returncode, "".join(lines) + rest


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_search_writes_the_best_legal_schedule_and_exits_130(
        signum: int, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    code, err = _signalled(signum, out)
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


def test_a_request_inside_a_cooperating_section_only_records_it() -> None:
    interrupt.reset()
    handler = signal.getsignal(signal.SIGINT)
    try:
        interrupt.install()
        with interrupt.cooperating():
            signal.raise_signal(signal.SIGINT)  # no KeyboardInterrupt here
        assert interrupt.requested()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, handler)
        interrupt.reset()
