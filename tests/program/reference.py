"""A naive reference for ``verify-program``: every rule by its definition in FORMATS.md,
over every pair of accesses, with reachability by graph search (a transitive closure).

Slow on purpose and written from the text alone, to judge ``checker/program.py``. It
returns the program codes it finds (not the schedule's), for documents whose embedded
schedule is usable.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def _closure(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, set[str]]:
    succ: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        succ[a].append(b)
    reach = {}
    for start in nodes:
        seen: set[str] = set()
        stack = list(succ[start])
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(succ[node])
        reach[start] = seen
    return reach


def _bytes(access: dict[str, Any], buffers: dict[str, Any]) -> tuple[int, int]:
    lo, hi = access.get("bytes", [0, buffers[access["buffer"]]["size"]])
    return lo, hi


def _meet(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _boxes_meet(a: list[list[int]], b: list[list[int]]) -> bool:
    return all(x[0] < y[1] and y[0] < x[1] for x, y in zip(a, b, strict=True))


def reference_codes(doc: dict[str, Any]) -> set[str]:
    """The program codes (PROGRAM_FORMAT for queue content and order, DEADLOCK, ORDER_*)."""
    schedule = doc["schedule"]
    problem, target, placed = schedule["problem"], schedule["target"], schedule["ops"]
    codes: set[str] = set()
    expected: dict[str, set[str]] = {f"{k}.{i}": set() for k, n in target["lanes"].items()
                                     for i in range(n)}
    for name, p in placed.items():
        for kind, units in p.get("units", {}).items():
            for u in units:
                expected[f"{kind}.{u}"].add(name)
    for unit, ops in expected.items():
        queue = doc["queues"].get(unit)
        if queue is None or set(queue) != ops or len(queue) != len(ops) or any(
                placed[queue[i]]["start"] > placed[queue[i + 1]]["start"]
                for i in range(len(queue) - 1)):
            codes.add("PROGRAM_FORMAT")
    edges = [(q[i], q[i + 1]) for q in doc["queues"].values() for i in range(len(q) - 1)]
    edges += [(p, op) for op, preds in doc["waits"].items() for p in preds]
    reach = _closure(list(placed), edges)
    if any(op in reach[op] for op in placed):
        return codes | {"DEADLOCK"}

    def hb(a: str, b: str) -> bool:
        return b in reach[a]

    for a, b in problem.get("after", []):
        if not hb(a, b):
            codes.add("ORDER_AFTER")
    buffers = problem.get("buffers", {})
    reads, writes = [], []
    for name in placed:
        op = problem["ops"][name]
        reads += [(name, a["buffer"], _bytes(a, buffers)) for a in op.get("reads", [])
                  if "buffer" in a]
        writes += [(name, a["buffer"], _bytes(a, buffers)) for a in op.get("writes", [])
                   if "buffer" in a]
    for i, (a, buf, span) in enumerate(writes):
        for b, other, other_span in writes[i + 1:]:
            if a != b and buf == other and _meet(span, other_span) and \
                    not hb(a, b) and not hb(b, a):
                codes.add("ORDER_WAW")
    for r, buf, span in reads:
        mine = [(w, s) for w, b, s in writes if b == buf and w != r and _meet(s, span)]
        before = [w for w, _ in mine if placed[w]["end"] <= placed[r]["start"]]
        if not before:
            continue
        seen = max(before, key=lambda w: placed[w]["end"])
        if not hb(seen, r):
            codes.add("ORDER_RAW")
        for other, _ in mine:
            if other != seen and not hb(other, seen) and not hb(r, other):
                codes.add("ORDER_RAW")
    accessors: dict[str, set[str]] = defaultdict(set)
    for name, buf, _ in reads + writes:
        accessors[buf].add(name)
    places = schedule["buffers"]
    names = sorted(accessors)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            bx, by = buffers[x], buffers[y]
            if bx["memory"] != by["memory"]:
                continue
            px, py = places[x], places[y]
            if not _meet((px["offset"], px["offset"] + bx["size"]),
                         (py["offset"], py["offset"] + by["size"])):
                continue
            first, second = sorted((x, y), key=lambda n: (places[n]["free"],
                                                          places[n]["alloc"], n))
            if any(a != b and not hb(a, b) for a in accessors[first]
                   for b in accessors[second]):
                codes.add("ORDER_REUSE")
    tensors = problem.get("tensors", {})
    for w in placed:
        for wa in problem["ops"][w].get("writes", []):
            if "tensor" not in wa or tensors[wa["tensor"]]["role"] == "input":
                continue
            for r in placed:
                if r == w:
                    continue
                for ra in problem["ops"][r].get("reads", []):
                    if ra.get("tensor") == wa["tensor"] and _boxes_meet(wa["box"], ra["box"]) \
                            and not hb(w, r):
                        codes.add("ORDER_DDR")
    return codes
