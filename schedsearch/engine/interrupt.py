"""SIGINT and SIGTERM as a stop request that every stage of a search honours.

Why not Python's default ``KeyboardInterrupt``: raised in the main thread while CP-SAT
runs a Python callback, or while a pool of CP-SAT threads is being torn down, it ends in
``terminate called ...`` or a crash inside pybind11; and CP-SAT's own SIGINT catching
(``catch_sigint_signal``) installs a C++ handler per solve, which threads racing to
install and remove it break the same way. So:

- :func:`installed` (around a command-line tool's run) turns both signals into
  :func:`request`. Inside :func:`cooperating` (a search that can stop with its best
  answer so far) that only records the request and stops the running CP-SAT solvers
  through their own ``stop_search``; elsewhere (tiling, reading, writing) it raises
  :class:`KeyboardInterrupt` as usual, since no solver thread is running there.
- Every CP-SAT solve runs in a worker thread registered with a :class:`Solvers` group;
  the thread that waits for them polls :func:`requested` and stops them, so a request
  that arrives before a solve has started is still honoured once it starts.
- Loops between solves (LNS rounds, constructive passes) check :func:`requested`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, wait
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

__all__ = ["install", "installed", "request", "requested", "reset", "cooperating",
           "Solvers", "Interrupted", "POLL_SECONDS"]

#: How often a thread waiting for CP-SAT runs looks for a stop request.
POLL_SECONDS = 0.05

_T = TypeVar("_T")
_stop = threading.Event()
_lock = threading.Lock()
_depth = 0


class Interrupted(Exception):
    """A stop was requested before anything worth keeping was found."""


def request() -> None:
    """Ask every search in progress to stop with the best answer it has."""
    _stop.set()


def requested() -> bool:
    return _stop.is_set()


def reset() -> None:
    """Forget a past request (a long-lived process starting a new command)."""
    _stop.clear()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    request()
    if _depth == 0:
        raise KeyboardInterrupt


_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def install() -> None:
    """Route SIGINT and SIGTERM to :func:`request` (only the main thread may do this)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _SIGNALS:
        signal.signal(signum, _on_signal)


@contextmanager
def installed() -> Iterator[None]:
    """:func:`install` for the duration of one command, then the caller's handlers again.
    Why: a process that calls the CLI's ``main`` in-process (a test runner, a user's
    script) would otherwise keep this handler, and a later SIGTERM meant to end that
    process would raise ``KeyboardInterrupt`` wherever it lands."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    install()
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


@contextmanager
def cooperating() -> Iterator[None]:
    """A section whose stages honour :func:`requested` and keep their best answer: a
    signal inside it only records the request."""
    global _depth
    with _lock:
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1


class Solvers:
    """The CP-SAT solvers one batch of parallel runs uses, stopped together on request."""

    def __init__(self) -> None:
        self._solvers: list[Any] = []
        self._lock = threading.Lock()

    def add(self, solver: Any) -> None:
        """Register ``solver`` (a ``cp_model.CpSolver``) before it starts solving."""
        with self._lock:
            self._solvers.append(solver)

    def _stop_all(self) -> None:
        with self._lock:
            for solver in self._solvers:
                solver.stop_search()

    def join(self, futures: Sequence[Future[_T]]) -> list[_T]:
        """The results of ``futures`` in order, stopping every registered solver as long
        as a stop is requested (a solve that had not started yet when the request came
        ignores the first ``stop_search``, hence the polling)."""
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=POLL_SECONDS)
            if requested():
                self._stop_all()
        return [future.result() for future in futures]
