"""The one way every command writes a file: checked before any work, written whole.

An output option is declared with ``type=output_file`` (``image_file`` for pictures,
``output_dir`` for directories), so argparse refuses a path whose directory is missing
or unwritable with one line and exit 2 before anything is tiled or searched. The check
is a real one (a temporary file is created and removed in that directory), since
permission bits say little to root or on a read-only mount. The writes themselves
(:func:`write_json`, :func:`write_with`) go to a temporary file renamed over the
target, so a reader never sees a partial file, and any failure that remains (a full
disk) is one :class:`~models.errors.InputError` line, rule FILE.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from models.errors import InputError
from models.files import write_atomic, write_json_atomic

__all__ = ["output_file", "output_file_only", "image_file", "output_dir", "write_json",
           "write_with", "image_format", "STDOUT"]

#: The output name that means standard output, where a command allows it.
STDOUT = "-"


def _probe(directory: Path) -> str | None:
    """Why a file cannot be created in ``directory``, or None if it can."""
    if not directory.exists():
        return f"no such directory: {str(directory)!r}"
    if not directory.is_dir():
        return f"not a directory: {str(directory)!r}"
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        return f"cannot write in {str(directory)!r}: {error.strerror}"
    return None


def output_file(text: str) -> str:
    """An argparse type: a file path whose directory exists and takes new files, or
    ``-`` for standard output (see :func:`output_file_only` where there is none)."""
    if text == STDOUT:
        return text
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file")
    problem = _probe(path.parent if str(path.parent) else Path("."))
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def output_file_only(text: str) -> str:
    """An argparse type: :func:`output_file` for a command that has no standard-output
    form (``-`` would otherwise become a file named ``-``)."""
    if text == STDOUT:
        raise argparse.ArgumentTypeError("standard output ('-') is not an output here; "
                                         "give a file name")
    return output_file(text)


def image_format(path: str | os.PathLike[str]) -> str:
    """The picture format ``path``'s suffix names (png without one); InputError (rule
    FILE) if matplotlib cannot write it."""
    from matplotlib.backend_bases import FigureCanvasBase

    name = Path(path).suffix[1:].lower() or "png"
    supported = FigureCanvasBase.get_supported_filetypes()
    if name not in supported:
        raise InputError(f"cannot write images of type {name!r}; use one of "
                         f"{', '.join(sorted(supported))}", source=str(path), rule="FILE")
    return name


def image_file(text: str) -> str:
    """An argparse type: :func:`output_file` whose suffix is a picture format."""
    path = output_file(text)
    if path == STDOUT:
        raise argparse.ArgumentTypeError("a picture cannot go to standard output")
    try:
        image_format(path)
    except InputError as error:
        raise argparse.ArgumentTypeError(error.message) from None
    return path


def output_dir(text: str) -> str:
    """An argparse type: a directory that exists and takes new files, or that can be
    created (its nearest existing ancestor takes new files)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    path = Path(text)
    while not path.exists() and path != path.parent:
        path = path.parent
    problem = _probe(path)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def _failed(path: str | os.PathLike[str], error: OSError) -> InputError:
    return InputError(f"cannot write: {error.strerror or error}", source=str(path),
                      rule="FILE")


def write_json(path: str | os.PathLike[str], document: Any) -> None:
    """Write ``document`` to ``path`` whole or not at all; failure is one FILE line."""
    try:
        write_json_atomic(path, document)
    except OSError as error:
        raise _failed(path, error) from None


def write_with(path: str | os.PathLike[str], write: Callable[[BinaryIO], None]) -> None:
    """Let ``write`` fill ``path`` whole or not at all (:func:`models.files.write_atomic`);
    failure is one FILE line."""
    try:
        write_atomic(path, write)
    except OSError as error:
        raise _failed(path, error) from None
