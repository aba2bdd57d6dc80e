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

__all__ = ["mode_prices"]


def mode_prices(inst: Instance, relaxation: EnergyRelaxation | None
                ) -> list[tuple[float, ...]]:
    """Per op, the price of each of its modes under ``relaxation`` (the energy LP of
    ``inst``'s problem, solved once by the caller and shared with the lower bound); all
    zero when there is no relaxation."""
    if relaxation is None:
        return [tuple(0.0 for _ in modes) for modes in inst.modes]
    return [tuple(relaxation.mode_price(mode.duration, mode.lanes, mode.budgets)
                  for mode in modes) for modes in inst.modes]
