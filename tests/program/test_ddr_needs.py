"""ORDER_DDR's sweep against every pair: the needs it finds are exactly the (write, read)
pairs of different ops whose boxes of an output or temp tensor intersect, whatever the
dimension the tiles are cut along."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from checker.load import build_model
from checker.rules.program_orders import ddr_needs

from .cases import schedule_doc

SHAPE = [6, 5, 4]


@st.composite
def boxes(draw: st.DrawFn, rank: int) -> list[list[int]]:
    out = []
    for extent in SHAPE[:rank]:
        lo = draw(st.integers(0, extent - 1))
        out.append([lo, draw(st.integers(lo + 1, extent))])
    return out


@st.composite
def tensor_accesses(draw: st.DrawFn) -> dict:
    rank = draw(st.integers(0, 3))
    role = draw(st.sampled_from(["temp", "output", "input"]))
    access = st.builds(lambda box: {"tensor": "T", "box": box}, boxes(rank))
    ops = {}
    for i in range(draw(st.integers(1, 8))):
        reads = draw(st.lists(access, max_size=2))
        writes = draw(st.lists(access, max_size=2))
        ops[f"o{i}"] = (None, i, i + 1, reads, writes)
    return schedule_doc(ops, tensors={"T": (SHAPE[:rank], role)})


def _meet(a: list[list[int]], b: list[list[int]]) -> bool:
    return all(alo < bhi and blo < ahi for (alo, ahi), (blo, bhi) in zip(a, b, strict=True))


@given(tensor_accesses())
def test_ddr_needs_are_every_intersecting_write_read_pair(doc: dict) -> None:
    model, faults = build_model(doc)
    assert not faults
    ops = doc["problem"]["ops"]
    expected = set()
    if doc["problem"]["tensors"]["T"]["role"] != "input":
        expected = {(w_name, r_name) for w_name, w in ops.items() for r_name, r in ops.items()
                    if w_name != r_name
                    for x in w.get("writes", []) for y in r.get("reads", [])
                    if _meet(x["box"], y["box"])}
    assert {(n.before, n.after) for n in ddr_needs(model)} == expected
