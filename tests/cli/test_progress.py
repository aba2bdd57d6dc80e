"""The progress display (issue #17 item 8): stage, elapsed, best and bound, refreshed by
a ticker even when nothing improves; plain lines off a terminal, one redrawn line on it."""

from __future__ import annotations

import io
import threading
import time

import pytest

from schedsearch.commands import progress
from schedsearch.engine.search import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_it_writes_plain_lines_on_every_tick_and_improvement(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "TICK_SECONDS", 0.01)
    stream = io.StringIO()
    with progress.display("solve", stream) as shown:
        shown.stage("preparing", "67 ops")
        worker = threading.Thread(target=shown.progress,
                                  args=(Progress("lns", 120, 100, 0.5),))
        worker.start()
        worker.join()
        # several ticks with nothing new: waited for, not timed (a loaded machine may
        # tick late, or once before the first stage)
        waited = time.monotonic() + 60
        while stream.getvalue().count("lns") < 3 and time.monotonic() < waited:
            time.sleep(0.01)
    lines = stream.getvalue().splitlines()
    assert "\x1b" not in stream.getvalue()
    assert any(line.endswith("solve: preparing    best -  bound -  67 ops") for line in lines)
    improved = [line for line in lines if "lns" in line]
    assert len(improved) >= 3  # the improvement, then the ticks repeating it
    assert all("best 120  bound 100" in line for line in improved)


def test_a_worse_makespan_does_not_replace_the_best() -> None:
    shown = progress.Display("solve", io.StringIO(), live=False)
    shown.progress(Progress("cp-sat", 100, 90, 1.0))
    shown.progress(Progress("lns", 130, 90, 2.0))
    assert "best 100" in shown.line() and "lns" in shown.line()
    shown.stage("solve 2", fresh=True)
    assert "best -  bound -" in shown.line()


def test_on_a_terminal_it_redraws_one_line() -> None:
    stream = _Terminal()
    with progress.display("tune", stream) as shown:
        shown.progress(Progress("constructive", 7, 5, 0.1))
    drawn = stream.getvalue()
    assert "\r" in drawn and "tune: constructive best 7  bound 5" in drawn
    assert drawn.count("\n") <= 1
