"""Instance builders for the placement tests (no external data)."""

from __future__ import annotations

import random

from schedsearch.engine.placement import PlacementBuffer


def guillotine(seed: int, cuts: int, capacity: int = 64,
               horizon: int = 64) -> list[PlacementBuffer]:
    """A perfect packing: the rectangle time x bytes cut ``cuts`` times, one buffer per
    piece. Its smallest capacity is exactly ``capacity`` (the pieces fill it)."""
    rnd = random.Random(seed)
    pieces = [(0, horizon, 0, capacity)]
    for _ in range(cuts):
        index = rnd.randrange(len(pieces))
        lo, up, bottom, top = pieces[index]
        if up - lo > 1 and (top - bottom < 2 or rnd.random() < 0.5):
            at = rnd.randrange(lo + 1, up)
            pieces[index:index + 1] = [(lo, at, bottom, top), (at, up, bottom, top)]
        elif top - bottom > 1:
            at = rnd.randrange(bottom + 1, top)
            pieces[index:index + 1] = [(lo, up, bottom, at), (lo, up, at, top)]
    rnd.shuffle(pieces)
    return [PlacementBuffer(f"b{i}", lo, up, top - bottom)
            for i, (lo, up, bottom, top) in enumerate(pieces)]
