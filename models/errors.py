"""The one error type for unusable input: it names the file, the JSON path and the rule."""

from __future__ import annotations

__all__ = ["InputError", "shortened", "MAX_ECHO"]

#: The most characters of a user's input an error message echoes (a NUL-filled file
#: is one "line" of hundreds of megabytes).
MAX_ECHO = 80


def shortened(text: str) -> str:
    """``repr(text)``, cut to :data:`MAX_ECHO` characters of ``text`` with the length
    said, for echoing input in a one-line message."""
    if len(text) <= MAX_ECHO:
        return repr(text)
    return f"{text[:MAX_ECHO]!r}... ({len(text):,} characters)"


class InputError(Exception):
    """Input that cannot be used (malformed, inconsistent or infeasible by construction).

    ``source`` is the file (or ``<stdin>``, or a bundled name), ``path`` a JSON path such
    as ``$.ops["g0.mm.0"].modes[1]``, ``rule`` a short code saying which rule broke.
    ``str(error)`` is the single line a command-line tool prints before exiting with 2.
    """

    def __init__(self, message: str, *, source: str = "<input>", path: str = "$",
                 rule: str = "FORMAT") -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.path = path
        self.rule = rule

    def __str__(self) -> str:
        return f"{self.source}: {self.path}: {self.rule}: {self.message}"

    def with_source(self, source: str) -> InputError:
        """The same error, attributed to ``source`` (readers learn the file name late)."""
        return InputError(self.message, source=source, path=self.path, rule=self.rule)
