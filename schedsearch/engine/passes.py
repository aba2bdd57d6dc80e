"""What one list-scheduling pass is (:class:`PassSpec`): the one home of every switch a
pass of :class:`~.serial.SerialPass` reads, and of the names of its mode policies and
sequences. :mod:`.portfolio` lists the passes a search runs.
"""

from __future__ import annotations

import enum
from dataclasses import KW_ONLY, dataclass

from schedsearch.engine.orders import LARGE_SHARE

__all__ = ["ModePolicy", "OpOrder", "PassSpec"]


class ModePolicy(enum.StrEnum):
    """Which modes a pass lets each op take."""

    #: any mode
    ALL = "all"
    #: the modes the energy LP prices cheapest (:func:`~.portfolio.priced_modes`)
    PRICED = "priced"
    #: ops that access a large buffer only at their shortest modes
    LARGE_FAST = "large_fast"
    #: each op at the mode :func:`~.modes.lean_split` gives it, its fast ops on one unit
    #: of their lane kind and its lean ones on the other (:func:`~.modes.paired_instance`)
    PAIRED = "paired"
    #: where the busiest lane kind is a transfer queue, ops never on it at their modes
    #: that draw least of the budgets it draws (:func:`~.modes.yielding_modes`)
    YIELDING = "yielding"
    #: stores at their shortest modes, loads at their leanest on the same lane kind
    #: (:func:`~.modes.fast_store_modes`)
    FAST_STORES = "fast_stores"


class OpOrder(enum.StrEnum):
    """The sequence a pass follows (:mod:`.orders`)."""

    BREADTH = "breadth"  #: :func:`~.orders.breadth_order`
    DEPTH = "depth"  #: :func:`~.orders.depth_order`
    PROBLEM = "problem"  #: :func:`~.orders.problem_order`
    INTERLEAVED = "interleaved"  #: :func:`~.orders.interleaved_order`
    HUNGRY = "hungry"  #: :func:`~.orders.hungriest_first_order`
    FRUGAL = "frugal"  #: :func:`~.orders.frugal_order`
    DEADLINE = "deadline"  #: requests by latest start (:func:`~.deadlines.deadline_pass`)
    BOTTLENECK = "bottleneck"  #: :func:`~.orders.bottleneck_order`
    STREAMED = "streamed"  #: :func:`~.orders.bottleneck_order`, ``streamed``
    PACED = "paced"  #: :func:`~.orders.paced_order` (where there is a lean split)
    BATCHED = "batched"  #: :func:`~.orders.batched_order` (where a task consumes another's)
    #: :func:`~.orders.batched_order`, one block per batch and a lag of one
    LAGGED = "lagged"
    VALLEY = "valley"  #: :func:`~.orders.valley_order` (where some task is a hog)


@dataclass(frozen=True, slots=True)
class PassSpec:
    """One list-scheduling pass: which modes (``all``, ``priced`` or ``large_fast``: ops
    that access a large buffer only at their shortest modes), which sequence
    (:class:`OpOrder`, :mod:`.orders`), how far ops
    may run ahead of the oldest unstarted one (``window``), whether eligible ops are tried
    in sequence order rather than longest tail first (``in_sequence``), and whether ops
    that allocate nothing go first (``holders_first``: finish what already holds memory
    before loading more)."""

    policy: ModePolicy
    sequence: OpOrder
    window: int
    _: KW_ONLY
    in_sequence: bool = False
    holders_first: bool = False
    #: Large buffers (:data:`~.orders.LARGE_SHARE`) at the highest address that fits, the others
    #: at the lowest: the small ones' holes then do not split the space a large one
    #: needs (tight wide pair, 161 ops: 1.38 -> 1.32 of the bound, no pass worse by more
    #: than 0.3 % on the other tight problems).
    split: bool = False
    #: Eligible ops of the hungriest task (:func:`~.orders.task_ranks`) before the others', each
    #: group in sequence order: the long pole never waits for an op of a filler task.
    hungry_first: bool = False
    #: A window per task instead of one over the whole sequence (see :class:`~.serial.SerialPass`).
    task_windows: bool = False
    #: Guard (1) keeps no room for the hungriest task's op at the head of the sequence.
    hungry_unguarded: bool = False
    #: Run only where some buffer is large (:data:`~.orders.LARGE_SHARE`).
    large_only: bool = False
    #: The banker's rule (:class:`~.serial.SerialPass`, ``safe``): no start ahead of the head that
    #: the rest of the sequence, run one op at a time, could not fit beside.
    safe: bool = False
    #: What counts as large for ``split``: at least 1/``large_share`` of its memory.
    large_share: int = LARGE_SHARE
    #: Run only where the problem's own order, run one op at a time, overflows some
    #: memory (:func:`~.orders.serial_peaks`): the passes that follow it cannot finish.
    unserial_only: bool = False
    #: Guard (1) on (see :mod:`.portfolio`); only fallback passes turn it off.
    guarded: bool = True
    #: Buffers that outlive the op starting them at the top of memory, those that die
    #: with it at the bottom (fallback passes).
    two_ended: bool = False
    #: Eligible ops tried by the first op on the busiest lane kind they lead to
    #: (:func:`~.orders.bottleneck_leads`), then longest tail: the transfers the engine
    #: waits for next before those it needs later.
    lead_first: bool = False
    #: A load without predecessors (a weight) does not start where it would keep an op of
    #: the chain into the busiest lane kind (:func:`~.orders.bottleneck_leads`), ready
    #: before the load ends, from its fastest mode (see :class:`~.serial.SerialPass`).
    chain_first: bool = False
    #: At an instant where nothing in the window starts any more, loads without
    #: predecessors beyond the window (the next weights in sequence order) start where
    #: they fit and leave a unit of their lane kind free: a queue and bandwidth the window
    #: leaves idle prefetch what comes later (see :meth:`~.serial.SerialPass._backfill`).
    backfill: bool = False
    #: The portfolio ends after this pass when its schedule is the shortest so far: LNS
    #: gets the time the later passes would take (see :data:`~.portfolio.PORTFOLIO`).
    last_if_best: bool = False
