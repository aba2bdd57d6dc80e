"""Rules about the ops themselves: scheduled exactly once, a valid mode, long enough,
in the order the ``after`` edges ask, and a truthful makespan."""

from __future__ import annotations

from checker.model import Model
from checker.report import Violation, plural

__all__ = ["check_names", "check_modes", "check_after", "check_makespan"]


def check_names(m: Model) -> list[Violation]:
    """OP_MISSING / OP_UNKNOWN: every problem op is scheduled exactly once, nothing else is.

    (A JSON object cannot name an op twice; the strict parser refuses duplicate keys.)
    """
    problem = m.op_names or []
    placed = m.placed_names or []
    if problem == placed:  # the common case: placed in problem order
        return []
    known, scheduled = set(problem), set(placed)
    out = [Violation("OP_MISSING", f"op {name!r} of the problem is not scheduled", (name,))
           for name in problem if name not in scheduled]
    out += [Violation("OP_UNKNOWN", f"scheduled op {name!r} is not an op of the problem",
                      (name,)) for name in placed if name not in known]
    return out


def check_modes(m: Model) -> list[Violation]:
    """MODE: ``mode`` indexes the op's ``modes``.
    DURATION: ``start >= 0`` and ``end - start >=`` the chosen mode's ``duration``."""
    out = []
    for name, op, p in m.scheduled():
        modes, mode, start = op.modes, p.mode, p.start
        if start >= 0 and 0 <= mode < len(modes) and p.end - start >= modes[mode].duration:
            continue
        if p.start < 0:
            out.append(Violation("DURATION", f"op {name!r} starts at t={p.start}, before 0",
                                 (name,), time=p.start))
        if not 0 <= p.mode < len(op.modes):
            out.append(Violation("MODE", f"op {name!r} picks mode {p.mode} but has "
                                 f"{plural(len(op.modes), 'mode')}", (name,), time=p.start))
            continue
        duration = op.modes[p.mode].duration
        if p.end - p.start < duration:
            out.append(Violation("DURATION", f"op {name!r} runs [{p.start}, {p.end}), "
                                 f"{plural(p.end - p.start, 'tick')}, but mode {p.mode} "
                                 f"needs {duration}",
                                 (name,), time=p.start))
    return out


def check_after(m: Model) -> list[Violation]:
    """AFTER: for every edge ``[pred, succ]``, ``succ.start >= pred.end``."""
    out = []
    places = m.placements
    for pred, succ in m.after:
        a, b = places.get(pred), places.get(succ)
        if a is None or b is None or pred not in m.ops or succ not in m.ops:
            continue
        if b.start < a.end:
            out.append(Violation("AFTER", f"op {succ!r} starts at t={b.start} but must wait "
                                 f"for op {pred!r}, which ends at t={a.end}", (pred, succ),
                                 time=b.start))
    return out


def check_makespan(m: Model) -> list[Violation]:
    """MAKESPAN: the declared ``makespan`` equals the largest ``end`` among the scheduled
    ops of the problem (0 for an empty schedule); a placement of an op the problem does
    not have is OP_UNKNOWN's alone and does not count."""
    if m.makespan is None:
        return []
    if m.op_names == m.placed_names:  # the common case: every placed op is known
        known = list(m.placements.items())
    else:
        problem = set(m.op_names or ())
        known = [(name, p) for name, p in m.placements.items() if name in problem]
    last = max((p.end for _, p in known), default=0)
    if m.makespan == last:
        return []
    ops = tuple(name for name, p in known if p.end == last)[:1]
    return [Violation("MAKESPAN", f"declared makespan {m.makespan} but the last op ends at "
                      f"t={last}", ops, time=last)]
