"""Counts in the commands' sentences: "1 launch", "2 launches", never "1 launches"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(number: int, noun: str) -> str:
    """``number`` and ``noun``, in the plural unless ``number`` is 1 (English's regular
    plurals: "-es" after s, x, ch and sh, else "-s"; ``noun`` is given in the singular)."""
    if number == 1:
        return f"{number} {noun}"
    suffix = "es" if noun.endswith(("s", "x", "ch", "sh")) else "s"
    return f"{number} {noun}{suffix}"
