"""Counts in sentences: "1 launch", "2 launches", never "1 launches"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(number: int, noun: str, *, grouped: bool = False) -> str:
    """``number`` and ``noun``, in the plural unless ``number`` is 1 (English's regular
    plurals: "-es" after s, x, ch and sh, else "-s"; ``noun`` is given in the singular,
    its last word the one counted); ``grouped`` writes the number with thousands
    separators ("1,000")."""
    figure = f"{number:,}" if grouped else f"{number}"
    if number == 1:
        return f"{figure} {noun}"
    suffix = "es" if noun.endswith(("s", "x", "ch", "sh")) else "s"
    return f"{figure} {noun}{suffix}"
