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

import dataclasses

from schedsearch.engine.bounds.lower import EnergyRelaxation
from schedsearch.engine.instance import Instance, ModeView

__all__ = ["mode_prices", "lean_split", "paired_instance", "yielding_modes",
           "fast_store_modes"]


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
    and a lean one on the same lane kind (the one of its modes there that draws least)
    whose draws fit every budget together while two fast ones do not (a DMA load at full
    and at half DDR bandwidth), so at most one fast op runs at a time,
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
        kind = modes[fast].lanes[0][0]
        if len(modes) == 1 or inst.target.lanes.get(kind) != 2:
            choice.append((fast, -1))
            continue
        lean = min((k for k in single if modes[k].lanes[0][0] == kind),
                   key=lambda k: sum(v for _, v in modes[k].budgets))
        if lean == fast:  # nothing to split: it runs on either unit
            choice.append((fast, -1))
            continue
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


def paired_instance(inst: Instance, split: list[tuple[int, int]]) -> Instance:
    """``inst`` with the units of :func:`lean_split` made lanes: each fast op's mode of
    ``split`` also holds one unit of a lane ``<kind>:fast``, each lean op's one of
    ``<kind>:lean``, one unit each. A list pass on it runs every fast op on one queue and
    every lean one on the other, so the bus carries a fast and a lean load at once
    instead of two lean ones (a third of it idle) whenever both kinds wait; its
    schedule keeps every rule of ``inst``, whose lanes are those less the new ones.
    Measured on the bundled triple with ample memory (511 ops), the paced order
    (:func:`~.orders.paced_order`) with a window of 64, longest tail first, one mode per
    op: 385,002 ns unpaired, 361,259 paired (the bound: 358,865)."""
    extra: dict[str, int] = {}
    modes = []
    for views, (chosen, unit) in zip(inst.modes, split, strict=True):
        if unit < 0:
            modes.append(views)
            continue
        lane = f"{views[chosen].lanes[0][0]}:{'fast' if unit == 0 else 'lean'}"
        extra[lane] = 1
        modes.append(tuple(
            ModeView(view.duration, tuple(sorted((*view.lanes, (lane, 1)))), view.budgets)
            if k == chosen else view for k, view in enumerate(views)))
    target = dataclasses.replace(inst.target, lanes={**inst.target.lanes, **extra})
    return dataclasses.replace(inst, target=target, modes=tuple(modes))


def yielding_modes(inst: Instance, lane: str, on: list[bool]) -> list[list[int]]:
    """Per op, the modes a list pass may take where ``lane``, the busiest lane kind, is
    a transfer queue whose ops share a budget with ops elsewhere: an op that never runs
    on ``lane`` (``on``: per op, whether some mode of it does) takes only its modes that
    draw least of each budget ``lane``'s ops draw; every other op keeps all its modes.

    Why. On the Ascend pair one load queue (MTE2) binds from start to end, and the
    stores run on their own queue (MTE3) on the same 64 units of GM bandwidth: a store
    at full rate draws 48, which leaves no room for a load (24 at half rate, 48 at full),
    so the load queue waits. The configuration LP runs every store at half rate. From
    the list scheduler alone, the hungriest task first with stores at half rate: 1.068,
    1.050, 1.046, 1.044 of the bound at 153, 606, 2,009 and 7,972 ops, where the best
    pass with every mode gave 1.125, 1.121, 1.116, 1.118."""
    shared = {name for i in range(inst.n_ops) if on[i]
              for mode in inst.modes[i] for name, _ in mode.budgets}
    allowed = []
    for i, modes in enumerate(inst.modes):
        keep = list(range(len(modes)))
        if not on[i]:
            for name in sorted(shared):
                least = min(dict(modes[k].budgets).get(name, 0) for k in keep)
                keep = [k for k in keep if dict(modes[k].budgets).get(name, 0) == least]
        allowed.append(keep)
    return allowed


def fast_store_modes(inst: Instance) -> list[list[int]]:
    """Per op, the modes a list pass may take where memory, not the bus, decides when a
    transfer can start: a store (it reads a buffer and writes DDR) only its shortest
    modes, a load (it reads DDR and writes a buffer) only its mode that draws least of
    the budgets among those on its shortest mode's lane kind; other ops keep every mode.

    Why. A store's end frees its buffer, so the next load, waiting for that room, starts
    sooner the faster the store runs; a load beside it takes the rest of the bus. On the
    tight chain (RMSNorm -> DDR -> copy) each gap between two norm computes is shortest
    (5,716 ns, the ``gaps:VTCM`` bound's price) with the norm's store at full bandwidth
    beside a copy block's load at half, then the next norm load at half beside the
    copy's store at full. Taking the shortest mode that fits, a list pass gives the norm
    load the full bandwidth the ended store left, and the copy's store then runs at half:
    7,354 ns."""
    allowed = []
    for i, modes in enumerate(inst.modes):
        keep = list(range(len(modes)))
        reads_ddr, writes_ddr = inst.reads_ddr(i), inst.writes_ddr(i)
        if len(modes) > 1 and writes_ddr and not reads_ddr:
            least = min(modes[k].duration for k in keep)
            keep = [k for k in keep if modes[k].duration == least]
        elif len(modes) > 1 and reads_ddr and not writes_ddr:
            fast = min(keep, key=lambda k: (modes[k].duration, k))
            kinds = {lane for lane, _ in modes[fast].lanes}
            there = [k for k in keep if {lane for lane, _ in modes[k].lanes} == kinds]
            least = min(sum(amount for _, amount in modes[k].budgets) for k in there)
            keep = [k for k in there if sum(amount for _, amount in modes[k].budgets) == least]
        allowed.append(keep)
    return allowed
