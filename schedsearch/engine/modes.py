"""Which modes are worth taking: prices of the lanes and budgets from the energy LP.

Taking the shortest mode that fits is myopic when one resource binds the whole schedule:
on the bundled triple the two DMA queues and the DDR bandwidth are both saturated from
start to end, and the copy task's loads and stores have an HVX mode (long, but drawing
little bandwidth and no DMA queue) that the shortest-first rule never takes, although
the lower bound's ``energy`` part relies on it.

The LP of :func:`schedsearch.engine.bounds.lower.energy_relaxation` (choose each op's modes
fractionally so that every lane kind's work and every budget's draw fit ``capacity * T``; minimise
``T``) has dual values: a price per unit of each resource, zero for those that do not
bind. A mode's *price* is the sum over resources of price x duration x amount. By
complementary slackness the modes an optimal LP solution uses are the cheapest ones, so
a mode far dearer than an op's cheapest wastes what binds the schedule.
"""

from __future__ import annotations

from schedsearch.engine.bounds.lower import EnergyRelaxation
from schedsearch.engine.instance import Instance

__all__ = ["mode_prices", "lean_split"]


def mode_prices(inst: Instance, relaxation: EnergyRelaxation | None
                ) -> list[tuple[float, ...]]:
    """Per op, the price of each of its modes under ``relaxation`` (the energy LP of
    ``inst``'s problem, solved once by the caller and shared with the lower bound); all
    zero when there is no relaxation."""
    if relaxation is None:
        return [tuple(0.0 for _ in modes) for modes in inst.modes]
    return [tuple(relaxation.mode_price(mode.duration, mode.lanes, mode.budgets)
                  for mode in modes) for modes in inst.modes]


def lean_split(inst: Instance) -> list[tuple[int, int]] | None:
    """Per op, one mode that shares a saturated bus the way the energy LP's mix does,
    made whole: on a lane kind of two units, each op of several modes holds a fast mode
    and a lean one whose draws fit every budget together while two fast ones do not (a
    DMA load at full and at half DDR bandwidth), so at most one fast op runs at a time,
    beside lean ones. Ops go fast, those whose fast mode saves the most relative to the
    pair first, while the fast time fits in the lean time (the two queues then stay
    equally busy: the LP's fractions made integral). Ops on other lanes take their
    shortest single-unit mode. Per op, its mode and its unit: 0 for the fast ops of the
    split, 1 for the lean ones, -1 (any unit) for the others. None where the problem is
    not of that shape (no such op, an op of no single-unit mode, or a pair whose draws
    do not split the budget so)."""
    budgets = inst.target.budgets
    choice: list[tuple[int, int]] = []
    split: list[tuple[float, int, int, int]] = []
    lean_total = 0
    for i, modes in enumerate(inst.modes):
        single = [k for k, m in enumerate(modes) if sum(n for _, n in m.lanes) == 1]
        if not single:
            return None
        fast = min(single, key=lambda k: modes[k].duration)
        kind = modes[single[0]].lanes[0][0]
        if len(modes) == 1 or inst.target.lanes.get(kind) != 2:
            choice.append((fast, -1))
            continue
        lean = min(single, key=lambda k: sum(v for _, v in modes[k].budgets))
        f, s = modes[fast], dict(modes[lean].budgets)
        if not all(draw + s.get(b, 0) <= budgets[b] < 2 * draw for b, draw in f.budgets):
            return None
        choice.append((lean, 1))
        lean_total += modes[lean].duration
        both = f.duration + modes[lean].duration
        split.append(((modes[lean].duration - f.duration) / both, i, fast, both))
    if not split:
        return None
    room = lean_total
    for _, i, fast, both in sorted(split, reverse=True):
        if both <= room:
            choice[i] = (fast, 0)
            room -= both
    return choice
