"""Rules about lane units: each op holds the units its mode asks, and no unit twice at once."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from checker.model import Model
from checker.report import Violation, plural

__all__ = ["check_units", "check_lane_overlap"]


def check_units(m: Model) -> list[Violation]:
    """UNITS: for each lane kind, the op holds exactly as many distinct units as its mode
    asks (none if the mode names no such lane), each index in ``[0, count)``."""
    out = []
    for name, op, p in m.scheduled():
        if not 0 <= p.mode < len(op.modes):
            continue  # MODE already says so; the wanted counts are unknown
        wanted = op.modes[p.mode].lanes
        if wanted.keys() == p.units.keys() and _holds_as_asked(wanted, p.units, m.lanes):
            continue
        for lane in dict.fromkeys([*wanted, *p.units]):
            units = p.units.get(lane, [])
            want = wanted.get(lane, 0)
            count = m.lanes.get(lane, 0)
            bad = sorted({u for u in units if not 0 <= u < count})
            if len(set(units)) != len(units):
                problem = f"lists a {lane} unit twice: {units}"
            elif bad:
                problem = f"holds {lane} unit{'s' * (len(bad) != 1)} {bad} outside [0, {count})"
            elif len(units) != want:
                problem = (f"holds {plural(len(units), lane + ' unit')} but mode {p.mode} "
                           f"asks {want}")
            else:
                continue
            out.append(Violation("UNITS", f"op {name!r} {problem}", (name,), time=p.start))
    return out


def _holds_as_asked(wanted: dict[str, int], units: dict[str, list[int]],
                    counts: dict[str, int]) -> bool:
    """The common case, quickly: every lane's list has the asked length, no repeats, and
    only indices in ``[0, count)``."""
    for lane, held in units.items():
        n = len(held)
        if n != wanted[lane]:
            return False
        count = counts.get(lane, 0)
        if n == 1:
            if not 0 <= held[0] < count:
                return False
        elif len(set(held)) != n or not all(0 <= u < count for u in held):
            return False
    return True


def check_lane_overlap(m: Model) -> list[Violation]:
    """LANE_OVERLAP: no two ops hold the same unit of a lane at the same time.

    Windows are half-open, so an op ending at t and one starting at t do not overlap, and
    an empty window (``[t, t)``, or an inverted one, ``end < start``) overlaps nothing.
    "A unit of a lane" is an existing one, an index in ``[0, count)``: an index outside
    is UNITS' fault alone, even if two ops hold it at once. Per unit, a sort by start and
    a running maximum of ends find every op that starts before an earlier one has ended.
    """
    holders: dict[tuple[str, int], _Windows] = defaultdict(_Windows)
    ops, counts = m.ops, m.lanes
    for name, p in m.placements.items():
        if p.end <= p.start or name not in ops:
            continue
        for lane, units in p.units.items():
            count = counts.get(lane, 0)
            for unit in units if len(units) == 1 else set(units):
                if 0 <= unit < count:
                    windows = holders[lane, unit]
                    windows.starts.append(p.start)
                    windows.ends.append(p.end)
                    windows.names.append(name)
    out = []
    for (lane, unit), windows in holders.items():
        if not windows.any_overlap():
            continue
        ordered = sorted(zip(windows.starts, windows.ends, windows.names, strict=True))
        reach, holder = ordered[0][1], ordered[0][2]
        for start, end, name in ordered[1:]:
            if start < reach:
                out.append(Violation("LANE_OVERLAP", f"ops {holder!r} and {name!r} both hold "
                                     f"{lane} unit {unit} at t={start} ({holder!r} until "
                                     f"t={reach})", (holder, name), time=start))
            if end > reach:
                reach, holder = end, name
    return out


@dataclass(slots=True)
class _Windows:
    """The windows on one lane unit, as parallel lists (cheap to turn into arrays)."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def any_overlap(self) -> bool:
        """Whether some window starts before an earlier-starting one has ended: one NumPy
        sort and running maximum (the sweep then names the ops, only when there are any)."""
        if len(self.starts) < 2:
            return False
        starts, ends = np.array(self.starts, dtype=np.int64), np.array(self.ends, dtype=np.int64)
        order = np.lexsort((ends, starts))
        reach = np.maximum.accumulate(ends[order])
        return bool((starts[order][1:] < reach[:-1]).any())
