"""Every share, size limit and pass of the search in one place, each default with the
measurement behind it.

:func:`schedsearch.engine.search.solve` takes a :class:`SearchParams` (``DEFAULT`` unless
given): an experiment or a test changes a field with :func:`dataclasses.replace`
instead of patching a module. A share is of the time budget left when its stage starts
(:class:`~schedsearch.engine.timebudget.TimeBudget.share`); the stages that read each
field are in :mod:`schedsearch.engine.stages`.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedsearch.engine.passes import PassSpec
from schedsearch.engine.portfolio import PORTFOLIO

__all__ = ["SearchParams", "DEFAULT"]


@dataclass(frozen=True, slots=True)
class SearchParams:
    """The search's parameters (see the module docstring)."""

    #: Problems up to this many ops get one CP-SAT model of the whole problem: after the
    #: constructive (it yields a proven bound; larger ones go straight to LNS, which improves
    #: faster than the whole model at every size measured), and as the constructive's last
    #: resort when every list-scheduling pass stalls.
    whole_model_max_ops: int = 200
    #: The same limit for the improving whole model on problems with buffers. Above it
    #: LNS with small windows gains more from the same time: measured at 10 s on the
    #: tight problems of ``benchmarks/bench_memory.py`` (2 workers, seed 0), without the
    #: whole model at 46-168 ops the answers were the same or shorter in every case
    #: (reproducible, of the bound: the wide pair at 161 ops 1.116 -> 1.106, the Ascend
    #: pair at 153 1.049 -> 1.043, the chain at 151 1.017 -> 1.006 and at 46 1.078 ->
    #: 1.045, the triple at 66 1.093 -> 1.082; using the whole 10 s the wide pair 1.095 ->
    #: 1.082), and at 33-39 ops the same or longer (the tight pair at 33 1.012 -> 1.021,
    #: the wide pair at 33 1.024 -> 1.039 and 1.091 -> 1.151); the bundled examples of
    #: 67-153 ops kept their answers.
    whole_model_max_ops_memory: int = 40
    #: Problems up to :attr:`whole_model_max_ops` ops first get one CP-SAT model of the whole
    #: problem for this share of the budget (it yields a proven bound), then LNS.
    whole_model_share: float = 0.4
    #: The same share when the search uses the whole time (``reproducible=False``): CP-SAT's
    #: parallel search on the whole model is then the strongest stage on problems without
    #: buffers (RCPSP), LNS keeps the rest.
    whole_model_share_timed: float = 0.8
    #: The same on problems with buffers, where memory binds and LNS with small windows
    #: gains more per second than the whole model: on the tight problems of
    #: ``benchmarks/bench_memory.py`` at about 150 ops (10 s, seeds 0-2) the answers went
    #: from 1.021/1.051/1.056/1.066 of the bound (pair, triple, chain, Ascend pair) to
    #: 1.020/1.045/1.052/1.048, and the wide pair's (seeds 0-5) from 1.126 to 1.108.
    whole_model_share_timed_memory: float = 0.5
    #: On problems without buffers (RCPSP), the share of what the whole model leaves that
    #: sampling with double justification gets (:mod:`schedsearch.engine.justify`), before LNS: it
    #: found the best known makespan of J30 instances CP-SAT stopped one period above
    #: within 10 s; before the whole model it took time CP-SAT needed on others.
    justify_share: float = 0.5
    #: On problems without buffers, the share of the whole model's time it searches the
    #: mirrored problem (see :mod:`schedsearch.engine.mirror`) before the forward one.
    mirrored_share: float = 0.5
    #: Share of the budget the list scheduler's passes may take (the first always runs
    #: to its end): at about 8,000 ops they took the whole 10 s on the tight triple and
    #: the Ascend pair, and since LNS copies what it finds (:mod:`.repeat`) its part pays
    #: more there: at 10 s, reproducible, the Ascend pair at 2,009 ops 1.046 -> 1.040 of
    #: the bound, the chain at 1,956 1.0020 -> 1.0015 and at 7,806 1.0000 -> 1.0003; every
    #: other tight cell and every decoder layer at 10 s to the nanosecond.
    list_share: float = 0.5
    #: Share of the budget for the tasks one after another, each searched alone (a
    #: candidate the answer must never lose to).
    serial_share: float = 0.25
    #: Share of the budget the peak-memory phase gets when it is asked for.
    secondary_share: float = 0.3
    #: The tasks-in-sequence check bounds the smallest tasks alone, up to this many ops
    #: in all, by the lower bound of each one's own problem; the others by their work
    #: alone (that bound takes 1-2 s at about 8,000 ops, a fifth of a 10 s solve, and
    #: 0.24 s for the 1,492 ops of the tight wide pair's RMSNorm at 7,966 ops).
    serial_check_max_ops: int = 2000
    #: The list scheduler's passes, in the order tried (:data:`.portfolio.PORTFOLIO`, where
    #: the measurements behind each pass and its place are).
    portfolio: tuple[PassSpec, ...] = PORTFOLIO


#: The parameters every solve uses unless it is given others.
DEFAULT = SearchParams()
