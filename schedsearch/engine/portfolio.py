"""A memory-aware list scheduler: a legal schedule fast, for every problem it can fit.

This module runs the portfolio of list-scheduling passes (:mod:`.serial`) and keeps
the shortest schedule; :mod:`.fallback` takes over when every pass stalls.

Why it does not deadlock. Loads that fill memory with operands whose partners can never
fit are the classic trap. Two guards: (1) an op that allocates buffers must leave room
(in bytes) for the other not-yet-allocated buffers of at least the hungriest consumer of
what it allocates, so a tile is loaded only when its partner tiles could be too; (2) ops
may run ahead of the oldest unstarted op of the sequence by at most ``window`` positions.
If every pass stalls (nothing running, nothing fits), the scheduler retries with a
narrower window on a depth-first sequence (each op right after what it needs), down to
a window of zero: ops start in sequence order, which holds no more memory than running
that sequence serially. Only if that too stalls is the problem reported as not fitting.
"""

from __future__ import annotations

from collections.abc import Sequence

from schedsearch.engine.bounds.lower import EnergyRelaxation, energy_relaxation
from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.modes import (
    fast_store_modes,
    lean_split,
    mode_prices,
    paired_instance,
    yielding_modes,
)
from schedsearch.engine.orders import (
    batched_order,
    bottleneck_lane,
    bottleneck_order,
    breadth_order,
    cross_task_preds,
    depth_order,
    frugal_order,
    hog_tasks,
    hungriest_first_order,
    interleaved_order,
    large_buffers,
    on_lane,
    paced_order,
    problem_order,
    serial_peaks,
    tails,
    valley_order,
)
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.plain import plain_list_schedule
from schedsearch.engine.serial import CHARGE_PER_TRY, SerialPass, Stall
from schedsearch.engine.solution import Solution
from schedsearch.engine.split_bus import split_bus_schedule
from schedsearch.engine.timebudget import TimeBudget

__all__ = ["PORTFOLIO", "PASS_SHARE", "CHARGE_PER_OP", "priced_modes", "plain_floor",
           "list_schedule"]


#: The portfolio, in the order tried. Every pass the budget allows runs and the shortest
#: legal schedule wins; measured on the bundled pair and triple at 130-8,000 ops, and on
#: the tight-memory problems of ``benchmarks/bench_memory.py``, no single pass is best
#: everywhere. Where VTCM binds, the problem's own order with a narrow window comes first
#: (it finishes a task's tiles before it loads many others': 1.04 of the bound on the
#: tight pair where the longest-tail-first passes reach 1.75), then the same order with
#: the ready ops tried in sequence (what a plain list scheduler does: 1.096 on the tight
#: triple where the first pass gives 1.127; a window of 64 matches no window there and
#: costs 40 times fewer start attempts at 2,000 ops). The cheap passes come first, so a
#: large problem's budget reaches several: a wide window suits the priced modes, a narrow
#: one large problems; breadth order stalls on big ones. The interleaved passes (cheap)
#: come before the hungriest-first one among them (see :data:`PASS_SHARE`).
#: Where some buffer is large, the hungriest task first with a window per task leads,
#: in three variants. First, with its head unguarded (``hungry_unguarded``: guard (1) no
#: longer keeps 64 KiB free for the norm's next transfer while the bus cannot take it
#: anyway, so the GEMM loads into that room), every mode allowed and a window of 4 per
#: task (a window of 128 gave the same or worse, 1.35 instead of 1.17 of the bound at
#: 161 ops, at up to 15 times the cost: 5.5 s instead of 0.4 at 7,966 ops); then, after the
#: problem-order passes, the guarded one with the shortest modes for large buffers
#: (``large_fast``), and the unguarded one with them. With one window over the whole
#: sequence the hungriest-first pass needed 1,024 positions to reach the GEMM's ops
#: (6 s at 2,011 ops) and a 7,966-op problem's budget never reached it; per task, 128
#: give the same answer in a fifth of the attempts. Measured from the list scheduler on
#: the tight wide pair at 161/609/2,011/7,966 ops: guarded 1.21 of the bound at every
#: size; unguarded, large_fast 1.34/1.114/1.255/1.257; unguarded, all modes, window 4
#: 1.169/1.122/1.115/1.113 (the norm waits for the GEMM's row at some blocks and not at
#: others, depending on how the rows fall against the blocks, so no variant wins
#: everywhere). The Ascend pair keeps its figures (1.118 at 7,972 ops, 10 s), and the
#: tight chain gains (1.146 -> 1.06 at 7,806 ops).
#: Where the problem's own order cannot run one op at a time (Mistral-7B's prefill: the
#: operator library emits all 28 K-steps' operand loads of the down projection before its
#: first multiply, 11.1 MB in 8 MiB of VTCM), every pass above stalled on VTCM: the ready
#: weight loads of later GEMMs filled memory that an op of 5.25 MB (three 1.75 MB blocks
#: of the gate-times-up product) needed. The frugal order (loads right before their
#: first use, 5.25 MB run one op at a time) with the banker's rule leads there: a window
#: of 4 and of 16 with the blocks of at least 1/8 of VTCM at its top (1.05-1.08 of the
#: bound from the list scheduler on the 7 Mistral prefill graphs of the ONNX corpus; without
#: the split both stall, the 1.75 MB blocks' room cut up by 256 KB weight tiles), then
#: in-order issue (window 0: 1.24-1.29), which the banker's rule keeps from stalling for
#: want of bytes.
#: Right after them, the valley order (:func:`~.orders.valley_order`) where a task has
#: a large buffer beside tasks that have none: each of its computes where the others,
#: run alone, hold the least (on the tight wide pair, a GEMM row's start and its middle
#: column boundary, never between the two K steps of a column), every mode, in
#: sequence, window 8, guard (1) off, the banker's rule on: 1.078 / 1.071 / 1.070 /
#: 1.069 of the bound at 161-7,966 ops, where the hungriest-first passes give 1.169 /
#: 1.122 / 1.115 / 1.113.
#: Where a task consumes another's output, the batched order (:func:`~.orders.batched_order`:
#: the consumer's blocks two at a time after the producer's store of the second) with a
#: window of 8 comes next: on the tight chain (RMSNorm -> DDR -> copy) every other pass
#: starts each copy block as its store ends, three transfers in a row per gap between
#: two norms; this one gives 1.030 of the bound at 1,956 and 7,806 ops from the list
#: scheduler alone (1.061 and 1.060 at 10 s before), for 0.1 and 0.4 s. On the bundled
#: decoder layers it stalls on VTCM within 0.02 s. Right after it, the lagged pass
#: (one block per batch after the producer's *next* store, stores fast and loads lean:
#: :func:`~.modes.fast_store_modes`; guard (1) off, the banker's rule on): each gap
#: then holds the copy of the block before beside the store, at the bound's own price
#: (1.004-1.000 of the bound at 591-7,806 ops from the list scheduler alone).
#: Then the interleaved order with priced modes, a window of 16 per task, guard (1) off
#: and the banker's rule on: on the tight triple it runs the copy on HVX (as the
#: ``configuration`` LP does) beside the GEMM while the RMSNorm waits, where two copy
#: blocks, the GEMM's tiles and a norm block do not fit together; 1.034 / 1.029 / 1.034
#: of the bound at 613 / 2,004 / 7,957 ops, where the best pass before gave 1.09.
#: Then the interleaved pass with priced modes and a window of 16, the tight Ascend
#: pair's best (below with the other interleaved ones until session 17, where the
#: passes for the prefill layers, about 1 s each at 7,972 ops, had left it no time at
#: 10 s: 1.173 of the bound there instead of 1.118).
#: The passes from here to the streamed one do not run where the busiest lane kind is
#: a transfer queue (:func:`_transfer_bound`).
#: Where the matrix engine binds (the prefill layers), two passes whose eligible ops go
#: by the first engine op they lead to (``lead_first``, :func:`~.orders.bottleneck_leads`):
#: the transfers of the chain that ends in the next GEMM phase's activation load before
#: the weight loads of its later tiles. From the list scheduler alone on the v75 prefill
#: layers: the problem's order with a window of 64 gives Llama-3.2-1B 4,171,425 ns
#: (4,234,580 from the best pass before; windows 24-96 give 4.19-4.20 M) and Qwen2.5-0.5B
#: 1,124,364 (behind the in-sequence pass's 1,106,649); the frugal order with a window of
#: 96 gives Qwen 1,104,367 (and stalls on Llama). As the whole sequence (the ops in that
#: rank order) the same rank stalls or loses (1.16-1.27 M on Qwen): the problem's or the
#: frugal order is what keeps memory.
#: The same two with weights giving way to the chain into the busiest lane
#: (``chain_first``: a load without predecessors does not take a DMA queue or the DDR
#: bandwidth that an op on the path to the engine, ready before the load would end,
#: needs for its fastest mode); they run only where there are buffers. From the list
#: scheduler alone: Qwen2.5-0.5B prefill v79 815,544 -> 803,633 ns (frugal, 96), v75
#: 1,099,479 -> 1,095,633; the Llama layers keep the bottleneck passes' figures.
#: Then four passes on the sequence built around the busiest lane
#: (:func:`~.orders.bottleneck_order`: its ops in the problem's order, the chains feeding
#: a later phase as soon as their inputs exist, weights just in time), windows 48 and 96,
#: in sequence order or longest tail first. From the list scheduler alone: Llama-3.2-1B
#: prefill 4,113,846 ns on v75 (window 48, tail first; 4,171,425 before) and 2,866,452 on
#: v79 (96, tail first), Qwen2.5-0.5B prefill 1,099,479 on v75 (48, in sequence); wider
#: windows stall on VTCM. Three of them with smaller windows that ``backfill`` (weights
#: past the window load on a DMA queue the window leaves idle, never its last free one):
#: on Qwen2.5-0.5B prefill v75 the DDR idled for about 13 µs during attention and was
#: then saturated through the o_proj and MLP phases, so the chain into gate_proj met
#: weight loads on both queues (31.6 µs of HMX idle where the forced path is 21.2). From
#: the list scheduler alone: Qwen v75 1,022,622 / 1,021,378 / 1,028,410 ns at windows 20
#: / 28 / 32 (1,025,298 before), Llama-3.2-1B prefill v79 2,733,508 / 2,732,565 /
#: 2,727,483 (2,737,708); Llama v75 and Qwen v79 keep the passes above.
#: Then the same sequence streamed (:func:`~.orders.streamed_dues`:
#: weights up to one engine op earlier where the DMA queues and the DDR could not carry
#: them just in time), window 48, where there are buffers: Llama-3.2-1B prefill v75
#: 4,101,676 ns.
#: The two paired passes (:data:`AMPLE_SHARE`) come right after the priced interleaved
#: one: they cost 0.3 s each at 7,957 ops, and where they apply (the bundled triple with
#: ample memory) they give the best schedule at every size.
PORTFOLIO = (
    PassSpec(ModePolicy.ALL, OpOrder.FRUGAL, 4, in_sequence=True, safe=True, split=True,
             large_share=8, unserial_only=True),
    PassSpec(ModePolicy.ALL, OpOrder.FRUGAL, 16, in_sequence=True, safe=True, split=True,
             large_share=8, unserial_only=True),
    PassSpec(ModePolicy.ALL, OpOrder.FRUGAL, 0, in_sequence=True, safe=True,
             unserial_only=True),
    PassSpec(ModePolicy.ALL, OpOrder.HUNGRY, 4,
             in_sequence=True, split=True, task_windows=True, hungry_unguarded=True,
             large_only=True),
    PassSpec(ModePolicy.YIELDING, OpOrder.HUNGRY, 4,
             in_sequence=True, split=True, task_windows=True, hungry_unguarded=True,
             large_only=True),
    PassSpec(ModePolicy.ALL, OpOrder.VALLEY, 8, in_sequence=True, guarded=False, safe=True,
             split=True, last_if_best=True),
    PassSpec(ModePolicy.ALL, OpOrder.BATCHED, 8),
    PassSpec(ModePolicy.FAST_STORES, OpOrder.LAGGED, 16, in_sequence=True, guarded=False,
             safe=True),
    PassSpec(ModePolicy.PRICED, OpOrder.INTERLEAVED, 16, in_sequence=True, guarded=False,
             safe=True, task_windows=True),
    PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 16),
    PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 64, in_sequence=True),
    PassSpec(ModePolicy.PRICED, OpOrder.INTERLEAVED, 16, in_sequence=True),
    PassSpec(ModePolicy.PAIRED, OpOrder.PACED, 64),
    PassSpec(ModePolicy.PAIRED, OpOrder.PACED, 16, in_sequence=True),
    PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 64, lead_first=True),
    PassSpec(ModePolicy.ALL, OpOrder.FRUGAL, 96, lead_first=True),
    PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 64, lead_first=True, chain_first=True),
    PassSpec(ModePolicy.ALL, OpOrder.FRUGAL, 96, lead_first=True, chain_first=True),
    PassSpec(ModePolicy.ALL, OpOrder.BOTTLENECK, 48, in_sequence=True),
    PassSpec(ModePolicy.ALL, OpOrder.BOTTLENECK, 20, in_sequence=True, backfill=True),
    PassSpec(ModePolicy.ALL, OpOrder.BOTTLENECK, 28, in_sequence=True, backfill=True),
    PassSpec(ModePolicy.ALL, OpOrder.BOTTLENECK, 32, in_sequence=True, backfill=True),
    PassSpec(ModePolicy.ALL, OpOrder.BOTTLENECK, 48),
    PassSpec(ModePolicy.ALL, OpOrder.BOTTLENECK, 96),
    PassSpec(ModePolicy.ALL, OpOrder.BOTTLENECK, 96, in_sequence=True),
    PassSpec(ModePolicy.ALL, OpOrder.STREAMED, 48),
    PassSpec(ModePolicy.LARGE_FAST, OpOrder.HUNGRY, 128,
             in_sequence=True, split=True, task_windows=True),
    PassSpec(ModePolicy.LARGE_FAST, OpOrder.HUNGRY, 128,
             in_sequence=True, split=True, task_windows=True, hungry_unguarded=True),
    PassSpec(ModePolicy.ALL, OpOrder.INTERLEAVED, 16),
    PassSpec(ModePolicy.PRICED, OpOrder.INTERLEAVED, 256, in_sequence=True),
    PassSpec(ModePolicy.LARGE_FAST, OpOrder.INTERLEAVED, 64,
             in_sequence=True, split=True, hungry_first=True),
    PassSpec(ModePolicy.ALL, OpOrder.BREADTH, 64),
    PassSpec(ModePolicy.ALL, OpOrder.DEPTH, 64),
    PassSpec(ModePolicy.PRICED, OpOrder.BREADTH, 256),
    PassSpec(ModePolicy.PRICED, OpOrder.DEPTH, 1024),
    PassSpec(ModePolicy.PRICED, OpOrder.DEPTH, 1024, in_sequence=True),
    PassSpec(ModePolicy.ALL, OpOrder.DEPTH, 1024, in_sequence=True, holders_first=True),
    PassSpec(ModePolicy.ALL, OpOrder.BREADTH, 256),
    PassSpec(ModePolicy.PRICED, OpOrder.DEPTH, 64),
    PassSpec(ModePolicy.ALL, OpOrder.DEPTH, 1024),
    PassSpec(ModePolicy.ALL, OpOrder.PROBLEM, 1024),
    PassSpec(ModePolicy.PRICED, OpOrder.DEPTH, 4096),
)
#: Tried only when every portfolio pass stalled, in turn. Two-ended placement puts buffers that
#: outlive the op starting them at the top of memory and those that die with it at the bottom, so
#: that short lives do not fragment the space long ones need. The frugal order issued in
#: order under the banker's rule cannot stall for want of bytes wherever that order run one op at
#: a time fits (only an address can fail); the depth-first one may hold more at once, but is
#: tried too.
_FALLBACK = (PassSpec(ModePolicy.ALL, OpOrder.DEPTH, 16),
             PassSpec(ModePolicy.ALL, OpOrder.FRUGAL, 0, guarded=False, safe=True),
             PassSpec(ModePolicy.ALL, OpOrder.FRUGAL, 0, guarded=False, two_ended=True,
                      safe=True),
             PassSpec(ModePolicy.ALL, OpOrder.DEPTH, 0, guarded=False),
             PassSpec(ModePolicy.ALL, OpOrder.DEPTH, 0, guarded=False, two_ended=True))
#: The share of the work and wall time left that one pass after the first finished one
#: may take, so that a slow pass does not take the time of the cheaper ones after it:
#: the hungriest-first sequence pass takes 2.9 s at 2,000 ops and 9 s at 8,000 on the
#: tight wide pair (where it is best at 2,000), and placed before the interleaved passes
#: it left the Ascend pair at 8,000 ops without the one that is best there (1.173 of the
#: bound instead of 1.118 at 10 s).
PASS_SHARE = 0.5
#: Work charged per op for each pass made, whatever it then does (calibrated seconds):
#: making a pass (its state, its order and tails when new) and releasing every node took
#: 0.1-0.2 s at 7,800-8,000 ops (session 19, idle machine). A pass's own work is its
#: attempts and scans (:attr:`.serial.SerialPass.work`).
CHARGE_PER_OP = 2.5e-5
#: The paired passes (:data:`ModePolicy.PAIRED <.passes.ModePolicy>`) run only where
#: the problem's order, one op at a time, holds at most 1/AMPLE_SHARE of every memory:
#: with one mode per op and each queue kept to one kind, loads cannot wait for memory
#: without idling their queue. Measured: the bundled triple at 511-7,957 ops holds 3 %
#: of its 8 MiB VTCM that way (paired: 1.005-1.007 of the bound, from 1.031); the
#: tight problems of ``benchmarks/bench_memory.py`` hold 42-69 % and the decode and
#: prefill layers 34-77 %, and there the paired passes stall (at 600 and 8,000 ops on
#: every tight Hexagon problem, and on the v75 decode layers), or, on the tight chain at
#: 7,806 ops, end 1.5 times the best pass.
AMPLE_SHARE = 8
#: Relative tolerance under which a mode's price counts as its op's cheapest.
_PRICE_TOLERANCE = 1e-6


def priced_modes(inst: Instance, relaxation: EnergyRelaxation | None) -> list[list[int]]:
    """Per op, the modes whose price under ``relaxation``
    (:func:`schedsearch.engine.modes.mode_prices`) is its cheapest: what the ``priced`` policy
    allows."""
    allowed = []
    for prices in mode_prices(inst, relaxation):
        cheapest = min(prices)
        allowed.append([k for k, price in enumerate(prices)
                        if price <= cheapest * (1 + _PRICE_TOLERANCE) + 1e-12])
    return allowed


def _shortest(inst: Instance, op: int) -> list[int]:
    """The modes of ``op`` of its shortest duration."""
    least = inst.min_duration(op)
    return [k for k, mode in enumerate(inst.modes[op]) if mode.duration == least]


def _restricts(inst: Instance, allowed: list[list[int]]) -> bool:
    """Whether a mode policy's ``allowed`` modes keep some op from one of its modes: a
    policy that restricts nothing would only repeat the ``all`` passes."""
    return any(len(modes) < len(inst.modes[i]) for i, modes in enumerate(allowed))


def _transfer_bound(inst: Instance, lane: str | None, on: list[bool]) -> bool:
    """Whether ``lane``, the busiest lane kind (:func:`bottleneck_lane`), moves DDR
    data: a transfer queue, as on the decode layers and the tight-memory problems. The
    lead-first,
    chain-first, bottleneck and streamed passes shorten the waits of a computing engine
    (HMX on the prefill layers); where the transfers bind they stalled or lost, and on
    the tight triple at 7,957 ops they took 3.9 s of a 10 s solve's portfolio, so that
    the passes best there never ran. Problems without lanes (PSPLIB's) are not.
    ``on``: per op, whether some mode of it runs on ``lane`` (:func:`~.orders.on_lane`)."""
    if lane is None:
        return False
    return any(there and (inst.reads_ddr(op) or inst.writes_ddr(op))
               for op, there in enumerate(on))


class _Sequences:
    """The mode policies that apply to ``inst`` and each (policy, sequence) computed
    once: the order and the tails it was ranked by. ``priced`` is :func:`priced_modes`
    when the caller already has it (it costs an LP), else it is computed here."""

    def __init__(self, inst: Instance, dag: Dag, priced: list[list[int]] | None = None
                 ) -> None:
        self.inst, self.dag = inst, dag
        self.policies: dict[ModePolicy, list[list[int]] | None] = {ModePolicy.ALL: None}
        if priced is None:
            priced = priced_modes(inst, energy_relaxation(inst.problem, inst.target))
        if _restricts(inst, priced):
            self.policies[ModePolicy.PRICED] = priced
        large = large_buffers(inst)
        self.any_large = any(large)
        fast = [_shortest(inst, i) if any(large[b] for b in inst.op_buffers[i])
                else list(range(len(inst.modes[i]))) for i in range(inst.n_ops)]
        if _restricts(inst, fast):
            self.policies[ModePolicy.LARGE_FAST] = fast
        self.cache: dict[tuple[ModePolicy, OpOrder], tuple[list[int], list[int]]] = {}
        self._peaks: dict[str, int] | None = None
        self.split = lean_split(inst)
        self.paired = inst
        if self.split is not None and self.serial_share() <= 1 / AMPLE_SHARE:
            self.policies[ModePolicy.PAIRED] = [[mode] for mode, _ in self.split]
            self.paired = paired_instance(inst, self.split)
        self.cross = cross_task_preds(inst, dag)
        self.hogs = hog_tasks(inst)
        if any(self.cross):  # the only pass that takes them is the lagged one
            fast_stores = fast_store_modes(inst)
            if _restricts(inst, fast_stores):
                self.policies[ModePolicy.FAST_STORES] = fast_stores
        self.busiest = bottleneck_lane(inst)
        on = on_lane(inst, self.busiest)
        self.transfer_bound = _transfer_bound(inst, self.busiest, on)
        if self.busiest is not None and self.transfer_bound:
            yielding = yielding_modes(inst, self.busiest, on)
            if _restricts(inst, yielding):
                self.policies[ModePolicy.YIELDING] = yielding

    def _lean_split(self) -> list[tuple[int, int]]:
        if self.split is None:  # applies() runs the paced passes only where there is one
            raise ValueError("the paced order needs a lean split (modes.lean_split)")
        return self.split

    def serial_share(self) -> float:
        """The largest share of a memory that the problem's own order, run one op at a
        time, holds at once (:func:`~.orders.serial_peaks`; 0 without buffers)."""
        if self._peaks is None:
            order, _ = self.get(ModePolicy.ALL, OpOrder.PROBLEM)
            self._peaks = serial_peaks(self.inst, order)
        return max((peak / self.inst.target.memories[m].capacity_bytes
                    for m, peak in self._peaks.items()), default=0.0)

    def unserial(self) -> bool:
        """Whether the problem's own order, run one op at a time, overflows some memory."""
        return self.serial_share() > 1.0

    def applies(self, spec: PassSpec) -> bool:
        """Whether ``spec`` runs on this problem: its mode policy exists here, it orders
        tasks only where there are several, it needs large buffers only where some
        buffer is large, the problem's order overflowing only where it does, a busiest
        lane kind only where some op uses a lane, and the passes built around it not
        where it is a transfer queue (:func:`_transfer_bound`); the paced order only
        where there is a lean split, the batched and lagged ones where a task consumes
        another's output, the valley one where some task is a hog."""
        if spec.sequence is OpOrder.PACED and self.split is None:
            return False
        if spec.sequence in (OpOrder.BATCHED, OpOrder.LAGGED) and not any(self.cross):
            return False
        if spec.sequence is OpOrder.VALLEY and not self.hogs:
            return False
        if spec.sequence in (OpOrder.BOTTLENECK, OpOrder.STREAMED) and self.busiest is None:
            return False
        if (spec.lead_first or spec.chain_first or
                spec.sequence in (OpOrder.BOTTLENECK, OpOrder.STREAMED)) and \
                self.transfer_bound:
            return False
        if (spec.chain_first or spec.sequence is OpOrder.STREAMED) and \
                not self.inst.n_buffers:  # no loads to give way or to stream
            return False
        return spec.policy in self.policies and (
            spec.sequence not in (OpOrder.INTERLEAVED, OpOrder.HUNGRY) or
            len(set(self.inst.op_task)) > 1) and (not spec.large_only or self.any_large) \
            and (not spec.unserial_only or self.unserial())

    def make_pass(self, spec: PassSpec) -> SerialPass:
        """The pass ``spec`` describes, ready to run."""
        order, tail = self.get(spec.policy, spec.sequence)
        inst = self.paired if spec.policy is ModePolicy.PAIRED else self.inst
        return SerialPass(inst, self.dag, order, tail, spec, self.policies[spec.policy])

    def get(self, policy: ModePolicy, name: OpOrder) -> tuple[list[int], list[int]]:
        if (policy, name) not in self.cache:
            tail = tails(self.inst, self.dag, self.policies[policy])
            order = (breadth_order(self.inst, self.dag, tail) if name is OpOrder.BREADTH else
                     problem_order(self.dag) if name is OpOrder.PROBLEM else
                     interleaved_order(self.inst, self.dag) if name is OpOrder.INTERLEAVED else
                     hungriest_first_order(self.inst, self.dag) if name is OpOrder.HUNGRY else
                     frugal_order(self.inst, self.dag, tail) if name is OpOrder.FRUGAL else
                     bottleneck_order(self.inst, self.dag, tail)
                     if name is OpOrder.BOTTLENECK else
                     bottleneck_order(self.inst, self.dag, tail, streamed=True)
                     if name is OpOrder.STREAMED else
                     paced_order(self.inst, self.dag, self._lean_split())
                     if name is OpOrder.PACED else
                     batched_order(self.inst, self.dag, self.cross)
                     if name is OpOrder.BATCHED else
                     batched_order(self.inst, self.dag, self.cross, batch=1, lag=1)
                     if name is OpOrder.LAGGED else
                     valley_order(self.inst, self.dag) if name is OpOrder.VALLEY else
                     depth_order(self.dag, tail))
            self.cache[(policy, name)] = (order, tail)
        return self.cache[(policy, name)]


def _run_portfolio(inst: Instance, dag: Dag, sequences: _Sequences,
                   portfolio: Sequence[PassSpec], budget: TimeBudget | None,
                   floor: Solution | None) -> tuple[Solution | None, Stall | None]:
    """The shortest solution of the passes the budget allows, and the first stall. The
    first pass that applies always runs to its end, and the later ones too until one
    finishes while there is no answer at all (neither theirs nor ``floor``, the plain
    list schedule); after that each gets at most :data:`PASS_SHARE` of the work and wall
    time left, so that one slow pass does not take the time of the cheaper ones after
    it. Each pass is charged its setup (:data:`CHARGE_PER_OP` per op) and its work
    (:attr:`.serial.SerialPass.work`: its attempts and scans)."""
    best: Solution | None = None
    stall: Stall | None = None
    first = True
    setup = CHARGE_PER_OP * inst.n_ops  # each pass's, whatever its attempts
    for spec in portfolio:
        if not sequences.applies(spec):
            continue
        answered = best is not None or floor is not None
        if not first and answered and budget is not None and budget.exhausted():
            break
        run = sequences.make_pass(spec)
        if budget is None or first or not answered:
            result = run.run()
        else:
            share = budget.share(PASS_SHARE)
            result = run.run(max_work=max(0.0, share.left - setup), deadline=share.deadline)
            share.exhausted()  # marks the cut when the deadline stopped the pass
            budget.absorb(share)
        first = False
        if budget is not None:
            budget.charge(setup + run.work)
        if result is None:  # cut at its share: the next pass may finish in what is left
            continue
        if isinstance(result, Stall):
            stall = stall or result
        elif best is None or result.makespan(inst) < best.makespan(inst):
            best = result
            if spec.last_if_best and (floor is None or
                                      best.makespan(inst) <= floor.makespan(inst)):
                break
    return best, stall


def plain_floor(inst: Instance, dag: Dag, budget: TimeBudget | None = None
                ) -> Solution | None:
    """The plain list schedule (:func:`~.plain.plain_list_schedule`), the answer a search
    must never lose to, charged to ``budget`` as a pass is; None where it deadlocks or
    where ``dag`` has barriers between tasks (it knows none)."""
    if dag.n_nodes > dag.n_ops:
        return None
    plain = plain_list_schedule(inst, dag)
    if budget is not None:
        budget.charge(CHARGE_PER_OP * inst.n_ops + CHARGE_PER_TRY * plain.tries)
    return plain.solution


def list_schedule(inst: Instance, dag: Dag, budget: TimeBudget | None = None, *,
                  priced: list[list[int]] | None = None,
                  portfolio: Sequence[PassSpec] = PORTFOLIO) -> Solution | Stall:
    """The shortest legal solution among the plain list schedule (:func:`plain_floor`,
    always run first, whatever the budget: so no search loses to it), the passes of
    ``portfolio`` the budget allows, the split-bus schedule (:mod:`.split_bus`, cheap,
    on layers bound by a shared bus only, whatever the budget), or of :data:`_FALLBACK`
    when all of them stall. The first pass always runs to its end; later ones stop when
    the work left (:attr:`.serial.SerialPass.work`, after :data:`CHARGE_PER_OP` per op
    for the pass's setup) or the deadline runs out, and are charged their setup
    and their work. On a tie a pass's schedule is kept, not the plain one.

    When even in-sequence issue of a depth-first order stalls, greedy placement has
    failed, not necessarily the problem (a first-fit address can block the exact packing
    memory needs): the last stall is returned, and the caller decides whether the exact
    search (:func:`exact_fallback`) gets time.

    ``priced`` is :func:`priced_modes` of ``inst`` when the caller already computed it
    (a solve shares one energy LP between its bound and every portfolio).
    """
    sequences = _Sequences(inst, dag, priced)
    floor = plain_floor(inst, dag, budget)
    best, stall = _run_portfolio(inst, dag, sequences, portfolio, budget, floor)
    split = split_bus_schedule(inst, dag, sequences.split, budget)
    if split is not None and (best is None or split.makespan(inst) < best.makespan(inst)):
        best = split
    if floor is not None and (best is None or floor.makespan(inst) < best.makespan(inst)):
        return floor
    for spec in _FALLBACK if best is None else ():
        result = sequences.make_pass(spec).run()
        if isinstance(result, Solution):
            return result
        assert result is not None  # only a pass given limits gives up
        stall = result
    if best is not None:
        return best
    assert stall is not None
    return stall
