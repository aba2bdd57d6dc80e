"""A live progress display for the long commands (``solve``, ``compare``, ``tune``).

Why a display and not a line per improvement: a search can go a minute without one, and
silence looks like a hang. The display shows the stage, the elapsed time, the best
makespan and the bound, refreshed by a ticker thread at least once a second whether or
not anything improved.

On a terminal it is one line that rich redraws in place (``rich.live.Live``: the total
work is unknown, so a status line rather than a tqdm bar with a total). When stderr is
not a terminal (a log, a pipe, CI) it writes plain lines instead, one per second and one
per improvement, so a log still says what happened when.

Updates come from the search's callbacks, which CP-SAT calls from its worker threads,
so the state is guarded by a lock.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from schedsearch.engine.search import Progress

if TYPE_CHECKING:  # rich is imported only on a terminal (0.05-0.1 s of every command)
    from rich.live import Live
    from rich.text import Text

__all__ = ["Display", "display", "TICK_SECONDS"]

#: How often the display is redrawn (and, off a terminal, a line is written).
TICK_SECONDS = 1.0


@dataclass(slots=True)
class _State:
    stage: str = "starting"
    best: int | None = None
    bound: int | None = None
    note: str = ""


class Display:
    """The state shown, and how it reaches the user (see the module docstring)."""

    def __init__(self, title: str, stream: TextIO, live: bool,
                 begin: float | None = None) -> None:
        self.title = title
        self.stream = stream
        self.begin = time.perf_counter() if begin is None else begin
        self._state = _State()
        self._lock = threading.Lock()
        self._live: Live | None = None
        if live:
            from rich.console import Console
            from rich.live import Live

            console = Console(file=stream, force_terminal=True)
            self._live = Live(self.render(), console=console, auto_refresh=False,
                              transient=False)

    def line(self) -> str:
        """The current state as one line of text."""
        with self._lock:
            state = self._state
            best = "-" if state.best is None else f"{state.best}"
            bound = "-" if state.bound is None else f"{state.bound}"
            note = f"  {state.note}" if state.note else ""
            return (f"[{time.perf_counter() - self.begin:7.2f}s] {self.title}: "
                    f"{state.stage:<12} best {best}  bound {bound}{note}")

    def render(self) -> Text:
        from rich.text import Text

        return Text(self.line())

    def stage(self, stage: str, note: str = "", *, fresh: bool = False) -> None:
        """A new stage (tiling, searching, a finalist...), shown at once; ``fresh`` when
        it works on another problem, whose best and bound are not comparable."""
        with self._lock:
            if fresh:
                self._state = _State()
            self._state.stage, self._state.note = stage, note
        self._show()

    def progress(self, progress: Progress) -> None:
        """A search callback: a new best makespan or bound (``api.Progress``)."""
        with self._lock:
            state = self._state
            improved = state.best is None or progress.makespan < state.best
            state.stage = progress.stage
            state.best = progress.makespan if improved else state.best
            state.bound = progress.bound
        if improved:
            self._show()

    def tick(self) -> None:
        self._show()

    def open(self) -> None:
        if self._live is not None:
            self._live.start()

    def close(self) -> None:
        """Leave the last state on screen (a terminal) or write it (a log)."""
        if self._live is not None:
            self._live.update(self.render(), refresh=True)
            self._live.stop()

    def _show(self) -> None:
        if self._live is not None:
            self._live.update(self.render(), refresh=True)
        else:
            self.stream.write(self.line() + "\n")
            self.stream.flush()


@contextmanager
def display(title: str, stream: TextIO | None = None,
            begin: float | None = None) -> Iterator[Display]:
    """A :class:`Display` on ``stream`` (stderr) for the duration of the block, ticking
    every :data:`TICK_SECONDS`, its clock started at ``begin`` (a
    :func:`time.perf_counter` value, default now); the ticker thread is joined on the way
    out."""
    out = sys.stderr if stream is None else stream
    shown = Display(title, out, live=out.isatty(), begin=begin)
    stop = threading.Event()

    def ticker() -> None:
        while not stop.wait(TICK_SECONDS):
            shown.tick()

    thread = threading.Thread(target=ticker, name="progress", daemon=True)
    shown.open()
    thread.start()
    try:
        yield shown
    finally:
        stop.set()
        thread.join()
        shown.close()
