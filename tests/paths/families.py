"""Configuration families: which shapes deserve a specialised plan, and when it pays off.

A specialised plan costs ``preparation`` once (search, compile, load), then ``specialised``
per call instead of the generic kernel's ``generic`` per call. Two things eat into that
gain in practice: the prepared plan can be lost (evicted from a plan cache, VTCM layout
invalidated), and a dispatcher has to look the request up to find the plan at all. With a
per-call probability ``eviction`` of paying ``preparation`` again and a lookup costing
``selection`` per call, the expected steady-state cost of one specialised call is::

    expected = specialised + eviction * preparation + selection

and ``n`` calls through the plan cost ``preparation + n * expected`` against
``n * generic``, so the plan breaks even after ``ceil(preparation / (generic - expected))``
calls, and never when ``expected >= generic``.

Worked example (issue 6): preparation 200 us, generic 50 us, specialised 30 us breaks
even after 200 / 20 = 10 calls; with eviction 0.1 and selection 2 us the expected call
costs 30 + 20 + 2 = 52 us, worse than the generic 50 us, so it never breaks even.

Units are whatever the caller uses (us here, ticks elsewhere); every figure is a float.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ShapeCosts", "FamilyChoice", "expected_specialised_cost", "break_even_calls",
           "choose_specialisations"]

#: Slack for float division in :func:`break_even_calls` (200 / 20 must give 10, not 11).
_EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class ShapeCosts:
    """One shape of a request distribution: how often it is asked for and what it costs."""

    key: str
    frequency: float
    preparation: float
    specialised: float
    generic: float

    def __post_init__(self) -> None:
        for name in ("frequency", "preparation", "specialised", "generic"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"shape {self.key!r}: {name} must be >= 0")


@dataclass(frozen=True, slots=True)
class FamilyChoice:
    """Which shapes get a specialised plan, and the expected cost per call either way.

    ``expected_per_call`` is for the chosen set (selection paid on every call once any
    plan exists, since the dispatcher must look every request up; with a finite horizon
    the first preparations amortised over it); ``generic_per_call``
    is the cost with no specialisation at all; ``break_even`` maps each shape to its own
    break-even call count (``None``: never).
    """

    prepared: tuple[str, ...]
    expected_per_call: float
    generic_per_call: float
    break_even: dict[str, int | None]


def expected_specialised_cost(costs: ShapeCosts, eviction: float = 0.0,
                              selection: float = 0.0) -> float:
    """Expected steady-state cost of one call through a prepared plan (module docstring)."""
    _check_probability(eviction)
    return costs.specialised + eviction * costs.preparation + selection


def break_even_calls(costs: ShapeCosts, eviction: float = 0.0,
                     selection: float = 0.0) -> int | None:
    """Smallest call count after which preparing the plan has paid for itself, or ``None``."""
    saving = costs.generic - expected_specialised_cost(costs, eviction, selection)
    if saving <= 0:
        return None
    return max(1, math.ceil(costs.preparation / saving - _EPSILON))


def choose_specialisations(shapes: Sequence[ShapeCosts], *, eviction: float = 0.0,
                           selection: float = 0.0,
                           calls: float | None = None) -> FamilyChoice:
    """Choose the set of shapes to specialise that minimises the expected cost per call.

    Frequencies are normalised to shares. A shape specialised saves, per call of the
    whole distribution, ``share * (generic - specialised - eviction * preparation)``,
    less ``preparation / calls`` when a finite horizon of ``calls`` calls is given (the
    first preparation amortised). Selection is a fixed cost per call paid once any plan
    exists, so the optimum takes every shape with a positive saving if their sum exceeds
    ``selection``, and none otherwise; the objective is separable beyond that fixed cost.
    """
    _check_probability(eviction)
    if calls is not None and not calls > 0:
        raise ValueError("calls must be > 0")
    total = sum(shape.frequency for shape in shapes)
    if total <= 0:
        raise ValueError("the request distribution needs a positive total frequency")
    shares = {shape.key: shape.frequency / total for shape in shapes}
    if len(shares) != len(shapes):
        raise ValueError("shape keys must be distinct")
    generic = sum(shares[s.key] * s.generic for s in shapes)
    savings: dict[str, float] = {}
    for shape in shapes:
        saving = shares[shape.key] * (shape.generic - shape.specialised
                                      - eviction * shape.preparation)
        if calls is not None:
            saving -= shape.preparation / calls
        if saving > 0:
            savings[shape.key] = saving
    gain = sum(savings.values()) - selection
    prepared = tuple(key for key in shares if key in savings) if gain > 0 else ()
    return FamilyChoice(
        prepared=prepared,
        expected_per_call=generic - gain if prepared else generic,
        generic_per_call=generic,
        break_even={s.key: break_even_calls(s, eviction, selection) for s in shapes})


def _check_probability(eviction: float) -> None:
    if not 0.0 <= eviction <= 1.0:
        raise ValueError(f"eviction is a probability, got {eviction}")
