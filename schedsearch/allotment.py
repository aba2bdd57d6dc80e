"""One command's time limit, allotted to the solves it runs.

A user reads ``--time-limit`` as the budget of the whole command (issue 31): ``compare``,
``chain``, ``whatif`` and ``tune`` run several solves, and around them import libraries,
tile, bound, score, verify and plot. So the command starts one
:class:`~schedsearch.engine.timebudget.TimeBudget` when it starts (``args.started``, set by
:mod:`schedsearch.cli` before the command's libraries are imported) and every solve,
as it begins, is granted its weight's part of what is left:

- *work*: ``weight / planned`` of the work left, where ``planned`` is the weight of the
  solves not yet begun. The granted work is charged whether or not the solve used it,
  so the grants are the same at any speed and ``--reproducible`` repeats.
- *wall time*: the same fraction of the wall time left, less the ``tail`` kept for what
  follows the solves (scoring, the checker, plots, output). A solve after one that
  overran (or after slow imports) gets less; the preparation of every solve (its bound,
  its list schedule) is paid from the same clock.

A study that plans its solves (:meth:`Allotment.plan`) spends the limit in the
proportions it chose; a solve it did not plan gets all that is left.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedsearch.engine.timebudget import TimeBudget

__all__ = ["Allotment", "Grant", "TAIL_SHARE", "MIN_SECONDS"]

#: Share of a study's limit kept, as wall time, for the work after its last solve: the
#: checker and the cost model on each path's schedule of the whole problem (``compare``
#: verifies four, ``chain`` up to seven per edge), plots and output.
TAIL_SHARE = 0.1
#: The least a solve is granted (seconds): the search takes no limit of zero, and a solve
#: granted this little still returns its list schedule (legal, the cheap passes first).
MIN_SECONDS = 1e-3


@dataclass(frozen=True, slots=True)
class Grant:
    """One solve's part of the command's time: ``time_limit`` (its work when the command
    is reproducible, else its wall time) and ``wall_limit`` (its wall time)."""

    time_limit: float
    wall_limit: float


@dataclass(slots=True)
class Allotment:
    """The command's time budget, the seconds kept for after the solves, and the weight
    of the solves still to come (see the module docstring)."""

    time_budget: TimeBudget
    tail: float = 0.0
    planned: float = 0.0

    @staticmethod
    def start(limit: float, *, reproducible: bool, begin: float | None = None,
              tail_share: float = TAIL_SHARE) -> Allotment:
        """``limit`` seconds counted from ``begin`` (a :func:`time.perf_counter` value,
        default now), ``tail_share`` of them kept for after the solves."""
        return Allotment(TimeBudget.start(limit, begin=begin, reproducible=reproducible),
                         tail=tail_share * limit)

    def plan(self, weight: float) -> None:
        """The solves to come weigh ``weight`` in all (each :meth:`grant` takes its own)."""
        self.planned = weight

    def grant(self, weight: float = 1.0) -> Grant:
        """The part of what is left for a solve of ``weight`` that begins now: charged to
        the budget at once (its work whatever it uses, see the module docstring)."""
        fraction = 1.0 if self.planned <= weight else weight / self.planned
        self.planned = max(0.0, self.planned - weight)
        left = self.time_budget.wall_left()
        usable = max(0.0, left - self.tail)
        part = self.time_budget.share(fraction, wall=fraction * usable / left if left else 0.0)
        self.time_budget.charge(part.work)
        wall = max(MIN_SECONDS, part.wall_left())
        work = max(MIN_SECONDS, part.work) if self.time_budget.reproducible else wall
        return Grant(time_limit=work, wall_limit=wall)
