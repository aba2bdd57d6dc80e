"""The hostile families of ``benchmarks/bench_checker_adversarial.py`` at random small
sizes, through the CLI: ``schedcheck`` answers 0, 1 or 2 and never raises (issue 29).

Each family is drawn at 1-40 ops and sometimes damaged (a key dropped or a figure turned
into a string) so the unusable-input path is taken too. How fast the families go is the
benchmark's business, not a test's.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.bench_checker_adversarial import FAMILIES, program
from checker.cli import main
from tests.fuzz._budget import examples


@st.composite
def damaged(draw: st.DrawFn, doc: dict) -> dict:
    """``doc`` as is, or with one object key dropped or one integer made a string."""
    how = draw(st.sampled_from(["none", "drop", "stringify"]), label="damage")
    if how == "none":
        return doc
    sites: list[tuple[dict, str]] = []
    stack: list[object] = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            sites.extend((node, key) for key in node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    parent, key = draw(st.sampled_from(sites), label="site")
    if how == "drop":
        del parent[key]
    elif isinstance(parent[key], int):
        parent[key] = str(parent[key])
    return doc


@settings(max_examples=examples(2))
@given(family=st.sampled_from(sorted(FAMILIES)), n=st.integers(1, 40),
       as_program=st.booleans(), data=st.data())
def test_hostile_families_exit_0_1_or_2(tmp_path_factory, family: str, n: int,
                                        as_program: bool, data: st.DataObject) -> None:
    schedule, waits = FAMILIES[family](n)
    doc = program(schedule, waits) if as_program else schedule
    doc = data.draw(damaged(json.loads(json.dumps(doc))))
    path = Path(tmp_path_factory.mktemp("hostile")) / "doc.json"
    path.write_text(json.dumps(doc), "utf-8")
    command = "verify-program" if as_program else "verify"
    errors, out = io.StringIO(), io.StringIO()
    with redirect_stderr(errors), redirect_stdout(out):
        code = main([command, str(path)])
    assert code in (0, 1, 2)
    assert "INTERNAL" not in errors.getvalue(), errors.getvalue()  # a caught crash
    assert (code == 2) == bool(errors.getvalue())
