"""Rules about lane units: each op holds the units its mode asks, and no unit twice at once."""

from __future__ import annotations

from collections import defaultdict

from checker.model import Model
from checker.report import Violation

__all__ = ["check_units", "check_lane_overlap"]


def check_units(m: Model) -> list[Violation]:
    """UNITS: for each lane kind, the op holds exactly as many distinct units as its mode
    asks (none if the mode names no such lane), each index in ``[0, count)``."""
    out = []
    for name, op, p in m.scheduled():
        if not 0 <= p.mode < len(op.modes):
            continue  # MODE already says so; the wanted counts are unknown
        wanted = op.modes[p.mode].lanes
        for lane in dict.fromkeys([*wanted, *p.units]):
            units = p.units.get(lane, [])
            want = wanted.get(lane, 0)
            count = m.lanes.get(lane, 0)
            bad = sorted({u for u in units if not 0 <= u < count})
            if len(set(units)) != len(units):
                problem = f"lists a {lane} unit twice: {units}"
            elif bad:
                problem = f"holds {lane} unit(s) {bad} outside [0, {count})"
            elif len(units) != want:
                problem = f"holds {len(units)} {lane} unit(s) but mode {p.mode} asks {want}"
            else:
                continue
            out.append(Violation("UNITS", f"op {name!r} {problem}", (name,), time=p.start))
    return out


def check_lane_overlap(m: Model) -> list[Violation]:
    """LANE_OVERLAP: no two ops hold the same unit of a lane at the same time.

    Windows are half-open, so an op ending at t and one starting at t do not overlap, and
    an empty window (``[t, t)``, or an inverted one, ``end < start``) overlaps nothing.
    "A unit of a lane" is an existing one, an index in ``[0, count)``: an index outside
    is UNITS' fault alone, even if two ops hold it at once. Per unit, a sort by start and
    a running maximum of ends find every op that starts before an earlier one has ended.
    """
    holders: dict[tuple[str, int], list[tuple[int, int, str]]] = defaultdict(list)
    for name, p in m.placements.items():
        if name not in m.ops or p.end <= p.start:
            continue
        for lane, units in p.units.items():
            count = m.lanes.get(lane, 0)
            for unit in set(units):
                if 0 <= unit < count:
                    holders[lane, unit].append((p.start, p.end, name))
    out = []
    for (lane, unit), windows in holders.items():
        windows.sort()
        reach, holder = windows[0][1], windows[0][2]
        for start, end, name in windows[1:]:
            if start < reach:
                out.append(Violation("LANE_OVERLAP", f"ops {holder!r} and {name!r} both hold "
                                     f"{lane} unit {unit} at t={start} ({holder!r} until "
                                     f"t={reach})", (holder, name), time=start))
            if end > reach:
                reach, holder = end, name
    return out
