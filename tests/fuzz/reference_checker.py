"""A deliberately naive second checker, written from FORMATS.md alone (not from checker/).

Why it exists: two independent readings of the rules that agree on thousands of random,
mostly illegal schedules are evidence that both are right; where they disagree, one of
them misreads FORMATS.md, and the disagreement is a small, concrete example to judge.

How it stays obviously correct: no cleverness. Every pairwise rule compares all pairs;
every "at every instant" rule looks at every instant at which some window starts (the
only instants at which something begins to run, so nothing is missed: two windows share
a tick iff one is running when the other starts, and running draws only grow at a
start); every box is expanded into a Python set of index tuples and every byte range into
a set of byte indices. That is only affordable on small inputs, which is the point: a
well-formed document whose buffers, tensors or boxes hold more than ``MAX_VOLUME``
bytes or cells in all raises :class:`TooLarge` instead (corrupted documents can name
huge figures; tests/fuzz/strategies.py never does).

It follows FORMATS.md's "Boundaries (settled 2026-12-01)" section; on top of it:
- FORMAT: any structural problem makes the result ``{"FORMAT"}`` and nothing else is
  checked (what else a checker reports after a FORMAT issue is not specified).
- LANE_OVERLAP is about the units of a lane, indices in ``[0, count)``; two ops holding
  the same index outside it are UNITS' fault only.
- An empty window (``start == end``) holds no unit, draws nothing and races with no
  other op; its writes happen at ``start``, which is during a read of the same bytes by
  another op iff that read's window holds ``start`` strictly inside it.
- An inverted window (``end < start``) is empty: besides DURATION, only the rules on its
  numbers alone judge it (AFTER, DDR_RAW's start against a write's end, MAKESPAN, and the
  visibility of its writes at ``end``). It holds no unit and draws no budget; its buffer
  accesses lie inside any lifetime (no LIFETIME), its buffer reads read nothing (never
  stale) and its writes occupy no tick (no race, not during anyone's read).
"""

from __future__ import annotations

import itertools
from typing import Any

__all__ = ["CODES", "MAX_VOLUME", "reference_codes", "FormatIssue", "TooLarge"]

CODES = ("FORMAT", "OP_MISSING", "OP_UNKNOWN", "MODE", "DURATION", "UNITS", "LANE_OVERLAP",
         "BUDGET", "AFTER", "COVERAGE", "OUTPUT", "DDR_RAW", "MEM_RANGE", "ALIAS", "LIFETIME",
         "STALE_READ", "WRITE_RACE", "MAKESPAN")


#: Most bytes and cells (buffer sizes, tensor shapes, task and op spaces, access boxes,
#: summed) the reference expands into sets; beyond it, it raises TooLarge.
MAX_VOLUME = 10**6


class FormatIssue(Exception):
    """The document does not match FORMATS.md's shapes or names something that is absent."""


class TooLarge(Exception):
    """A well-formed document too large for this naive checker to judge."""


# ----------------------------------------------------------------------------- structure
def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and -(2**63) <= x < 2**63


def _need(condition: bool, why: str) -> None:
    if not condition:
        raise FormatIssue(why)


def _obj(x: Any, required: set[str], optional: set[str], where: str) -> dict[str, Any]:
    _need(isinstance(x, dict), f"{where}: not an object")
    _need(required <= set(x), f"{where}: missing {sorted(required - set(x))}")
    _need(set(x) <= required | optional, f"{where}: unknown {sorted(set(x) - required - optional)}")
    return x


def _names(x: Any, where: str) -> dict[str, Any]:
    _need(isinstance(x, dict), f"{where}: not an object")
    _need(all(isinstance(k, str) and k for k in x), f"{where}: empty name")
    return x


def _int(x: Any, where: str, minimum: int | None = None) -> int:
    _need(_is_int(x), f"{where}: not an integer")
    _need(minimum is None or x >= minimum, f"{where}: below {minimum}")
    return x


def _str(x: Any, where: str) -> str:
    _need(isinstance(x, str) and bool(x), f"{where}: not a non-empty string")
    return x


def _meta(x: dict[str, Any], where: str) -> None:
    _need(isinstance(x.get("meta", {}), dict), f"{where}.meta: not an object")


def _box(x: Any, where: str) -> list[tuple[int, int]]:
    _need(isinstance(x, list), f"{where}: box is not a list")
    out = []
    for iv in x:
        _need(isinstance(iv, list) and len(iv) == 2, f"{where}: interval is not [lo, hi]")
        lo, hi = _int(iv[0], where), _int(iv[1], where)
        _need(lo < hi, f"{where}: empty interval")
        out.append((lo, hi))
    return out


def _structure(doc: Any) -> None:
    """Raise FormatIssue unless ``doc`` has the shapes and names of FORMATS.md."""
    d = _obj(doc, {"format", "target", "problem", "ops", "buffers", "makespan"}, {"meta"}, "$")
    _need(d["format"] == "npu-schedule/1", "$.format")
    t = _obj(d["target"], {"format", "name", "lanes"},
             {"time_unit", "budgets", "memories", "costs", "meta"}, "$.target")
    _need(t["format"] == "npu-target/1", "$.target.format")
    _str(t["name"], "$.target.name")
    _str(t.get("time_unit", "ns"), "$.target.time_unit")
    for n, c in _names(t["lanes"], "lanes").items():
        _int(c, f"lanes.{n}", 1)
    for n, c in _names(t.get("budgets", {}), "budgets").items():
        _int(c, f"budgets.{n}", 1)
    for n, m in _names(t.get("memories", {}), "memories").items():
        _obj(m, {"capacity_bytes"}, {"alignment_bytes", "meta"}, f"memories.{n}")
        _meta(m, f"memories.{n}")
        _int(m["capacity_bytes"], "capacity", 1)
        _int(m.get("alignment_bytes", 1), "alignment", 1)
    for key in ("costs", "meta"):
        _need(isinstance(t.get(key, {}), dict), f"target.{key}")

    p = _obj(d["problem"], {"format", "name", "ops"},
             {"tensors", "tasks", "buffers", "after", "meta"}, "$.problem")
    _need(p["format"] == "npu-problem/1", "$.problem.format")
    _str(p["name"], "$.problem.name")
    _need(isinstance(p.get("meta", {}), dict), "problem.meta")
    tensors = _names(p.get("tensors", {}), "tensors")
    for n, x in tensors.items():
        _obj(x, {"shape", "dtype", "role"}, {"meta"}, f"tensors.{n}")
        _need(isinstance(x["shape"], list), "shape")
        for e in x["shape"]:
            _int(e, "shape", 1)
        _str(x["dtype"], "dtype")
        _need(isinstance(x["role"], str) and x["role"] in ("input", "output", "temp"), "role")
        _need(isinstance(x.get("meta", {}), dict), "tensor meta")

    def tensor_box(name: Any, box: Any, where: str) -> None:
        _need(isinstance(name, str) and name in tensors, f"{where}: unknown tensor")
        b = _box(box, where)
        shape = tensors[name]["shape"]
        _need(len(b) == len(shape), f"{where}: rank")
        _need(all(lo >= 0 and hi <= n for (lo, hi), n in zip(b, shape, strict=True)),
              f"{where}: outside shape")

    tasks = _names(p.get("tasks", {}), "tasks")
    for n, x in tasks.items():
        _obj(x, {"kind"}, {"space", "outputs", "params", "meta"}, f"tasks.{n}")
        _str(x["kind"], "kind")
        if "space" in x:
            _box(x["space"], "task space")
        for tn, box in _names(x.get("outputs", {}), "outputs").items():
            tensor_box(tn, box, f"tasks.{n}.outputs")
        for key in ("params", "meta"):
            _need(isinstance(x.get(key, {}), dict), key)
    memories = t.get("memories", {})
    buffers = _names(p.get("buffers", {}), "buffers")
    for n, x in buffers.items():
        _obj(x, {"memory", "size"}, {"align", "meta"}, f"buffers.{n}")
        _need(isinstance(x["memory"], str) and x["memory"] in memories, "unknown memory")
        _int(x["size"], "size", 1)
        _int(x.get("align", 1), "align", 1)
        _need(isinstance(x.get("meta", {}), dict), "buffer meta")

    def access(a: Any, where: str) -> None:
        _obj(a, set(), {"tensor", "box", "buffer", "bytes", "value", "meta"}, where)
        _meta(a, where)
        _need(("tensor" in a) != ("buffer" in a), f"{where}: tensor xor buffer")
        if "tensor" in a:
            _need("box" in a and "bytes" not in a and "value" not in a, where)
            tensor_box(a["tensor"], a["box"], where)
        else:
            _need("box" not in a, where)
            _need(isinstance(a["buffer"], str) and a["buffer"] in buffers, f"{where}: buffer")
            if "bytes" in a:
                (lo, hi), = _box([a["bytes"]], where)
                _need(lo >= 0 and hi <= buffers[a["buffer"]]["size"], f"{where}: bytes")
            if "value" in a:
                _str(a["value"], where)

    lanes, budgets = t["lanes"], t.get("budgets", {})
    ops = _names(p["ops"], "ops")
    for n, x in ops.items():
        _obj(x, {"task", "modes"}, {"space", "reads", "writes", "meta"}, f"ops.{n}")
        _need(isinstance(x["task"], str) and x["task"] in tasks, f"ops.{n}.task")
        _need(isinstance(x["modes"], list) and len(x["modes"]) > 0, "modes")
        for m in x["modes"]:
            _obj(m, {"duration"}, {"lanes", "budgets", "meta"}, "mode")
            _meta(m, "mode")
            _int(m["duration"], "duration", 0)
            for ln, c in _names(m.get("lanes", {}), "mode lanes").items():
                _need(ln in lanes, "mode lane")
                _int(c, "mode lane count", 1)
            for bn, c in _names(m.get("budgets", {}), "mode budgets").items():
                _need(bn in budgets, "mode budget")
                _int(c, "mode draw", 0)
        if "space" in x:
            _box(x["space"], "op space")
        for key in ("reads", "writes"):
            _need(isinstance(x.get(key, []), list), key)
            for a in x.get(key, []):
                access(a, f"ops.{n}.{key}")
        _need(isinstance(x.get("meta", {}), dict), "op meta")
    _need(isinstance(p.get("after", []), list), "after")
    for edge in p.get("after", []):
        _need(isinstance(edge, list) and len(edge) == 2, "edge")
        _need(all(isinstance(e, str) and e in ops for e in edge), "edge names")
        _need(edge[0] != edge[1], "an edge from an op to itself")

    for n, x in _names(d["ops"], "$.ops").items():
        _obj(x, {"mode", "start", "end"}, {"units", "meta"}, f"$.ops.{n}")
        _meta(x, f"$.ops.{n}")
        for key in ("mode", "start", "end"):
            _int(x[key], key)
        for ln, us in _names(x.get("units", {}), "units").items():
            _need(ln in lanes, "units lane")
            _need(isinstance(us, list) and all(_is_int(u) for u in us), "units list")
    placed = _names(d["buffers"], "$.buffers")
    _need(set(placed) == set(buffers), "every buffer placed exactly once")
    for x in placed.values():
        _obj(x, {"offset", "alloc", "free"}, {"meta"}, "buffer placement")
        _meta(x, "buffer placement")
        for key in ("offset", "alloc", "free"):
            _int(x[key], key)
    _int(d["makespan"], "makespan")
    _need(isinstance(d.get("meta", {}), dict), "meta")


# ----------------------------------------------------------------------------- rules
def _cells(box: list[list[int]] | list[tuple[int, int]]) -> set[tuple[int, ...]]:
    return set(itertools.product(*(range(lo, hi) for lo, hi in box)))


def _running(op: dict[str, Any], t: int) -> bool:
    return op["start"] <= t < op["end"]


def _share_a_tick(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether half-open ``[a0, a1)`` and ``[b0, b1)`` share a tick: then one of them holds
    the other's first tick."""
    return any(a[0] <= t < a[1] and b[0] <= t < b[1] for t in (a[0], b[0]))


def _volume(doc: dict[str, Any]) -> int:
    """Bytes and cells the rules below expand into sets (an upper bound)."""
    def cells(box: list[list[int]]) -> int:
        n = 1
        for lo, hi in box:
            n *= max(0, hi - lo)
        return n

    p = doc["problem"]
    total = sum(b["size"] for b in p.get("buffers", {}).values())
    total += sum(cells([[0, e] for e in t["shape"]]) for t in p.get("tensors", {}).values())
    for task in p.get("tasks", {}).values():
        total += cells(task.get("space", [])) + sum(
            cells(box) for box in task.get("outputs", {}).values())
    for op in p["ops"].values():
        total += cells(op.get("space", []))
        total += sum(cells(a["box"]) for a in op.get("reads", []) + op.get("writes", [])
                     if "box" in a)
    return total


def reference_codes(doc: Any) -> set[str]:
    """The set of violation codes FORMATS.md demands for ``doc`` (empty: legal)."""
    try:
        _structure(doc)
    except FormatIssue:
        return {"FORMAT"}
    if _volume(doc) > MAX_VOLUME:
        raise TooLarge(f"more than {MAX_VOLUME} bytes and cells to expand")
    codes: set[str] = set()
    target, problem = doc["target"], doc["problem"]
    lanes, budgets = target["lanes"], target.get("budgets", {})
    memories = target.get("memories", {})
    tensors = problem.get("tensors", {})
    tasks = problem.get("tasks", {})
    pbufs = problem.get("buffers", {})
    pops = problem["ops"]

    # OP_MISSING / OP_UNKNOWN
    if set(pops) - set(doc["ops"]):
        codes.add("OP_MISSING")
    if set(doc["ops"]) - set(pops):
        codes.add("OP_UNKNOWN")
    # the ops that take part in the timing rules: scheduled and known
    sched = {n: doc["ops"][n] for n in pops if n in doc["ops"]}
    mode_of: dict[str, dict[str, Any]] = {}
    for n, pl in sched.items():
        modes = pops[n]["modes"]
        if 0 <= pl["mode"] < len(modes):
            mode_of[n] = modes[pl["mode"]]
        else:
            codes.add("MODE")

    # DURATION
    for n, pl in sched.items():
        if pl["start"] < 0:
            codes.add("DURATION")
        if n in mode_of and pl["end"] - pl["start"] < mode_of[n]["duration"]:
            codes.add("DURATION")

    # UNITS
    for n, mode in mode_of.items():
        held = sched[n].get("units", {})
        for lane in set(lanes) | set(held):
            units = held.get(lane, [])
            want = mode.get("lanes", {}).get(lane, 0)
            if len(units) != want or len(set(units)) != len(units) or \
                    not all(0 <= u < lanes[lane] for u in units):
                codes.add("UNITS")

    # LANE_OVERLAP: every pair; only units that exist (others are UNITS')
    def held_units(pl: dict[str, Any]) -> set[tuple[str, int]]:
        return {(ln, u) for ln, us in pl.get("units", {}).items() for u in us
                if 0 <= u < lanes[ln]}

    for (_, pa), (_, pb) in itertools.combinations(sched.items(), 2):
        shared = held_units(pa) & held_units(pb)
        if shared and _share_a_tick((pa["start"], pa["end"]), (pb["start"], pb["end"])):
            codes.add("LANE_OVERLAP")

    # BUDGET: every budget, every instant at which some op starts
    for b, capacity in budgets.items():
        for t in {pl["start"] for pl in sched.values()}:
            total = sum(mode_of[n].get("budgets", {}).get(b, 0)
                        for n in mode_of if _running(sched[n], t))
            if total > capacity:
                codes.add("BUDGET")

    # AFTER
    for pred, succ in problem.get("after", []):
        if pred in sched and succ in sched and sched[succ]["start"] < sched[pred]["end"]:
            codes.add("AFTER")

    # COVERAGE (problem ops, scheduled or not)
    for tn, task in tasks.items():
        if "space" not in task:
            continue
        count: dict[tuple[int, ...], int] = {}
        for op in pops.values():
            if op["task"] == tn and "space" in op:
                if len(op["space"]) != len(task["space"]):
                    codes.add("COVERAGE")
                    continue
                for c in _cells(op["space"]):
                    count[c] = count.get(c, 0) + 1
        space = _cells(task["space"])
        if set(count) != space or any(v != 1 for v in count.values()):
            codes.add("COVERAGE")

    # OUTPUT (problem ops, scheduled or not)
    written: dict[str, dict[tuple[int, ...], int]] = {t: {} for t in tensors}
    for op in pops.values():
        for w in op.get("writes", []):
            if "tensor" in w:
                if tensors[w["tensor"]]["role"] == "input":
                    codes.add("OUTPUT")
                for c in _cells(w["box"]):
                    written[w["tensor"]][c] = written[w["tensor"]].get(c, 0) + 1
    for tn, tensor in tensors.items():
        if tensor["role"] in ("output", "temp"):
            everything = _cells([[0, e] for e in tensor["shape"]])
            if any(written[tn].get(c, 0) != 1 for c in everything):
                codes.add("OUTPUT")
    for tn, task in tasks.items():
        for out, box in task.get("outputs", {}).items():
            count = {}
            for op in pops.values():
                if op["task"] != tn:
                    continue
                for w in op.get("writes", []):
                    if w.get("tensor") == out:
                        for c in _cells(w["box"]):
                            count[c] = count.get(c, 0) + 1
            if any(count.get(c, 0) != 1 for c in _cells(box)):
                codes.add("OUTPUT")

    # DDR_RAW
    for r, pr in sched.items():
        for a in pops[r].get("reads", []):
            if "tensor" not in a or tensors[a["tensor"]]["role"] == "input":
                continue
            region = _cells(a["box"])
            for w, pw in sched.items():
                for b in pops[w].get("writes", []):
                    if b.get("tensor") == a["tensor"] and region & _cells(b["box"]) \
                            and pr["start"] < pw["end"]:
                        codes.add("DDR_RAW")

    # MEM_RANGE / ALIAS / LIFETIME
    place = doc["buffers"]
    for n, buf in pbufs.items():
        mem = memories[buf["memory"]]
        off = place[n]["offset"]
        if off < 0 or off % buf.get("align", 1) or off % mem.get("alignment_bytes", 1) \
                or off + buf["size"] > mem["capacity_bytes"]:
            codes.add("MEM_RANGE")
    for a, b in itertools.combinations(pbufs, 2):
        if pbufs[a]["memory"] != pbufs[b]["memory"]:
            continue
        pa, pb = place[a], place[b]
        bytes_a = set(range(pa["offset"], pa["offset"] + pbufs[a]["size"]))
        bytes_b = set(range(pb["offset"], pb["offset"] + pbufs[b]["size"]))
        if bytes_a & bytes_b and _share_a_tick((pa["alloc"], pa["free"]),
                                               (pb["alloc"], pb["free"])):
            codes.add("ALIAS")
    for n in pbufs:
        if not 0 <= place[n]["alloc"] <= place[n]["free"]:
            codes.add("LIFETIME")
    for o, pl in sched.items():
        if pl["end"] < pl["start"]:
            continue  # an inverted window is empty: it lies inside any lifetime
        for a in pops[o].get("reads", []) + pops[o].get("writes", []):
            if "buffer" in a:
                bp = place[a["buffer"]]
                if not (bp["alloc"] <= pl["start"] and pl["end"] <= bp["free"]):
                    codes.add("LIFETIME")

    # buffer writes: (op, byte set, value, start, end)
    def byte_set(a: dict[str, Any]) -> set[int]:
        lo, hi = a.get("bytes", [0, pbufs[a["buffer"]]["size"]])
        return set(range(lo, hi))

    writes = [(o, a["buffer"], byte_set(a), a.get("value"), pl["start"], pl["end"])
              for o, pl in sched.items() for a in pops[o].get("writes", []) if "buffer" in a]

    # WRITE_RACE: every pair of writes; one op's own pair whatever its window
    for (o1, b1, s1, _, st1, en1), (o2, b2, s2, _, st2, en2) in itertools.combinations(writes, 2):
        if b1 == b2 and s1 & s2 and (o1 == o2 or _share_a_tick((st1, en1), (st2, en2))):
            codes.add("WRITE_RACE")

    # STALE_READ
    for r, pr in sched.items():
        if pr["end"] < pr["start"]:
            continue  # an inverted window reads nothing, so nothing can be stale
        for a in pops[r].get("reads", []):
            if "buffer" not in a:
                continue
            want = byte_set(a)
            # an op's reads never see its own writes
            touching = [w for w in writes if w[1] == a["buffer"] and w[2] & want and w[0] != r]
            done = [w for w in touching if w[5] <= pr["start"]]
            if not done:
                codes.add("STALE_READ")
                continue
            last_end = max(w[5] for w in done)
            last = [w for w in done if w[5] == last_end]
            values = (last[0][3], a.get("value"))
            if len(last) != 1 or not want <= last[0][2] or \
                    None not in values and values[0] != values[1]:
                codes.add("STALE_READ")
                continue
            for w in touching:
                if w[0] != r and (_share_a_tick((w[4], w[5]), (last_end, pr["end"])) or
                                  w[4] == w[5] and pr["start"] < w[4] < pr["end"]):
                    codes.add("STALE_READ")

    # MAKESPAN
    if doc["makespan"] != max([pl["end"] for pl in sched.values()], default=0):
        codes.add("MAKESPAN")
    return codes
