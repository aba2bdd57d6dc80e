"""The one atomic writer: a file appears whole or not at all, with the usual mode.

Every file the project writes (schedules, plans, traces, pictures, placement CSV,
benchmark downloads) goes through :func:`write_atomic`: the content is written to a
temporary file beside the target, then renamed over it, so a reader never sees a
partial file and a failure leaves the old file (or none). The temporary file is made
``0o666`` less the umask, as ``open()`` would make it (``mkstemp``'s ``0o600`` is for
secrets, and these files are for sharing).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["write_atomic", "write_text_atomic", "write_json_atomic"]


def _umask() -> int:
    """The process umask (read by setting it, so set it straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike[str], write: Callable[[BinaryIO], None]) -> None:
    """Let ``write`` fill a temporary file beside ``path``, then rename it over ``path``;
    on any exception (``write``'s included) the temporary file is removed and the
    exception goes on."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    try:
        os.fchmod(handle, 0o666 & ~_umask())
        with os.fdopen(handle, "wb") as stream:
            write(stream)
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """``text`` (UTF-8) to ``path`` whole or not at all."""
    write_atomic(path, lambda stream: stream.write(text.encode("utf-8")))


def write_json_atomic(path: str | os.PathLike[str], document: Any) -> None:
    """``document`` as indented JSON and a final newline, whole or not at all."""
    write_text_atomic(path, json.dumps(document, indent=1) + "\n")
