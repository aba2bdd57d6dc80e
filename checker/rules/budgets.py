"""The budget rule: fluid shared capacities such as DDR bandwidth."""

from __future__ import annotations

from checker.model import Model
from checker.report import Violation

__all__ = ["check_budgets"]

#: Most op names one BUDGET violation lists (the message gives the full count).
LISTED_OPS = 16


def check_budgets(m: Model) -> list[Violation]:
    """BUDGET: at every instant, the draws of the running ops on each budget sum to at most
    its capacity. An op draws its chosen mode's amount over its whole half-open window.

    An event sweep per budget, ends before starts at equal times; one violation per
    stretch of time over capacity, at its first instant.
    """
    events: dict[str, list[tuple[int, int, int, str]]] = {b: [] for b in m.budgets}
    for name, op, p in m.scheduled():
        if not 0 <= p.mode < len(op.modes) or p.end <= p.start:
            continue
        for budget, draw in op.modes[p.mode].budgets.items():
            if draw and budget in events:
                events[budget].append((p.start, 1, draw, name))
                events[budget].append((p.end, 0, draw, name))
    out = []
    for budget, timeline in events.items():
        capacity = m.budgets[budget]
        timeline.sort()
        running: dict[str, int] = {}
        total = 0
        over = False
        for i, (time, is_start, draw, name) in enumerate(timeline):
            if is_start:
                running[name] = draw
                total += draw
            else:
                del running[name]
                total -= draw
            if i + 1 < len(timeline) and timeline[i + 1][0] == time:
                continue  # judge the instant once all its events are in
            if total > capacity and not over:
                names = tuple(running)[:LISTED_OPS]
                out.append(Violation("BUDGET", f"the {len(running)} op(s) running at t={time} "
                                     f"draw {total} from {budget}, above its capacity "
                                     f"{capacity}", names, time=time))
            over = total > capacity
    return out
