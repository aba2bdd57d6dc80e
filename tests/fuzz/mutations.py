"""Mutation operators: one per violation code, each breaking exactly the rule it names.

Each operator takes a schedule document and a ``draw`` function (``data.draw`` of a
Hypothesis ``st.data()``) and returns a new document that certainly violates its rule, or
``None`` when the document offers nothing to break that way (the test then ``assume``s).
The input is never modified.

Most operators edit as little as possible so the mutant breaks only the intended rule,
but some breakages necessarily drag others along (dropping an op leaves its outputs
unwritten); the properties assert that the intended code is *included*, and the
differential property compares the full code sets of two independent checkers.

Operators also work on documents that are already illegal (the differential property
chains up to three of them), so they look only at ops that are both in the problem and
scheduled, and at modes that exist. The FORMAT operator may leave a document that other
operators cannot read, so chains apply it last.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

__all__ = ["MUTATIONS", "NOISE", "Draw", "mutate", "apply_chain"]

Draw = Callable[..., Any]
Doc = dict[str, Any]
#: The largest figure FORMATS.md allows; a mutant must not step past it (that is FORMAT).
MAX_INT = 2**63 - 1


# ----------------------------------------------------------------------------- helpers
def _placed(doc: Doc) -> list[str]:
    """Ops that the problem knows and the schedule places, in a stable order."""
    return sorted(n for n in doc["problem"]["ops"] if n in doc["ops"])


def _mode(doc: Doc, op: str) -> dict[str, Any] | None:
    modes = doc["problem"]["ops"][op]["modes"]
    m = doc["ops"][op]["mode"]
    return modes[m] if isinstance(m, int) and 0 <= m < len(modes) else None


def _window(doc: Doc, op: str) -> tuple[int, int]:
    return doc["ops"][op]["start"], doc["ops"][op]["end"]


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _pick(draw: Draw, items: list[Any], label: str) -> Any:
    return draw(st.sampled_from(items), label=label) if items else None


def _fix_makespan(doc: Doc) -> None:
    """Keep MAKESPAN out of a mutant whose op ends changed (unless it was already wrong)."""
    ends = [p["end"] for n, p in doc["ops"].items() if n in doc["problem"]["ops"]]
    doc["makespan"] = max(ends, default=0)


def _accesses(doc: Doc, op: str, key: str) -> list[dict[str, Any]]:
    return doc["problem"]["ops"][op].setdefault(key, [])


# ----------------------------------------------------------------------------- operators
def break_format(doc: Doc, draw: Draw) -> Doc | None:
    """A structural error: unknown key, wrong tag or type, dangling name, box out of shape."""
    doc = copy.deepcopy(doc)
    p = doc["problem"]
    placed = _placed(doc)
    # An earlier mutation may already have made the makespan a non-number.
    variants = ["unknown key", "format tag", "start type", "lane unknown"]
    if isinstance(doc.get("makespan"), int):
        variants.append("makespan type")
    if p.get("buffers"):
        variants += ["drop buffer placement", "bytes outside"]
    variants += ["extra buffer placement", "unknown buffer", "unknown tensor", "edge to nowhere"]
    tensor_accesses = [a for o in p["ops"].values() for k in ("reads", "writes")
                       for a in o.get(k, []) if a.get("tensor") in p.get("tensors", {})]
    if tensor_accesses:
        variants += ["box outside shape", "box rank"]
    variant = draw(st.sampled_from(variants), label="FORMAT variant")
    op = _pick(draw, placed, "op") or next(iter(p["ops"]))
    if variant == "unknown key":
        where = draw(st.sampled_from(["doc", "target", "problem", "op", "placement"]))
        {"doc": doc, "target": doc["target"], "problem": p, "op": p["ops"][op],
         "placement": doc["ops"].get(op, doc)}[where]["bogus"] = 1
    elif variant == "format tag":
        obj = draw(st.sampled_from([doc, doc["target"], p]))
        obj["format"] = obj["format"].replace("/1", "/2")
    elif variant == "makespan type":
        doc["makespan"] = draw(st.sampled_from([str(doc["makespan"]), float(doc["makespan"]),
                                                None, True]))
    elif variant == "start type":
        doc["ops"][op]["start"] = str(doc["ops"][op]["start"]) if op in doc["ops"] else "0"
        if op not in doc["ops"]:
            doc["ops"][op] = {"mode": 0, "start": "0", "end": 1}
    elif variant == "lane unknown":
        if op in doc["ops"]:
            doc["ops"][op].setdefault("units", {})["NO_SUCH_LANE"] = [0]
        else:
            p["ops"][op]["modes"][0].setdefault("lanes", {})["NO_SUCH_LANE"] = 1
    elif variant == "drop buffer placement":
        doc["buffers"].pop(draw(st.sampled_from(sorted(p["buffers"]))), None)
    elif variant == "bytes outside":
        name = draw(st.sampled_from(sorted(p["buffers"])))
        size = p["buffers"][name]["size"]
        _accesses(doc, op, "reads").append({"buffer": name, "bytes": [0, size + 1],
                                            "value": "x"})
    elif variant == "extra buffer placement":
        doc["buffers"]["no_such_buffer"] = {"offset": 0, "alloc": 0, "free": 0}
    elif variant == "unknown buffer":
        _accesses(doc, op, "reads").append({"buffer": "no_such_buffer", "value": "x"})
    elif variant == "unknown tensor":
        _accesses(doc, op, "reads").append({"tensor": "no_such_tensor", "box": [[0, 1]]})
    elif variant == "edge to nowhere":
        p.setdefault("after", []).append([op, "no_such_op"])
    else:
        access = draw(st.sampled_from(tensor_accesses), label="tensor access")
        shape = p["tensors"][access["tensor"]]["shape"]
        if variant == "box rank":
            access["box"] = access["box"] + [[0, 1]]
        else:
            dim = draw(st.integers(0, len(shape) - 1))
            access["box"][dim] = [access["box"][dim][0], shape[dim] + 1]
    return doc


def break_op_missing(doc: Doc, draw: Draw) -> Doc | None:
    """A problem op that the schedule does not place."""
    placed = _placed(doc)
    if not placed:
        return None
    doc = copy.deepcopy(doc)
    del doc["ops"][draw(st.sampled_from(placed), label="dropped op")]
    return doc


def break_op_unknown(doc: Doc, draw: Draw) -> Doc | None:
    """A placement for an op the problem does not have; it holds nothing and ends early."""
    doc = copy.deepcopy(doc)
    k = draw(st.integers(0, 3), label="ghost")
    doc["ops"][f"ghost.op{k}"] = {"mode": 0, "start": 0, "end": 0, "units": {}}
    return doc


def break_mode(doc: Doc, draw: Draw) -> Doc | None:
    """A mode index outside the op's list of modes (past its end, or negative)."""
    placed = _placed(doc)
    if not placed:
        return None
    doc = copy.deepcopy(doc)
    op = draw(st.sampled_from(placed), label="op")
    n = len(doc["problem"]["ops"][op]["modes"])
    doc["ops"][op]["mode"] = draw(st.sampled_from([n, n + 1, -1, -n]), label="bad mode")
    return doc


def break_duration(doc: Doc, draw: Draw) -> Doc | None:
    """A window shorter than the chosen mode's duration, or one that starts before 0."""
    ops = [o for o in _placed(doc) if _mode(doc, o) is not None]
    if not ops:
        return None
    doc = copy.deepcopy(doc)
    op = draw(st.sampled_from(ops), label="op")
    mode, (start, end) = _mode(doc, op), _window(doc, op)
    assert mode is not None
    variant = draw(st.sampled_from(["longer mode", "shorter window", "negative start"]))
    if variant == "longer mode":
        mode["duration"] = end - start + draw(st.integers(1, 3))
    elif variant == "shorter window" and mode["duration"] > 0 and end - start >= 0:
        doc["ops"][op]["end"] = start + mode["duration"] - draw(
            st.integers(1, mode["duration"]))
        _fix_makespan(doc)
    else:
        doc["ops"][op]["start"] = -draw(st.integers(1, 2))
        if end < 0:
            doc["ops"][op]["end"] = -1
            _fix_makespan(doc)
    return doc


def break_units(doc: Doc, draw: Draw) -> Doc | None:
    """An op holding the wrong number of units, a unit out of range, or a repeated unit."""
    ops = [o for o in _placed(doc) if _mode(doc, o) is not None]
    if not ops:
        return None
    doc = copy.deepcopy(doc)
    lanes = doc["target"]["lanes"]
    op = draw(st.sampled_from(ops), label="op")
    mode = _mode(doc, op)
    assert mode is not None
    units = doc["ops"][op].setdefault("units", {})
    asked = sorted(ln for ln, n in mode.get("lanes", {}).items() if n > 0)
    variants = ["out of range"]
    if asked:
        variants += ["one too few"]
        if any(mode["lanes"][ln] >= 2 for ln in asked):
            variants += ["repeated"]
    variant = draw(st.sampled_from(variants), label="UNITS variant")
    if variant == "one too few":
        lane = draw(st.sampled_from(asked))
        held = list(units.get(lane, []))
        units[lane] = held[:-1] if held else held
        if len(set(units[lane])) == mode["lanes"][lane]:
            return None  # the schedule already held the wrong units; nothing to break
    elif variant == "repeated":
        lane = draw(st.sampled_from([ln for ln in asked if mode["lanes"][ln] >= 2]))
        n = mode["lanes"][lane]
        units[lane] = [units.get(lane, [0])[0] if units.get(lane) else 0] * n
    else:
        lane = draw(st.sampled_from(sorted(lanes)), label="lane")
        units[lane] = list(units.get(lane, [])) + [lanes[lane] + draw(st.integers(0, 1))]
    return doc


def break_lane_overlap(doc: Doc, draw: Draw) -> Doc | None:
    """Two ops running at the same time on the same unit of a lane.

    Either an existing op is moved onto a unit that a time-overlapping op holds, or a new
    op (no accesses, no space) is added on top of an existing one, or two new ops clash.
    """
    placed = [o for o in _placed(doc) if _mode(doc, o) is not None]
    holders = [o for o in placed if any(doc["ops"][o].get("units", {}).values())
               and doc["ops"][o]["end"] > doc["ops"][o]["start"]]
    pairs = [(a, b) for a in holders for b in placed
             if a != b and _overlap(_window(doc, a), _window(doc, b))]
    variants = (["existing pair"] if pairs else []) + (["new op"] if holders else []) + \
        ["two new ops"]
    variant = draw(st.sampled_from(variants), label="LANE_OVERLAP variant")
    doc = copy.deepcopy(doc)
    if variant == "two new ops":
        lane = draw(st.sampled_from(sorted(doc["target"]["lanes"])), label="lane")
        unit = draw(st.integers(0, doc["target"]["lanes"][lane] - 1), label="unit")
        start = draw(st.integers(0, max(0, doc["makespan"] - 1)), label="start")
        for k in range(2):
            _add_op(doc, f"clash.op{k}", start, start + 1, lane, unit)
        if not isinstance(doc["makespan"], int) or doc["makespan"] < start + 1:
            _fix_makespan(doc)
        return doc
    if variant == "new op":
        a = draw(st.sampled_from(holders), label="op")
        lane = draw(st.sampled_from(sorted(ln for ln, us in doc["ops"][a]["units"].items()
                                          if us)))
        unit = draw(st.sampled_from(doc["ops"][a]["units"][lane]))
        start, end = _window(doc, a)
        _add_op(doc, "clash.op0", start, end, lane, unit)
        return doc
    a, b = draw(st.sampled_from(pairs), label="ops")
    lane = draw(st.sampled_from(sorted(ln for ln, us in doc["ops"][a]["units"].items() if us)))
    unit = draw(st.sampled_from(doc["ops"][a]["units"][lane]))
    held = doc["ops"][b].setdefault("units", {}).get(lane, [])
    if unit in held:
        return doc  # already shared
    mode = _mode(doc, b)
    assert mode is not None
    if held and mode.get("lanes", {}).get(lane, 0) == len(held):
        k = draw(st.integers(0, len(held) - 1))
        doc["ops"][b]["units"][lane] = held[:k] + [unit] + held[k + 1:]
    else:
        mode.setdefault("lanes", {})[lane] = len(held) + 1
        doc["ops"][b]["units"][lane] = held + [unit]
    return doc


def _add_op(doc: Doc, name: str, start: int, end: int, lane: str, unit: int) -> None:
    """Add an op to the problem and the schedule: one mode, one unit, no accesses."""
    task = sorted(doc["problem"]["tasks"])[0]
    doc["problem"]["ops"][name] = {"task": task, "modes": [
        {"duration": end - start, "lanes": {lane: 1}}]}
    doc["ops"][name] = {"mode": 0, "start": start, "end": end, "units": {lane: [unit]}}


def break_budget(doc: Doc, draw: Draw) -> Doc | None:
    """Running draws above a budget's capacity: lower the capacity or raise one draw."""
    ops = [o for o in _placed(doc) if _mode(doc, o) is not None
           and doc["ops"][o]["end"] > doc["ops"][o]["start"]]
    budgets = doc["target"].setdefault("budgets", {})
    peaks = {}
    for b in budgets:
        peaks[b] = max([sum(_mode(doc, o).get("budgets", {}).get(b, 0)  # type: ignore[union-attr]
                            for o in ops if _window(doc, o)[0] <= t < _window(doc, o)[1])
                        for t in {_window(doc, o)[0] for o in ops}], default=0)
    variants = []
    if any(peak >= 2 for peak in peaks.values()):
        variants.append("lower capacity")
    if ops:
        variants.append("raise draw")
    if not variants:
        return None
    doc = copy.deepcopy(doc)
    budgets = doc["target"]["budgets"]
    if draw(st.sampled_from(variants), label="BUDGET variant") == "lower capacity":
        b = draw(st.sampled_from(sorted(b for b, peak in peaks.items() if peak >= 2)))
        budgets[b] = draw(st.integers(1, peaks[b] - 1), label="capacity")
        return doc
    op = draw(st.sampled_from(ops), label="op")
    if budgets and draw(st.booleans(), label="existing budget"):
        b = draw(st.sampled_from(sorted(budgets)))
        if budgets[b] >= MAX_INT:  # no draw can exceed it: bring it down to earth first
            budgets[b] = draw(st.integers(1, 5))
    else:
        b = "EXTRA_BW"
        budgets[b] = draw(st.integers(1, 5))
    _mode(doc, op).setdefault("budgets", {})[b] = budgets[b] + 1  # type: ignore[union-attr]
    return doc


def break_after(doc: Doc, draw: Draw) -> Doc | None:
    """An ``after`` edge whose successor starts before its predecessor ends."""
    placed = _placed(doc)
    candidates = [(a, b) for a in placed for b in placed
                  if doc["ops"][b]["start"] < doc["ops"][a]["end"]]
    if not candidates:
        return None
    doc = copy.deepcopy(doc)
    a, b = draw(st.sampled_from(candidates), label="edge")
    if a == b:
        return None  # a self-edge is FORMAT (settled 2026-12-02)
    after = doc["problem"].setdefault("after", [])
    if [b, a] in after and draw(st.booleans(), label="reverse existing"):
        after[after.index([b, a])] = [a, b]
    else:
        after.insert(draw(st.integers(0, len(after))), [a, b])
    return doc


def break_coverage(doc: Doc, draw: Draw) -> Doc | None:
    """Op spaces that leave a gap in, overlap within, or stick out of their task's space."""
    doc = copy.deepcopy(doc)
    p = doc["problem"]
    # only full boxes: shrinking or growing a box with an empty side changes no element
    spaced = sorted(n for n, o in p["ops"].items() if "space" in o
                    and "space" in p["tasks"].get(o["task"], {})
                    and all(hi > lo for lo, hi in o["space"]))
    bare_tasks = sorted(t for t, task in p["tasks"].items() if "space" not in task
                        and not any(o["task"] == t and "space" in o for o in p["ops"].values()))
    wide = [n for n in spaced if any(hi - lo >= 2 for lo, hi in p["ops"][n]["space"])]
    variants = (["grow", "drop space", "duplicate"] if spaced else []) + \
               (["shrink"] if wide else []) + (["new task space"] if bare_tasks else [])
    if not variants:
        return None
    variant = draw(st.sampled_from(variants), label="COVERAGE variant")
    if variant == "new task space":
        task = draw(st.sampled_from(bare_tasks))
        p["tasks"][task]["space"] = [[0, draw(st.integers(1, 3))]]
        return doc
    op = draw(st.sampled_from(wide if variant == "shrink" else spaced), label="op")
    space = p["ops"][op]["space"]
    dims = list(range(len(space)))
    if variant == "shrink":  # a box stays non-empty (lo < hi), or it would be FORMAT
        d = draw(st.sampled_from([d for d in dims if space[d][1] - space[d][0] >= 2]))
        space[d] = [space[d][0], space[d][1] - 1]
    elif variant == "grow":
        d = draw(st.integers(0, len(space) - 1))
        space[d] = [space[d][0], space[d][1] + 1]
    elif variant == "duplicate":
        task = p["ops"][op]["task"]
        others = sorted(n for n, o in p["ops"].items() if o["task"] == task and n != op)
        if not others or not dims:
            return None
        p["ops"][draw(st.sampled_from(others))]["space"] = copy.deepcopy(space)
    else:
        if not dims:
            return None
        del p["ops"][op]["space"]
    return doc


def break_output(doc: Doc, draw: Draw) -> Doc | None:
    """Output/temp elements written twice or never, a task's box uncovered, or an input written."""
    doc = copy.deepcopy(doc)
    p = doc["problem"]
    tensors = p.setdefault("tensors", {})
    writes = [(n, i) for n, o in p["ops"].items() for i, a in enumerate(o.get("writes", []))
              if "tensor" in a and tensors[a["tensor"]]["role"] != "input"
              and all(hi > lo for lo, hi in a["box"])]
    inputs = sorted(t for t, x in tensors.items() if x["role"] == "input")
    variants = ["unwritten tensor"] + (["drop write", "write twice"] if writes else []) + \
               (["write input"] if inputs else []) + ["claim output"]
    variant = draw(st.sampled_from(variants), label="OUTPUT variant")
    ops = sorted(p["ops"])
    if variant == "unwritten tensor":
        tensors["never_written"] = {"shape": [draw(st.integers(1, 2))], "dtype": "f16",
                                    "role": draw(st.sampled_from(["output", "temp"]))}
    elif variant == "drop write":
        op, i = draw(st.sampled_from(writes), label="write")
        del p["ops"][op]["writes"][i]
    elif variant == "write twice":
        op, i = draw(st.sampled_from(writes), label="write")
        access = copy.deepcopy(p["ops"][op]["writes"][i])
        same_task = sorted(n for n in ops if p["ops"][n]["task"] == p["ops"][op]["task"])
        p["ops"][draw(st.sampled_from(same_task))].setdefault("writes", []).append(access)
    elif variant == "write input":
        name = draw(st.sampled_from(inputs))
        box = [[0, 1] for _ in tensors[name]["shape"]]
        if any(n == 0 for n in tensors[name]["shape"]):
            return None
        p["ops"][draw(st.sampled_from(ops))].setdefault("writes", []).append(
            {"tensor": name, "box": box})
    else:
        # a task claims an element that none of its ops writes
        task = draw(st.sampled_from(sorted(p["tasks"])), label="task")
        tensors["claimed"] = {"shape": [1], "dtype": "f16", "role": "temp"}
        other = [n for n in ops if p["ops"][n]["task"] != task]
        if other:  # somebody else writes it, so only the task's claim is broken
            p["ops"][draw(st.sampled_from(other))].setdefault("writes", []).append(
                {"tensor": "claimed", "box": [[0, 1]]})
        p["tasks"][task].setdefault("outputs", {})["claimed"] = [[0, 1]]
    return doc


def break_ddr_raw(doc: Doc, draw: Draw) -> Doc | None:
    """A read of an output/temp region that starts before a write of it has ended.

    Either an existing op gets the read, or a new op (no units, window ``[0, 1)``) reads a
    region that some op writes, or a new temp tensor that some op writes.
    """
    p = doc["problem"]
    placed = _placed(doc)
    produced = [(w, a) for w in placed for a in p["ops"][w].get("writes", [])
                if "tensor" in a and p["tensors"][a["tensor"]]["role"] != "input"
                and all(hi > lo for lo, hi in a["box"]) and doc["ops"][w]["end"] >= 1]
    pairs = [(r, w, a) for w, a in produced for r in placed
             if r != w and doc["ops"][r]["start"] < doc["ops"][w]["end"]]
    writers = [w for w in placed if doc["ops"][w]["end"] >= 1]
    variants = (["existing reader"] if pairs else []) + (["new reader"] if produced else []) \
        + (["new tensor"] if writers else [])
    if not variants:
        return None
    variant = draw(st.sampled_from(variants), label="DDR_RAW variant")
    doc = copy.deepcopy(doc)
    p = doc["problem"]
    if variant == "existing reader":
        r, _, access = draw(st.sampled_from(pairs), label="reader, writer")
    elif variant == "new reader":
        _, access = draw(st.sampled_from(produced), label="write")
        r = _add_reader(doc)
    else:
        w = draw(st.sampled_from(writers), label="writer")
        p.setdefault("tensors", {})["raw_t"] = {"shape": [1], "dtype": "f16", "role": "temp"}
        access = {"tensor": "raw_t", "box": [[0, 1]]}
        _accesses(doc, w, "writes").append(access)
        r = _add_reader(doc)
    box = [[lo, draw(st.integers(lo + 1, hi))] for lo, hi in access["box"]]
    _accesses(doc, r, "reads").append({"tensor": access["tensor"], "box": box})
    return doc


def _add_reader(doc: Doc) -> str:
    """A new op without units or accesses, running over ``[0, 1)``."""
    task = sorted(doc["problem"]["tasks"])[0]
    doc["problem"]["ops"]["raw.op0"] = {"task": task, "modes": [{"duration": 1}]}
    doc["ops"]["raw.op0"] = {"mode": 0, "start": 0, "end": 1, "units": {}}
    return "raw.op0"


def break_mem_range(doc: Doc, draw: Draw) -> Doc | None:
    """A buffer placed past its memory's capacity or at a misaligned offset."""
    bufs = doc["problem"].get("buffers", {})
    if not bufs:
        return None
    doc = copy.deepcopy(doc)
    bufs = doc["problem"]["buffers"]
    mems = doc["target"]["memories"]
    name = draw(st.sampled_from(sorted(bufs)), label="buffer")
    buf, place = bufs[name], doc["buffers"][name]
    mem = mems[buf["memory"]]
    step = math.lcm(buf.get("align", 1), mem.get("alignment_bytes", 1))
    past = -(-mem["capacity_bytes"] // step) * step
    variants = ["capacity lowered"] + (["past capacity"] if past + step <= MAX_INT else [])
    if place["offset"] > 0:
        variants += ["buffer misaligned", "memory misaligned"]
    variant = draw(st.sampled_from(variants), label="MEM_RANGE variant")
    if variant == "past capacity":
        # at or above the capacity no legal buffer lives, so no ALIAS comes along
        place["offset"] = past + step * draw(st.integers(0, 1))
    elif variant == "capacity lowered":
        top = place["offset"] + buf["size"]
        if top < 2:
            return None
        mem["capacity_bytes"] = top - draw(st.integers(1, top - 1))
    elif variant == "buffer misaligned":
        buf["align"] = place["offset"] + draw(st.integers(1, 3))
    else:
        mem["alignment_bytes"] = place["offset"] + draw(st.integers(1, 3))
    return doc


def break_alias(doc: Doc, draw: Draw) -> Doc | None:
    """Two buffers of one memory sharing bytes while both are live."""
    bufs = doc["problem"].get("buffers", {})
    if not bufs:
        return None
    doc = copy.deepcopy(doc)
    p, place = doc["problem"], doc["buffers"]
    bufs = p["buffers"]
    a = draw(st.sampled_from(sorted(bufs)), label="buffer")
    partners = sorted(b for b in bufs if b != a and bufs[b]["memory"] == bufs[a]["memory"]
                      and place[b]["alloc"] < place[b]["free"])
    if place[a]["alloc"] >= place[a]["free"]:
        return None
    if partners and draw(st.booleans(), label="existing partner"):
        b = draw(st.sampled_from(partners), label="partner")
    else:  # a new, never accessed buffer laid over `a`
        b = "alias_of_" + a
        bufs[b] = {"memory": bufs[a]["memory"], "size": draw(st.integers(1, bufs[a]["size"]))}
        place[b] = dict(place[a])
    # same address, aligned for both; live windows made to intersect
    bufs[b]["align"] = bufs[a].get("align", 1)
    place[b]["offset"] = place[a]["offset"]
    mem = doc["target"]["memories"][bufs[a]["memory"]]
    mem["capacity_bytes"] = max(mem["capacity_bytes"], place[b]["offset"] + bufs[b]["size"])
    if not (place[a]["alloc"] < place[b]["free"] and place[b]["alloc"] < place[a]["free"]):
        place[b]["alloc"] = min(place[a]["alloc"], place[b]["alloc"])
        place[b]["free"] = max(place[a]["free"], place[b]["free"])
    return doc


def break_lifetime(doc: Doc, draw: Draw) -> Doc | None:
    """A buffer allocated after, or freed before, one of its accesses, or with free < alloc."""
    p = doc["problem"]
    accessed: dict[str, list[str]] = {}
    for o in _placed(doc):
        for a in p["ops"][o].get("reads", []) + p["ops"][o].get("writes", []):
            if "buffer" in a:
                accessed.setdefault(a["buffer"], []).append(o)
    variants = (["late alloc", "early free"] if accessed else []) + \
               (["free before alloc"] if p.get("buffers") else [])
    if not variants:
        return None
    doc = copy.deepcopy(doc)
    variant = draw(st.sampled_from(variants), label="LIFETIME variant")
    if variant == "free before alloc":
        name = draw(st.sampled_from(sorted(p["buffers"])), label="buffer")
        place = doc["buffers"][name]
        place["alloc"] = max(place["alloc"], 0) + draw(st.integers(1, 2))
        place["free"] = place["alloc"] - draw(st.integers(1, place["alloc"]))
        return doc
    name = draw(st.sampled_from(sorted(accessed)), label="buffer")
    place = doc["buffers"][name]
    op = draw(st.sampled_from(accessed[name]), label="access")
    start, end = _window(doc, op)
    if variant == "late alloc":
        place["alloc"] = max(place["alloc"], start + 1)
        place["free"] = max(place["free"], place["alloc"])
    else:
        place["free"] = min(place["free"], end - 1)
        place["alloc"] = max(0, min(place["alloc"], place["free"]))
    return doc


def break_stale_read(doc: Doc, draw: Draw) -> Doc | None:
    """A read expecting a value other than the one its bytes hold when it starts (values
    are compared only where both sides have one, so only tagged reads of buffers whose
    writes are all tagged qualify)."""
    p = doc["problem"]
    untagged = {a["buffer"] for o in p["ops"].values() for a in o.get("writes", [])
                if "buffer" in a and "value" not in a}
    reads = [(o, i) for o in _placed(doc) for i, a in enumerate(p["ops"][o].get("reads", []))
             if "buffer" in a and "value" in a and a["buffer"] not in untagged]
    if not reads:
        return None
    doc = copy.deepcopy(doc)
    op, i = draw(st.sampled_from(reads), label="read")
    access = doc["problem"]["ops"][op]["reads"][i]
    variants = ["read tag"]
    writers = [(w, j) for w in _placed(doc)
               for j, a in enumerate(doc["problem"]["ops"][w].get("writes", []))
               if a.get("buffer") == access["buffer"] and a.get("value") == access.get("value")]
    if writers:
        variants.append("write tag")
    if draw(st.sampled_from(variants), label="STALE_READ variant") == "read tag":
        access["value"] = f"{access.get('value')}~stale"
    else:
        for w, j in writers:  # every write of that tag: the read sees another tag
            doc["problem"]["ops"][w]["writes"][j]["value"] += "~other"
    return doc


def break_write_race(doc: Doc, draw: Draw) -> Doc | None:
    """Two ops writing intersecting bytes of one buffer at overlapping times."""
    p = doc["problem"]
    placed = _placed(doc)
    pairs = [(a, i, c) for a in placed for i, acc in enumerate(p["ops"][a].get("writes", []))
             if "buffer" in acc for c in placed
             if c != a and _overlap(_window(doc, a), _window(doc, c))]
    if not pairs:
        return None
    doc = copy.deepcopy(doc)
    a, i, c = draw(st.sampled_from(pairs), label="writer, racer")
    access = copy.deepcopy(doc["problem"]["ops"][a]["writes"][i])
    access["value"] = f"{access.get('value', 'v')}~race"
    _accesses(doc, c, "writes").append(access)
    return doc


def break_makespan(doc: Doc, draw: Draw) -> Doc | None:
    """A declared makespan other than the largest op end."""
    doc = copy.deepcopy(doc)
    ends = [p["end"] for n, p in doc["ops"].items() if n in doc["problem"]["ops"]]
    true = max(ends, default=0)
    doc["makespan"] = true + draw(st.sampled_from([1, 2, 100, -1]), label="makespan delta")
    return doc


MUTATIONS: dict[str, Callable[[Doc, Draw], Doc | None]] = {
    "FORMAT": break_format, "OP_MISSING": break_op_missing, "OP_UNKNOWN": break_op_unknown,
    "MODE": break_mode, "DURATION": break_duration, "UNITS": break_units,
    "LANE_OVERLAP": break_lane_overlap, "BUDGET": break_budget, "AFTER": break_after,
    "COVERAGE": break_coverage, "OUTPUT": break_output, "DDR_RAW": break_ddr_raw,
    "MEM_RANGE": break_mem_range, "ALIAS": break_alias, "LIFETIME": break_lifetime,
    "STALE_READ": break_stale_read, "WRITE_RACE": break_write_race,
    "MAKESPAN": break_makespan,
}


# ----------------------------------------------------------------------------- noise
# Small random edits that are not aimed at one rule. They land documents on the borders
# between legal and illegal (touching windows, shared last ticks, near-miss tags), where
# two readings of FORMATS.md are most likely to part; only the differential property
# uses them, since which codes they cause is for the reference checker to say.
def nudge_op(doc: Doc, draw: Draw) -> Doc | None:
    """Shift an op's window by a tick or two, or stretch its end (down to zero length)."""
    placed = _placed(doc)
    if not placed:
        return None
    doc = copy.deepcopy(doc)
    op = draw(st.sampled_from(placed), label="nudged op")
    d = draw(st.sampled_from([-2, -1, 1, 2]), label="ticks")
    place = doc["ops"][op]
    if draw(st.booleans(), label="shift (else stretch)"):
        place["start"] += d
        place["end"] += d
    elif place["end"] + d >= place["start"]:
        place["end"] += d
    if draw(st.booleans(), label="fix makespan"):
        _fix_makespan(doc)
    return doc


def nudge_buffer(doc: Doc, draw: Draw) -> Doc | None:
    """Move a buffer's offset by an alignment step, or its alloc/free by a tick."""
    bufs = doc["problem"].get("buffers", {})
    if not bufs:
        return None
    doc = copy.deepcopy(doc)
    name = draw(st.sampled_from(sorted(bufs)), label="nudged buffer")
    place = doc["buffers"][name]
    what = draw(st.sampled_from(["offset", "alloc", "free"]), label="field")
    if what == "offset":
        buf = bufs[name]
        mem = doc["target"]["memories"][buf["memory"]]
        step = math.lcm(buf.get("align", 1), mem.get("alignment_bytes", 1))
        if draw(st.booleans(), label="by one byte"):
            step = 1
        place["offset"] = max(0, place["offset"] + draw(st.sampled_from([-step, step])))
    else:
        place[what] += draw(st.sampled_from([-1, 1]), label="tick")
        if place["alloc"] > place["free"]:
            return None  # inverted windows have their own LIFETIME operator
    return doc


def random_buffer_access(doc: Doc, draw: Draw) -> Doc | None:
    """Add a read or write of a non-empty byte range, tagged with a tag the buffer has seen."""
    bufs = doc["problem"].get("buffers", {})
    placed = _placed(doc)
    if not bufs or not placed:
        return None
    doc = copy.deepcopy(doc)
    name = draw(st.sampled_from(sorted(bufs)), label="buffer")
    size = bufs[name]["size"]
    lo = draw(st.integers(0, size - 1), label="lo")
    hi = draw(st.integers(lo + 1, size), label="hi")
    tags = sorted({a["value"] for o in doc["problem"]["ops"].values()
                   for k in ("reads", "writes") for a in o.get(k, [])
                   if a.get("buffer") == name and "value" in a}) or ["fresh"]
    access: dict[str, Any] = {"buffer": name, "value": draw(st.sampled_from(tags), label="tag")}
    if (lo, hi) != (0, size) or draw(st.booleans(), label="explicit bytes"):
        access["bytes"] = [lo, hi]
    kind = draw(st.sampled_from(["reads", "writes"]), label="kind")
    op = draw(st.sampled_from(placed), label="op")
    _accesses(doc, op, kind).append(access)
    return doc


def retag(doc: Doc, draw: Draw) -> Doc | None:
    """Give a buffer access the tag of another access to the same buffer."""
    p = doc["problem"]
    accesses = [(o, k, i) for o in sorted(p["ops"]) for k in ("reads", "writes")
                for i, a in enumerate(p["ops"][o].get(k, [])) if "buffer" in a]
    if not accesses:
        return None
    doc = copy.deepcopy(doc)
    o, k, i = draw(st.sampled_from(accesses), label="access")
    access = doc["problem"]["ops"][o][k][i]
    tags = sorted({a["value"] for op in doc["problem"]["ops"].values()
                   for kk in ("reads", "writes") for a in op.get(kk, [])
                   if a.get("buffer") == access["buffer"] and "value" in a})
    access["value"] = draw(st.sampled_from(tags), label="tag")
    return doc


def reassign_units(doc: Doc, draw: Draw) -> Doc | None:
    """Give an op a different set of in-range units of the same size for one lane."""
    placed = [o for o in _placed(doc) if any(doc["ops"][o].get("units", {}).values())]
    if not placed:
        return None
    doc = copy.deepcopy(doc)
    op = draw(st.sampled_from(placed), label="op")
    units = doc["ops"][op]["units"]
    lane = draw(st.sampled_from(sorted(ln for ln, us in units.items() if us)), label="lane")
    count = doc["target"]["lanes"][lane]
    n = len(units[lane])
    if n > count:
        return None
    units[lane] = sorted(draw(st.permutations(list(range(count))), label="units")[:n])
    return doc


def random_tensor_access(doc: Doc, draw: Draw) -> Doc | None:
    """Add a read, or a write, of a random non-empty box of a random tensor."""
    tensors = doc["problem"].get("tensors", {})
    placed = _placed(doc)
    shaped = sorted(t for t, x in tensors.items() if all(n > 0 for n in x["shape"]))
    if not shaped or not placed:
        return None
    doc = copy.deepcopy(doc)
    name = draw(st.sampled_from(shaped), label="tensor")
    box = []
    for n in tensors[name]["shape"]:
        lo = draw(st.integers(0, n - 1))
        box.append([lo, draw(st.integers(lo + 1, n))])
    kind = draw(st.sampled_from(["reads", "writes"]), label="kind")
    _accesses(doc, draw(st.sampled_from(placed), label="op"), kind).append(
        {"tensor": name, "box": box})
    return doc


#: Integers where minimums and orders are decided: FORMAT below a minimum, MODE, UNITS,
#: MEM_RANGE, DURATION and LIFETIME at -1, empty windows at 0, the top of the 64-bit range.
BOUNDARY_VALUES = (0, 1, -1, 2**63 - 1)
#: Free-form objects whose content no rule reads.
_FREE = ("meta", "params", "costs")


def _integer_sites(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every integer of a document outside its free-form objects."""
    if type(value) is int:
        return [path]
    if isinstance(value, dict):
        return [site for key, item in value.items() if key not in _FREE
                for site in _integer_sites(item, (*path, key))]
    if isinstance(value, list):
        return [site for i, item in enumerate(value) for site in _integer_sites(item, (*path, i))]
    return []


def boundary_value(doc: Doc, draw: Draw) -> Doc | None:
    """Set one figure of the document (a time, size, count, index, box or byte bound) to
    0, 1, -1 or 2**63 - 1."""
    sites = _integer_sites(doc)
    if not sites:
        return None
    doc = copy.deepcopy(doc)
    path = draw(st.sampled_from(sites), label="figure")
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = draw(st.sampled_from(BOUNDARY_VALUES), label="boundary value")
    return doc


NOISE: dict[str, Callable[[Doc, Draw], Doc | None]] = {
    "nudge_op": nudge_op, "nudge_buffer": nudge_buffer,
    "random_buffer_access": random_buffer_access, "retag": retag,
    "reassign_units": reassign_units, "random_tensor_access": random_tensor_access,
    "boundary_value": boundary_value,
}


def mutate(code: str, doc: Doc, draw: Draw) -> Doc | None:
    """Apply the operator for ``code`` (see :data:`MUTATIONS` and :data:`NOISE`)."""
    return {**MUTATIONS, **NOISE}[code](doc, draw)


def apply_chain(doc: Doc, codes: list[str], draw: Draw) -> tuple[Doc, list[str]]:
    """Apply operators in order (FORMAT last); return the mutant and the codes applied."""
    applied = []
    for code in sorted(codes, key=lambda c: c == "FORMAT"):
        mutant = mutate(code, doc, draw)
        if mutant is not None:
            doc = mutant
            applied.append(code)
    return doc, applied
