"""The budget rule: fluid shared capacities such as DDR bandwidth."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from checker.model import Model
from checker.report import Violation, plural

__all__ = ["check_budgets"]

#: Most op names one BUDGET violation lists (the message gives the full count).
LISTED_OPS = 16


@dataclass(slots=True)
class _Draws:
    """The non-empty windows drawing on one budget, as parallel lists."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    draws: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def never_over(self, capacity: int) -> bool:
        """Whether the running total stays within ``capacity`` at every instant: the sweep
        of :func:`check_budgets` in NumPy. ``False`` also when a sum might not fit in 64
        bits: the exact sweep then decides."""
        n = len(self.draws)
        if n == 0:
            return True
        draws = np.array(self.draws, dtype=np.int64)
        if int(draws.max()) * n >= 2**62:
            return False
        times = np.concatenate([np.array(self.starts, dtype=np.int64),
                                np.array(self.ends, dtype=np.int64)])
        is_start = np.concatenate([np.ones(n, dtype=np.int8), np.zeros(n, dtype=np.int8)])
        order = np.lexsort((is_start, times))  # ends before starts at equal times
        times = times[order]
        total = np.cumsum(np.concatenate([draws, -draws])[order])
        last_of_instant = np.append(times[1:] != times[:-1], True)
        return bool((total[last_of_instant] <= capacity).all())


def check_budgets(m: Model) -> list[Violation]:
    """BUDGET: at every instant, the draws of the running ops on each budget sum to at most
    its capacity. An op draws its chosen mode's amount over its whole half-open window.

    An event sweep per budget, ends before starts at equal times; one violation per
    stretch of time over capacity, at its first instant. (NumPy first says whether there
    is any; the sweep in Python then finds and names them.)
    """
    tables: dict[str, _Draws] = {b: _Draws() for b in m.budgets}
    for name, op, p in m.scheduled():
        if not 0 <= p.mode < len(op.modes) or p.end <= p.start:
            continue
        for budget, draw in op.modes[p.mode].budgets.items():
            table = tables.get(budget)
            if draw and table is not None:
                table.starts.append(p.start)
                table.ends.append(p.end)
                table.draws.append(draw)
                table.names.append(name)
    out = []
    for budget, table in tables.items():
        capacity = m.budgets[budget]
        if table.never_over(capacity):
            continue
        timeline = sorted([*zip(table.starts, [1] * len(table.draws), table.draws, table.names,
                                strict=True),
                           *zip(table.ends, [0] * len(table.draws), table.draws, table.names,
                                strict=True)])
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
                draw = "draws" if len(running) == 1 else "draw"
                out.append(Violation("BUDGET", f"{plural(len(running), 'op')} running at t={time} "
                                     f"{draw} {total} from {budget}, above its capacity "
                                     f"{capacity}", names, time=time))
            over = total > capacity
    return out
