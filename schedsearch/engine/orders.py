"""Priorities and op sequences of the list scheduler (:mod:`.serial`, :mod:`.portfolio`):
tails (the longest path to a sink), the sequences its passes follow, and which
buffers and tasks count as large or hungry.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from typing import Any

from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance

__all__ = ["tails", "breadth_order", "problem_order", "interleaved_order", "LARGE_SHARE",
           "large_buffers", "task_ranks", "hungriest_first_order", "depth_order",
           "frugal_order", "serial_peaks", "keyed_order", "bottleneck_lane",
           "bottleneck_leads", "bottleneck_order", "on_lane", "streamed_dues",
           "paced_order", "batched_order", "cross_task_preds", "BATCH", "hog_tasks",
           "valley_order"]

#: Consumer blocks per batch in :func:`batched_order` (why two: its docstring).
BATCH = 2


def tails(inst: Instance, dag: Dag, allowed: Sequence[Sequence[int]] | None = None
          ) -> list[int]:
    """Per node, the longest path from its start to the end of the schedule (each op at
    its shortest mode, among the ``allowed`` ones if given)."""
    tail = [0] * dag.n_nodes
    for v in reversed(dag.topo):
        if v >= dag.n_ops:
            own = 0
        elif allowed is None:
            own = inst.min_duration(v)
        else:
            own = min(inst.modes[v][k].duration for k in allowed[v])
        tail[v] = own + max((lag + tail[s] for s, lag in dag.succs[v]), default=0)
    return tail


def _heads(inst: Instance, dag: Dag) -> list[int]:
    head = [0] * dag.n_nodes
    for v in dag.topo:
        own = inst.min_duration(v) if v < dag.n_ops else 0
        for s, lag in dag.succs[v]:
            head[s] = max(head[s], head[v] + own + lag)
    return head


def keyed_order(dag: Dag, key: Sequence[tuple[Any, ...]]) -> list[int]:
    """The ops of ``dag`` in the topological order that always takes the ready node of
    smallest ``key`` (one per node, ending with the node's index, which breaks ties);
    barrier nodes pass without entering the order."""
    missing = [len(p) for p in dag.preds]
    heap = [key[v] for v in range(dag.n_nodes) if not missing[v]]
    heapq.heapify(heap)
    order = []
    while heap:
        v = heapq.heappop(heap)[-1]
        if v < dag.n_ops:
            order.append(v)
        for s, _ in dag.succs[v]:
            missing[s] -= 1
            if not missing[s]:
                heapq.heappush(heap, key[s])
    return order


def breadth_order(inst: Instance, dag: Dag, tail: Sequence[int]) -> list[int]:
    """Ops in a topological order by earliest possible start, then critical path."""
    head = _heads(inst, dag)
    return keyed_order(dag, [(head[v], -tail[v], v) for v in range(dag.n_nodes)])


def problem_order(dag: Dag) -> list[int]:
    """Ops in a topological order that keeps the problem's own op order where it can
    (task by task, as the operator library emits them): the ready op of lowest index
    first."""
    return keyed_order(dag, [(v,) for v in range(dag.n_nodes)])


def interleaved_order(inst: Instance, dag: Dag) -> list[int]:
    """Ops in a topological order that advances every task at the same pace: the ready op
    whose task has the least share of its work (shortest durations, in problem order)
    done before it goes first.

    Task by task (:func:`problem_order`) leaves one task's engines idle while the other
    runs; longest tail first loads the operands of many tiles of every task and fills a
    tight memory. Here each task keeps its own order (its tiles finish before others
    load) while the engines of all tasks stay busy: on the tight GEMM + RMSNorm of 2,048
    columns (129 ops) the list schedule drops from 65,023 to 52,450 ns."""
    work: dict[str, int] = {}
    done_before = [0] * inst.n_ops
    for i in range(inst.n_ops):
        task = inst.op_task[i]
        done_before[i] = work.get(task, 0)
        work[task] = done_before[i] + inst.min_duration(i)
    share = [done_before[i] / max(1, work[inst.op_task[i]]) for i in range(inst.n_ops)]
    share += [-1.0] * (dag.n_nodes - inst.n_ops)  # barriers pass as soon as they can
    return keyed_order(dag, [(share[v], v) for v in range(dag.n_nodes)])


def cross_task_preds(inst: Instance, dag: Dag) -> list[list[int]]:
    """Per op, its direct predecessors that are ops of another task (barriers are not)."""
    return [[p for p, _ in dag.preds[v] if p < dag.n_ops and inst.op_task[p] != inst.op_task[v]]
            for v in range(dag.n_ops)]


def batched_order(inst: Instance, dag: Dag, cross: Sequence[Sequence[int]] | None = None,
                  batch: int = BATCH, lag: int = 0) -> list[int]:
    """Ops in a topological order where each task that consumes another's output follows
    it in batches: its ops, in problem order, are cut into *blocks* at every op with a
    predecessor in another task (``cross``: :func:`cross_task_preds`), and each run of
    ``batch`` blocks goes right after the last of the predecessors it waits for (the
    producer's store of the batch's last block). Tasks that consume nothing keep the
    problem's order.

    Why. Where a consumer's block cannot be live beside the producer's compute (the tight
    chain: an RMSNorm block's input, output and weight hold 132 of 192 KiB, a copy block
    64), each gap between two computes must hold the producer's store and next load, and
    a consumer block started there waits for that store and then runs its own load and
    store: three transfers in a row per gap (7,161 ns a period at 1,956 ops: 1.061 of the
    bound). Two blocks per gap, the earlier one beside the store, and the next gap with
    none, take 13,921 ns per two periods (1.030). Measured in this order with one block
    per batch: 1.30; with three or four: 1.10.

    With ``lag`` a batch waits for the predecessors of the ``lag`` batches after it too:
    with one block per batch and a lag of one (the ``lagged`` order), each copy block runs in
    the gap after the next norm, beside that norm's store, which is the gap's optimum
    (docs/search.md, "Where memory binds") when the modes suit it
    (:func:`~.modes.fast_store_modes`)."""
    cross = cross_task_preds(inst, dag) if cross is None else cross
    key: list[tuple[int, ...]] = [(v,) for v in range(dag.n_nodes)]
    members: dict[str, list[int]] = {}
    for v in range(dag.n_ops):
        members.setdefault(inst.op_task[v], []).append(v)
    for rank, ops in enumerate(members.values()):  # producers before their consumers
        blocks: list[list[int]] = []
        waits = False  # whether the last block has an op that waits for another task
        for v in ops:
            if not blocks or cross[v] and waits:
                blocks.append([])
                waits = False
            blocks[-1].append(v)
            waits = waits or bool(cross[v])
        batches = [[v for block in blocks[first:first + batch] for v in block]
                   for first in range(0, len(blocks), batch)]
        waits_for = [[key[p] for v in ops_of for p in cross[v]] for ops_of in batches]
        for k, ops_of in enumerate(batches):
            anchors = [a for later in waits_for[k:k + lag + 1] for a in later]
            if anchors:
                anchor = max(anchors)
                for v in ops_of:
                    key[v] = (*anchor, rank, v)
    return keyed_order(dag, key)


def paced_order(inst: Instance, dag: Dag, split: Sequence[tuple[int, int]]) -> list[int]:
    """Ops in a topological order that advances, in every task, the ops on each queue of
    :func:`~.modes.lean_split` (``split``: per op its mode and unit, 0 the fast queue, 1
    the lean one, -1 neither) at the same pace: the ready op whose task has the least
    share of its time on that queue done before it goes first; ops on neither queue go
    as soon as they are ready (they consume what the transfers brought).

    The split balances the two queues' time over the whole problem, so each task taking
    its share of both at once keeps both busy from start to end: on the bundled triple
    (a GEMM whose loads go lean, an RMSNorm and a copy whose transfers go fast), the
    task-paced :func:`interleaved_order` left the last 657 of 4,681 transfers of the
    7,957-op problem on the fast queue alone (a paired pass needed a window of 4,096 to
    reach them, 4 s), where this order needs 64 (0.3 s; 1.005 of the bound)."""
    stream: dict[tuple[str, int], int] = {}
    done_before = [0] * inst.n_ops
    for i, (mode, unit) in enumerate(split):
        key = (inst.op_task[i], unit)
        done_before[i] = stream.get(key, 0)
        if unit >= 0:
            stream[key] = done_before[i] + inst.modes[i][mode].duration
    share = [done_before[i] / max(1, stream.get((inst.op_task[i], unit), 0))
             for i, (_, unit) in enumerate(split)]
    share += [-1.0] * (dag.n_nodes - inst.n_ops)  # barriers pass as soon as they can
    return keyed_order(dag, [(share[v], v) for v in range(dag.n_nodes)])


#: A buffer of at least 1/LARGE_SHARE of its memory is *large*: few fit at once, and the
#: holes small buffers leave between them are what blocks it.
LARGE_SHARE = 4


def large_buffers(inst: Instance, share: int = LARGE_SHARE) -> list[bool]:
    """Per buffer, whether it is large: at least 1/``share`` of its memory."""
    return [inst.buffer_size[b] * share >= inst.target.memories[
        inst.buffer_memory[b]].capacity_bytes for b in range(inst.n_buffers)]


def task_ranks(inst: Instance) -> dict[str, int]:
    """Per task, its rank by the largest share of a memory one of its buffers takes
    (0: the hungriest), ties in problem order."""
    hunger: dict[str, float] = {}
    for op in range(inst.n_ops):
        task = inst.op_task[op]
        hunger[task] = max([hunger.get(task, 0.0)] + [
            inst.buffer_size[b] / inst.target.memories[inst.buffer_memory[b]].capacity_bytes
            for b in inst.op_buffers[op]])
    first_seen = {task: k for k, task in reversed(list(enumerate(inst.op_task)))}
    ranked = sorted(hunger, key=lambda task: (-hunger[task], first_seen[task]))
    return {task: k for k, task in enumerate(ranked)}


def hungriest_first_order(inst: Instance, dag: Dag) -> list[int]:
    """Ops in a topological order that puts the task with the largest buffer first and
    keeps each task's own order: the ready op of the hungriest task, lowest index first.

    Why. Where one task's blocks fill most of memory (an RMSNorm block of 2,048 columns:
    input, output and weight are 132 of 192 KiB), that task is the long pole: its
    computes can run beside almost nothing, so its chain of transfer, compute, transfer
    sets the pace, and the other tasks must fill the gaps. Issued in sequence with a wide
    window, this order starts the hungry task's next op as soon as it fits and lets the
    others' ready ops take what is left; guard (1) keeps room, in bytes, for the hungry
    task's next op. On the tight GEMM + RMSNorm of 2,048 columns at 600 ops the list
    schedule goes from 1.33 to 1.21 of the bound."""
    rank = task_ranks(inst)
    key = [(rank[inst.op_task[v]], v) for v in range(inst.n_ops)]
    key += [(-1, v) for v in range(inst.n_ops, dag.n_nodes)]  # barriers pass at once
    return keyed_order(dag, key)


def depth_order(dag: Dag, tail: Sequence[int]) -> list[int]:
    """Ops in a depth-first topological order: each sink right after what it needs.

    Sinks are taken longest tail first; an op's predecessors are visited in node order.
    Running this order keeps few buffers alive: a tile is loaded just before its use.
    """
    return _depth_first(dag, tail, [[p for p, _ in preds] for preds in dag.preds])


def frugal_order(inst: Instance, dag: Dag, tail: Sequence[int]) -> list[int]:
    """Ops in a depth-first topological order that visits each op's deepest predecessor
    first (longest path from a source), so an op with no predecessors (a weight load)
    comes right before its first consumer, and a chain of accumulating steps
    alternates load, load, step.

    Why. Run one op at a time, an order holds the buffers between their first and last
    accessor (:func:`serial_peaks`), and :func:`depth_order` visits predecessors in node
    order, which puts every load of an accumulation chain before its first step: on
    Mistral-7B's MLP (down projection over 28 blocks of K) both it and the problem's own
    order hold 11.1 MB of operands at once in 8 MiB of VTCM, so no pass that follows
    them can finish. This order holds 5.25 MB at most there, exactly the largest op's own
    operands.
    """
    head = _heads(inst, dag)
    return _depth_first(dag, tail, [sorted((p for p, _ in preds), key=lambda p: (-head[p], p))
                                    for preds in dag.preds])


def _depth_first(dag: Dag, tail: Sequence[int], preds: Sequence[Sequence[int]]) -> list[int]:
    """Sinks longest tail first, each right after its predecessors, visited in the order
    ``preds`` gives per node."""
    sinks = sorted((v for v in range(dag.n_nodes) if not dag.succs[v]),
                   key=lambda v: (-tail[v], v))
    done = [False] * dag.n_nodes
    order = []
    for sink in sinks:
        stack = [(sink, 0)]
        while stack:
            v, k = stack.pop()
            if done[v]:
                continue
            before = preds[v]
            while k < len(before) and done[before[k]]:
                k += 1
            if k < len(before):
                stack.append((v, k + 1))
                stack.append((before[k], 0))
                continue
            done[v] = True
            if v < dag.n_ops:
                order.append(v)
    return order


def bottleneck_lane(inst: Instance) -> str | None:
    """The lane kind with the most least work per unit (:meth:`~.instance.Instance.least_work`
    over its units), ties by name; None where no op uses a lane."""
    work: dict[str, int] = {}
    for op in range(inst.n_ops):
        for (kind, name), amount in inst.least_work(op).items():
            if kind == "lane":
                work[name] = work.get(name, 0) + amount
    loads = {name: amount / inst.target.lanes[name] for name, amount in work.items()}
    return min(loads, key=lambda name: (-loads[name], name), default=None)


def bottleneck_leads(inst: Instance, dag: Dag, tail: Sequence[int]) -> list[int]:
    """Per node, the rank of the first op on the busiest lane kind (:func:`bottleneck_lane`)
    it leads to: itself or its earliest descendant there, the lane's ops ranked by
    earliest possible start, then longest tail. Nodes that lead to none (the last
    stores) get the lane's op count.

    Why. On the prefill layers the matrix engine (HMX) is idle between GEMM phases,
    waiting for the activation load that starts the next phase at the end of a chain of
    vector work and DDR round trips, while ops the problem's order puts in the same
    window (the next phase's weight loads, which have slack until their own tile) take
    the DMA queues and their fast mode. Ranked by the engine op they lead to, the
    chain's transfers go before weights the engine needs only later."""
    lane = bottleneck_lane(inst)
    head = _heads(inst, dag)
    lane_ops = [v for v, on in enumerate(on_lane(inst, lane)) if on]
    rank = {v: k for k, v in enumerate(sorted(lane_ops, key=lambda v: (head[v], -tail[v], v)))}
    lead = [len(lane_ops)] * dag.n_nodes
    for v in reversed(dag.topo):
        lead[v] = min([rank.get(v, len(lane_ops))] + [lead[s] for s, _ in dag.succs[v]])
    return lead


def on_lane(inst: Instance, lane: str | None) -> list[bool]:
    """Per op, whether some mode of it draws on lane kind ``lane``."""
    return [any(name == lane for mode in inst.modes[v] for name, _ in mode.lanes)
            for v in range(inst.n_ops)]


def bottleneck_order(inst: Instance, dag: Dag, tail: Sequence[int], *,
                     streamed: bool = False) -> list[int]:
    """Ops in a topological order built around the busiest lane kind
    (:func:`bottleneck_lane`): its ops in the problem's order, each at its *due* time on
    a timetable where that lane never waits (back to back, none before its earliest
    possible start); the ops that feed them as soon as their predecessors (the
    activations crossing a phase boundary: stores, vector work, the next phase's input
    loads); loads without predecessors (weights) at their latest start before the lane op
    they feed (due minus the longest path to it); ops that lead to no lane op at their
    latest start before the end of the timetable (minus their tail).

    Why. On the prefill layers the matrix engine (HMX) is idle between GEMM phases,
    waiting for the chain of vector work and DDR round trips that ends in the next
    phase's activation load. In the problem's order that chain sits behind every op of
    the phase before it (the SiLU of a Llama-3.2-1B MLP after all of ``up_proj``'s tiles,
    though it needs only ``gate_proj``'s output), and longest-tail or lead-first ranks tie
    the engine's ops of two independent GEMMs by earliest start, so they interleave and
    the first finishes late. Here the chain runs beside the next GEMM phase and the weights
    arrive just in time.

    ``streamed``: every due time moved earlier where the other resources could not carry
    the work due after it (:func:`streamed_dues`), by at most the longest op on the
    busiest lane."""
    lane = bottleneck_lane(inst)
    lane_op = on_lane(inst, lane)
    head = _heads(inst, dag)
    units = inst.target.lanes.get(lane, 1) if lane is not None else 1
    ideal: dict[int, int] = {}
    clock = 0
    for v in problem_order(dag):
        if lane_op[v]:
            clock = max(clock, head[v])
            ideal[v] = clock
            clock += -(-inst.least_work(v)[("lane", lane)] // units)
    end = max((ideal[v] + tail[v] for v in ideal), default=0)
    due: list[int] = [0] * dag.n_nodes
    leads = [False] * dag.n_nodes
    for v in reversed(dag.topo):
        own = inst.min_duration(v) if v < dag.n_ops else 0
        later = [due[s] - lag - own for s, lag in dag.succs[v] if leads[s]]
        leads[v] = v in ideal or bool(later)
        if v in ideal:
            later.append(ideal[v])
        due[v] = min(later) if later else end - tail[v]
    if streamed:
        ahead = max((inst.min_duration(v) for v in ideal), default=0)
        due = [max(early, late - ahead) for early, late in
               zip(streamed_dues(inst, due, lane), due, strict=False)] + due[inst.n_ops:]
    key = [0] * dag.n_nodes
    for v in dag.topo:
        before = [key[p] for p, _ in dag.preds[v]]
        key[v] = max(before) if before and leads[v] and v not in ideal else due[v]
    return keyed_order(dag, [(key[v], v) for v in range(dag.n_nodes)])


def streamed_dues(inst: Instance, due: Sequence[int], lane: str | None) -> list[int]:
    """Per op, ``due`` (its latest start) moved earlier where the resources other than
    lane kind ``lane`` could not carry the work due after it: from the latest due end
    back, each lane kind and budget is a fluid machine doing its ops' least work
    (:meth:`~.instance.Instance.least_work`) over its capacity, and an op ends no later
    than every machine it uses is free.

    Why. Due times from the busiest lane's timetable put the next phase's weights just
    in time; at a phase boundary whose own traffic fills the DDR (the Llama MLP's
    product blocks: four 1 MiB transfers before ``down_proj``'s first activation load)
    those weights then load inside the boundary, while the DDR idled before it."""
    caps = {key: cap for key, cap in inst.capacities().items()
            if key != ("lane", lane) and cap > 0}
    free = dict.fromkeys(caps, float("inf"))
    out = list(due[:inst.n_ops])
    for v in sorted(range(inst.n_ops), key=lambda v: (-(due[v] + inst.min_duration(v)), -v)):
        work = {key: w for key, w in inst.least_work(v).items() if key in caps and w > 0}
        if not work:
            continue
        own = inst.min_duration(v)
        finish = min([due[v] + own] + [free[key] for key in work])
        out[v] = int(finish) - own
        for key, w in work.items():
            free[key] = finish - w / caps[key]
    return out


def serial_peaks(inst: Instance, order: Sequence[int]) -> dict[str, int]:
    """Per memory, the most bytes ``order`` holds at once run one op at a time: each
    buffer from its first accessor's turn to its last's."""
    pos = [0] * inst.n_ops
    for k, op in enumerate(order):
        pos[op] = k
    delta: dict[str, list[int]] = {m: [0] * (len(order) + 1) for m in inst.target.memories}
    for b, ops in enumerate(inst.buffer_ops):
        if ops:
            turns = [pos[i] for i in ops]
            delta[inst.buffer_memory[b]][min(turns)] += inst.buffer_size[b]
            delta[inst.buffer_memory[b]][max(turns) + 1] -= inst.buffer_size[b]
    return {m: max(itertools.accumulate(d), default=0) for m, d in delta.items()}


def hog_tasks(inst: Instance) -> set[str]:
    """The tasks with a large buffer (:func:`large_buffers`), where some other task has
    none: the hogs :func:`valley_order` places in the others' memory valleys (empty
    where every task or none has a large buffer)."""
    large = large_buffers(inst)
    hogs = {inst.op_task[op] for op in range(inst.n_ops)
            if any(large[b] for b in inst.op_buffers[op])}
    return hogs if hogs != set(inst.op_task) else set()


def _written_bytes(inst: Instance, op: int) -> int:
    """The bytes of the buffers ``op`` writes."""
    return sum(inst.buffer_size[inst.buffer_index[access.buffer]]
               for access in inst.problem.ops[inst.op_names[op]].writes if access.buffer)


def valley_order(inst: Instance, dag: Dag) -> list[int]:
    """Ops in a topological order that puts each on-chip op of the hog tasks
    (:func:`hog_tasks`: the computes that hold large buffers) into the other tasks'
    order at a *valley*: where those tasks, run one op at a time in the problem's order,
    hold the fewest bytes (each buffer up to its last use on chip). Each compute goes
    one spacing (the others' ops over the computes) after the one before, at the gap of
    least held bytes within half a spacing, before a store rather than after it (the
    store then runs beside the compute); a hog's loads go just before the compute they
    feed, the largest first (it decides when the compute can start), its other ops
    right after the compute before them. Without hogs it is the problem's order.

    Why. Beside a compute that holds most of memory the other tasks can only go on
    where they hold little: on the tight wide pair (an RMSNorm block's input, output and
    weight 132 of 192 KiB) a GEMM between its two K steps of a column holds both A tiles
    and an accumulator (48 KiB), so it cannot load the next B tile beside the norm and
    the bus idles; at a row's start it holds nothing, at a column's end the two A tiles.
    Every other pass let the norm compute start where memory first allowed, half of them
    in the middle of a column (1.115 of the bound at 2,011 ops, a norm per half row).
    Here they fall at row starts and at the middle column boundaries: from the list
    scheduler alone 1.078 / 1.071 / 1.070 / 1.069 at 161 / 609 / 2,011 / 7,966 ops.
    Spacing each compute from the one before, not at an even share of the whole: where
    the counts do not divide, even shares drift off the rows (a stall at 2,011 ops)."""
    hogs = hog_tasks(inst)
    index = list(range(dag.n_nodes))
    if not hogs:
        return keyed_order(dag, [(v,) for v in index])
    filler = [v for v in range(inst.n_ops) if inst.op_task[v] not in hogs]
    position = {v: k for k, v in enumerate(filler)}
    stores = inst.writes_ddr

    def on_chip(v: int) -> bool:
        return not inst.reads_ddr(v) and not stores(v)

    # held[g + 1]: the share of memory the filler holds after its op g, each buffer up to
    # its last use on chip (a store after it can run beside the hog's compute)
    delta = [0.0] * (len(filler) + 2)
    for b, users in enumerate(inst.buffer_ops):
        turns = [position[v] for v in users if v in position]
        if turns and len(turns) == len(users):
            share = inst.buffer_size[b] / inst.target.memories[
                inst.buffer_memory[b]].capacity_bytes
            kept = [position[v] for v in users if not stores(v)] or turns
            delta[min(turns) + 1] += share
            delta[max(kept) + 1] -= share
    held = list(itertools.accumulate(delta))

    hog_ops = [v for v in range(inst.n_ops) if inst.op_task[v] in hogs]
    computes = [v for v in hog_ops if on_chip(v)]
    # each compute one spacing after the one before (the first at the start), at the
    # gap of least held share within half a spacing, a store next rather than after
    # (so it runs beside the compute), then the nearest
    spacing = len(filler) / max(1, len(computes))
    anchor: dict[int, float] = {}
    previous = -1.0 - spacing
    for v in computes:
        target = previous + spacing
        window = range(max(-1, round(target - spacing / 2)),
                       min(len(filler) - 1, round(target + spacing / 2)) + 1)
        previous = min(window, key=lambda g: (
            held[g + 1], not (g + 1 < len(filler) and stores(filler[g + 1])),
            abs(g - target)), default=len(filler) - 1)
        anchor[v] = previous + 0.5
    key: list[tuple[float, int, int, int]] = [(float(v), 1, 0, v) for v in index]
    for v in filler:
        key[v] = (float(position[v]), 1, 0, v)
    last = -0.5
    upcoming = iter(computes)
    following = next(upcoming, None)
    for v in hog_ops:
        if v == following:
            key[v] = (anchor[v], 0, 0, v)
            last = anchor[v]
            following = next(upcoming, None)
        elif following is not None and inst.reads_ddr(v) and not stores(v):
            # a load just before its compute, the largest first (it decides the start)
            key[v] = (anchor[following] - 0.5, 0, -_written_bytes(inst, v), v)
        else:
            key[v] = (last, 2, 0, v)  # a store or the like: right after the compute before
    for v in range(inst.n_ops, dag.n_nodes):
        key[v] = (-1.0, 0, 0, v)  # barriers pass as soon as they can
    return keyed_order(dag, key)
