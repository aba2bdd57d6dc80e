"""Programs the tests share: a lowered document from a schedule document, and mutations."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from checker.program import PROGRAM_CODES, verify_program
from models.formats import schedule_from_dict
from schedsearch.program import lower_report, program_to_dict


def lowered(schedule_doc: dict[str, Any]) -> dict[str, Any]:
    """The program document of a schedule document, through JSON (as a file would be)."""
    program = lower_report(schedule_from_dict(schedule_doc)).program
    return json.loads(json.dumps(program_to_dict(program)))


def program_codes(doc: dict[str, Any]) -> set[str]:
    """The program codes ``verify-program`` reports (schedule codes left out)."""
    return verify_program(doc).codes() & set(PROGRAM_CODES)


def edges(doc: dict[str, Any]) -> list[tuple[str, str]]:
    queues = [(q[i], q[i + 1]) for q in doc["queues"].values() for i in range(len(q) - 1)]
    return queues + [(p, op) for op, preds in doc["waits"].items() for p in preds]


@st.composite
def mutated(draw: st.DrawFn, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``doc`` with one mutation: drop a wait, swap two entries of a queue, close a cycle
    (the first op of an order waits for the second), or add a wait between two ops."""
    doc = copy.deepcopy(doc)
    ops = list(doc["schedule"]["ops"])
    kinds = ["add"]
    if any(doc["waits"].values()):
        kinds.append("drop")
    if any(len(q) > 1 for q in doc["queues"].values()):
        kinds.append("swap")
    if edges(doc):
        kinds.append("cycle")
    kind = draw(st.sampled_from(kinds), label="mutation")
    if kind == "drop":
        op = draw(st.sampled_from(sorted(o for o, p in doc["waits"].items() if p)))
        doc["waits"][op].remove(draw(st.sampled_from(doc["waits"][op])))
    elif kind == "swap":
        name = draw(st.sampled_from(sorted(n for n, q in doc["queues"].items() if len(q) > 1)))
        queue = doc["queues"][name]
        i = draw(st.integers(0, len(queue) - 2))
        j = draw(st.integers(i + 1, len(queue) - 1))
        queue[i], queue[j] = queue[j], queue[i]
    elif kind == "cycle":
        a, b = draw(st.sampled_from(edges(doc)))
        doc["waits"].setdefault(a, []).append(b)
    else:
        a = draw(st.sampled_from(ops))
        b = draw(st.sampled_from([o for o in ops if o != a] or [a]))
        if a != b and a not in doc["waits"].get(b, []):
            doc["waits"].setdefault(b, []).append(a)
    return doc, kind
