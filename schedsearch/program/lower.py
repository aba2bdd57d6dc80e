"""Lowering: from a timed schedule to a program (queues per lane unit plus waits).

The queues come straight from the schedule: each lane unit issues the ops that hold it in
order of start. The waits are the fewest that make the program legal for every duration:

1. derive every order the schedule's legality relies on (:mod:`.orders`);
2. add a wait for each one that no path of queue successions already implies;
3. drop each wait that another path of queues and waits implies (a transitive
   reduction, restricted to waits: queue successions stay). In an acyclic graph the
   redundant edges can all be dropped at once without changing what reaches what, so
   the result keeps every order of step 1 and no wait can be removed from it.

Reachability uses vector clocks over the queues (:mod:`.reach`), never all pairs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from models.errors import InputError
from models.formats import Schedule
from models.jsonio import json_path
from schedsearch.program.model import Program, queue_name
from schedsearch.program.orders import OrderCode, needed_orders
from schedsearch.program.reach import Cycle, Reach

__all__ = ["Lowering", "lower", "lower_report", "schedule_queues"]


@dataclass(frozen=True, slots=True)
class Lowering:
    """A lowered program and the figures of how it was obtained.

    ``guards`` maps each kept wait ``(waited for, waiter)`` to the codes of the orders it
    stands for: dropping it breaks one of them.
    """

    program: Program
    needed: int
    implied_by_queues: int
    waits_before: int
    waits_after: int
    guards: dict[tuple[str, str], tuple[OrderCode, ...]]

    @property
    def waits_per_op(self) -> float:
        ops = len(self.program.schedule.ops)
        return self.waits_after / ops if ops else 0.0


def schedule_queues(schedule: Schedule) -> dict[str, tuple[str, ...]]:
    """One queue per lane unit of the target: the ops holding it, by (start, end, name)."""
    held: dict[str, list[tuple[int, int, str]]] = {
        queue_name(kind, i): [] for kind, count in schedule.target.lanes.items()
        for i in range(count)}
    for name, p in schedule.ops.items():
        for kind, units in p.units.items():
            for unit in set(units):
                key = queue_name(kind, unit)
                if key in held:
                    held[key].append((p.start, p.end, name))
    return {key: tuple(name for _, _, name in sorted(ops)) for key, ops in held.items()}


def lower(schedule: Schedule) -> Program:
    """The program of :func:`lower_report` (a legal schedule gives a legal program)."""
    return lower_report(schedule).program


def lower_report(schedule: Schedule) -> Lowering:
    """Lower a legal ``schedule``. :class:`InputError` for a placement of an unknown op,
    an unknown mode or an unplaced op, and (rule DEADLOCK) for orders that form a cycle,
    which a legal schedule never has."""
    _check_placed(schedule)
    names = list(schedule.ops)
    index = {name: i for i, name in enumerate(names)}
    queues = schedule_queues(schedule)
    queue_nodes = [[index[op] for op in ops] for ops in queues.values()]
    codes: dict[tuple[int, int], list[OrderCode]] = defaultdict(list)
    for order in needed_orders(schedule):
        codes[(index[order.before], index[order.after])].append(order.code)
    pairs = np.array(list(codes) or np.empty((0, 2)), dtype=np.int64).reshape(-1, 2)
    try:
        by_queues = Reach(len(names), queue_nodes, [])
        missing = pairs[~by_queues.reaches_many(pairs[:, 0], pairs[:, 1])]
        graph = Reach(len(names), queue_nodes, [tuple(e) for e in missing.tolist()])
    except Cycle as cycle:
        raise InputError("the schedule's orders form a cycle through "
                         + " -> ".join(names[i] for i in cycle.nodes[:6]),
                         source="<schedule>", rule="DEADLOCK") from None
    kept = missing[~_redundant(graph, queue_nodes, missing)]
    waits: dict[str, list[str]] = defaultdict(list)
    for before, after in sorted(kept.tolist(), key=lambda e: (e[1], e[0])):
        waits[names[after]].append(names[before])
    guards = {(names[a], names[b]): tuple(codes[(a, b)]) for a, b in kept.tolist()}
    meta = {"needed_orders": len(codes), "waits_before_reduction": int(len(missing)),
            "waits": int(len(kept))}
    program = Program(schedule, queues, {op: tuple(p) for op, p in waits.items()}, meta)
    return Lowering(program, len(codes), len(codes) - len(missing), len(missing), len(kept),
                    guards)


def _check_placed(schedule: Schedule) -> None:
    """What lowering reads must exist: each placement's op and mode, each problem op
    placed (the orders are read off a legal schedule; ``schedcheck verify`` says more)."""
    problem = schedule.problem
    for name, p in schedule.ops.items():
        if name not in problem.ops:
            raise InputError(f"op {name!r} is scheduled but not in the problem",
                             source="<schedule>", path=json_path("$.ops", name), rule="OP_UNKNOWN")
        if not 0 <= p.mode < len(problem.ops[name].modes):
            raise InputError(f"mode {p.mode} of op {name!r} does not exist",
                             source="<schedule>", path=json_path(json_path("$.ops", name), "mode"),
                             rule="MODE")
    for name in problem.ops:
        if name not in schedule.ops:
            raise InputError(f"op {name!r} of the problem is not scheduled",
                             source="<schedule>", path="$.ops", rule="OP_MISSING")


def _redundant(graph: Reach, queues: list[list[int]], waits: np.ndarray) -> np.ndarray:
    """For each wait ``(u, v)``: does ``u`` reach another direct predecessor of ``v``?"""
    preds: dict[int, list[int]] = defaultdict(list)
    for queue in queues:
        for a, b in zip(queue, queue[1:], strict=False):
            preds[b].append(a)
    for a, b in waits.tolist():
        preds[b].append(a)
    which: list[int] = []
    sources: list[int] = []
    targets: list[int] = []
    for k, (u, v) in enumerate(waits.tolist()):
        for p in preds[v]:
            if p != u:
                which.append(k)
                sources.append(u)
                targets.append(p)
    hit = graph.reaches_many(np.asarray(sources, dtype=np.int64),
                             np.asarray(targets, dtype=np.int64))
    redundant = np.zeros(len(waits), dtype=bool)
    redundant[np.asarray(which, dtype=np.int64)[hit]] = True
    return redundant
