"""``verify-program``: an ``npu-program/1`` document in, one :class:`Report` out.

The embedded schedule is verified first with every schedule rule (its violations are
reported as they are; FORMAT paths are re-rooted under ``$.schedule``). Then the program
rules of FORMATS.md: ``PROGRAM_FORMAT`` (shape, names, queues equal to what the schedule
gives, each in order of start), ``DEADLOCK`` (no cycle of queue successions and waits),
and the five ``ORDER_*`` rules, each decided by happens-before
(:mod:`checker.rules.program_graph`) over pairs that sweeps find
(:mod:`checker.rules.program_orders`). A rule that would judge an incomplete picture
(a schedule section with FORMAT faults, unusable queues or waits, a cycle) stands aside
and is listed in ``stats.skipped_rules``.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from checker.load import UnusableInput, build_model, no_gc
from checker.model import Model
from checker.report import CODES, Report, Violation, make_stats, plural
from checker.rules import RULES
from checker.rules.program_graph import Graph
from checker.rules.program_orders import (
    Need,
    after_needs,
    buffer_needs,
    ddr_needs,
    judge,
    reuse_needs,
)
from checker.verify import judge_file

__all__ = ["PROGRAM_CODES", "verify_program", "verify_program_file"]

PROGRAM_FORMAT = "npu-program/1"
SCHEDULE_FORMAT = "npu-schedule/1"
#: The program rules' codes, in FORMATS.md's order, after the schedule rules' codes.
PROGRAM_CODES = ("PROGRAM_FORMAT", "DEADLOCK", "ORDER_AFTER", "ORDER_RAW", "ORDER_WAW",
                 "ORDER_REUSE", "ORDER_DDR")
ORDER_CODES = PROGRAM_CODES[2:]
_UNIT = re.compile(r"^(.+)\.(0|[1-9][0-9]*)$")
#: Units named in the one violation for a lane's missing queues.
_EXAMPLES = 3
#: Schedule sections the order rules read whole (which write is seen, who frees first).
_ORDER_NEEDS = frozenset({"buffers", "ops", "after", "tensors", "memories", "schedule.ops",
                          "schedule.buffers"})


def _path(parent: str, key: str) -> str:
    return f"{parent}.{key}" if key.isidentifier() else f"{parent}[{json.dumps(key)}]"


class _Program:
    """The program's queues and waits as op indices, and its PROGRAM_FORMAT faults."""

    def __init__(self, document: dict[str, Any], m: Model) -> None:
        self.m = m
        self.violations: list[Violation] = []
        self.usable = True
        self.names = list(m.placements)
        self.index = {name: i for i, name in enumerate(self.names)}
        for key in document:
            if key not in ("format", "schedule", "queues", "waits", "meta"):
                self.fail(_path("$", key), f"unknown key {key!r}", usable=True)
        if "meta" in document and type(document["meta"]) is not dict:
            self.fail("$.meta", "expected an object", usable=True)
        self.queues = self._queues(document.get("queues"))
        self.waits = self._waits(document.get("waits"))

    def fail(self, path: str, message: str, *, usable: bool = False,
             ops: tuple[str, ...] = ()) -> None:
        self.usable = self.usable and usable
        self.violations.append(Violation("PROGRAM_FORMAT", f"{path}: {message}", ops))

    def _list(self, value: Any, parent: str, key: str) -> list[int]:
        """The op indices of an array of op names at ``parent`` / ``key`` (its JSON path
        is built only for a fault: a program has one such array per op)."""
        if type(value) is not list:
            self.fail(_path(parent, key), "expected an array of op names")
            return []
        index = self.index
        nodes = [index.get(name, -1) if type(name) is str else -1 for name in value]
        if -1 not in nodes and len(set(nodes)) == len(nodes):  # the common, clean case
            return nodes
        path = _path(parent, key)
        nodes = []
        seen: set[str] = set()
        for k, name in enumerate(value):
            if type(name) is not str or name not in index:
                self.fail(f"{path}[{k}]", f"{json.dumps(name)[:60]} is not a scheduled op")
            elif name in seen:
                self.fail(f"{path}[{k}]", f"op {name!r} is listed twice", ops=(name,))
            else:
                seen.add(name)
                nodes.append(index[name])
        return nodes

    def _queues(self, value: Any) -> dict[tuple[str, int], list[int]]:
        if value is None or type(value) is not dict:
            self.fail("$.queues", "missing or not an object")
            return {}
        queues = {}
        for name, ops in value.items():
            path = _path("$.queues", name)
            match = _UNIT.match(name)
            kind, unit = (match.group(1), int(match.group(2))) if match else ("", -1)
            if not match or kind not in self.m.lanes or unit >= self.m.lanes[kind]:
                self.fail(path, f"{name!r} names no lane unit KIND.INDEX of the target")
                continue
            queues[(kind, unit)] = self._list(ops, "$.queues", name)
        self._match_schedule(queues)
        return queues

    def _match_schedule(self, queues: dict[tuple[str, int], list[int]]) -> None:
        """Each unit's queue holds exactly the ops holding it, in order of start. Only the
        units some op holds or some queue names are looked at: a lane of 10^9 units costs
        nothing until used (units without a queue are reported once per lane)."""
        held: dict[tuple[str, int], set[int]] = defaultdict(set)
        lanes = self.m.lanes
        for node, p in enumerate(self.m.placements.values()):  # self.names' order
            for kind, units in p.units.items():
                count = lanes.get(kind, 0)
                for unit in units:
                    if 0 <= unit < count:
                        held[(kind, unit)].add(node)
        for (kind, unit), queue in queues.items():
            path = _path("$.queues", f"{kind}.{unit}")
            expected = held.get((kind, unit), set())
            for node in sorted(expected - set(queue)):
                name = self.names[node]
                self.fail(path, f"op {name!r} holds {kind} unit {unit} but is not in its "
                          "queue", usable=True, ops=(name,))
            for node in [n for n in queue if n not in expected]:
                name = self.names[node]
                self.fail(path, f"op {name!r} is queued on {kind} unit {unit} but does not "
                          "hold it", usable=True, ops=(name,))
            self._in_order_of_start(queue, path)
        self._missing_queues(queues, held)

    def _in_order_of_start(self, queue: list[int], path: str) -> None:
        starts = [self.m.placements[self.names[n]].start for n in queue]
        for k in range(len(queue) - 1):
            if starts[k + 1] < starts[k]:
                a, b = self.names[queue[k]], self.names[queue[k + 1]]
                self.fail(f"{path}[{k + 1}]", f"op {b!r} starts at t={starts[k + 1]}, "
                          f"before op {a!r} queued ahead of it (t={starts[k]})",
                          usable=True, ops=(a, b))

    def _missing_queues(self, queues: dict[tuple[str, int], list[int]],
                        held: dict[tuple[str, int], set[int]]) -> None:
        """One violation per lane kind with units that have no queue: how many, and the
        first few (units some op holds first, since their ops go unordered)."""
        named: dict[str, set[int]] = defaultdict(set)
        for kind, unit in queues:
            named[kind].add(unit)
        for kind, count in self.m.lanes.items():
            missing = count - len(named[kind])
            if missing <= 0:
                continue
            used = sorted(u for k, u in held if k == kind and u not in named[kind])
            examples = used[:_EXAMPLES]
            unit = 0
            while len(examples) < min(_EXAMPLES, missing):
                if unit not in named[kind] and unit not in examples:
                    examples.append(unit)
                unit += 1
            listed = ", ".join(f"{kind}.{u}" for u in examples)
            more = f" and {missing - len(examples)} more" if missing > len(examples) else ""
            ops = tuple(sorted({self.names[n] for u in used for n in held[(kind, u)]}))
            self.fail("$.queues", f"no queue for lane unit{'s' if missing > 1 else ''} "
                      f"{listed}{more}", usable=True, ops=ops[:_EXAMPLES])

    def _waits(self, value: Any) -> list[tuple[int, int]]:
        if value is None or type(value) is not dict:
            self.fail("$.waits", "missing or not an object")
            return []
        edges = []
        for name, preds in value.items():
            node = self.index.get(name)
            if node is None:
                self.fail(_path("$.waits", name), f"{name!r} is not a scheduled op")
                continue
            nodes = self._list(preds, "$.waits", name)
            edges.extend(zip(nodes, [node] * len(nodes), strict=True))
        return edges


def _order_violations(needs: Iterator[Need], graph: Graph, index: dict[str, int],
                      m: Model) -> list[Violation]:
    out = []
    for need in judge(needs, graph, index):
        a, b = need.before, need.after
        out.append(Violation(need.code, f"op {b!r} may start before op {a!r} ends: no "
                             f"path of queue successions and waits leads from {a!r} to "
                             f"{b!r}, but {need.reason()}", (a, b), need.buffers, need.tensors,
                             time=m.placements[b].start))
    return out


def verify_program(document: Any) -> Report:
    """Apply the schedule rules to the embedded schedule, then the program rules.

    Raises :class:`UnusableInput` when the document is not an ``npu-program/1`` object
    embedding an ``npu-schedule/1`` object (whose own embedded documents are checked as
    :func:`checker.verify` does).
    """
    began = time.perf_counter()
    if type(document) is not dict:
        raise UnusableInput("expected an object")
    if document.get("format") != PROGRAM_FORMAT:
        raise UnusableInput(f"expected format {PROGRAM_FORMAT!r}, got "
                            f"{json.dumps(document.get('format'))[:60]}", path="$.format")
    schedule = document.get("schedule")
    if type(schedule) is not dict:
        raise UnusableInput("the embedded schedule is missing or not an object",
                            path="$.schedule")
    with no_gc():
        try:
            m, violations = build_model(schedule)
        except UnusableInput as error:
            raise UnusableInput(error.message, path="$.schedule" + error.path[1:],
                                rule=error.rule) from None
        violations = [Violation(v.code, "$.schedule" + v.message[1:], v.ops, v.buffers,
                                v.tensors, v.time) if v.code == "FORMAT" else v
                      for v in violations]
        skipped: list[str] = []
        for rule in RULES:
            if rule.needs <= m.intact:
                violations.extend(rule.check(m))
            else:
                skipped.extend(rule.codes)
        program = _Program(document, m)
        violations.extend(program.violations)
        if not program.usable:
            skipped.extend(PROGRAM_CODES[1:])
        else:
            graph = Graph(len(program.names), list(program.queues.values()), program.waits)
            if graph.cycle is not None:
                cycle = tuple(program.names[i] for i in graph.cycle)
                violations.append(Violation(
                    "DEADLOCK", f"queue successions and waits form a cycle of "
                    f"{plural(len(cycle), 'op')}: {' -> '.join(cycle[:8])}"
                    f"{' -> ...' if len(cycle) > 8 else ''} -> {cycle[0]}", cycle))
                skipped.extend(ORDER_CODES)
            elif not m.intact >= _ORDER_NEEDS:
                skipped.extend(ORDER_CODES)
            else:
                index = program.index
                for needs in (after_needs(m, graph, index), buffer_needs(m, graph, index),
                              reuse_needs(m, graph, index), ddr_needs(m)):
                    violations.extend(_order_violations(needs, graph, index, m))
        ops, buffers = len(m.op_names or ()), len(m.buffers)
        # freed while the collector still sleeps, as verify does: otherwise its first pass
        # after waking scans every object of the model (a box of rank 64 is 65 tuples)
        del m, program
    violations = _sorted(violations)
    stats = make_stats(violations, ops, buffers, time.perf_counter() - began, skipped)
    for code in PROGRAM_CODES:
        count = sum(v.code == code for v in violations)
        if count:
            stats["by_code"][code] = count
    return Report(violations, stats)


def _sorted(violations: list[Violation]) -> list[Violation]:
    """Schedule codes in their table order, then the program codes in theirs."""
    order = {code: i for i, code in enumerate((*CODES, *PROGRAM_CODES))}
    return sorted(violations, key=lambda v: order.get(v.code, len(order)))


def verify_program_file(path: str | os.PathLike[str]) -> Report:
    """Read a program file strictly (``-`` is standard input) and verify it."""
    return judge_file(path, verify_program)
