"""Lowering: every searched schedule of a bundled example becomes a legal program, and each
wait the reduction kept is needed (dropping it breaks the order it guards). The examples
are those of :data:`tests.program.examples.EXAMPLES` (two larger twins left out)."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.program import verify_program
from schedsearch.cli import main
from schedsearch.program import program_to_dict
from schedsearch.program.lower import schedule_queues
from tests.fuzz._budget import examples

from .examples import EXAMPLES, searched


def document(name: str) -> dict:
    return json.loads(json.dumps(program_to_dict(searched(name)[1].program)))


@pytest.mark.parametrize("name", EXAMPLES)
def test_searched_schedule_lowers_to_a_legal_program(name: str) -> None:
    schedule_doc, lowering = searched(name)
    doc = document(name)
    report = verify_program(doc)
    assert report.legal, report.violations[:3]
    assert doc["schedule"] == schedule_doc
    assert lowering.waits_after == sum(len(p) for p in doc["waits"].values())
    assert lowering.waits_after <= lowering.waits_before <= lowering.needed
    assert lowering.needed == lowering.implied_by_queues + lowering.waits_before


@pytest.mark.parametrize("name", EXAMPLES)
def test_queues_hold_each_units_ops_in_order_of_start(name: str) -> None:
    program = searched(name)[1].program
    schedule = program.schedule
    for queue, ops in schedule_queues(schedule).items():
        kind, unit = queue.rsplit(".", 1)
        assert set(ops) == {n for n, p in schedule.ops.items()
                            if int(unit) in p.units.get(kind, ())}
        starts = [schedule.ops[op].start for op in ops]
        assert starts == sorted(starts)


@settings(max_examples=examples(0.2))
@given(st.data())
def test_dropping_a_kept_wait_breaks_the_order_it_guards(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(EXAMPLES), label="example")
    guards = searched(name)[1].guards
    (before, after), codes = data.draw(st.sampled_from(sorted(guards.items())), label="wait")
    doc = document(name)
    doc["waits"][after].remove(before)
    report = verify_program(doc)
    assert report.codes() & set(codes), (before, after, codes, report.codes())
    assert any(v.code in codes for v in report.violations)


def test_lower_cli_prints_the_counts(tmp_path, capsys) -> None:
    schedule_doc, lowering = searched("rmsnorm-gemm-chain-v75")
    source = tmp_path / "s.json"
    source.write_text(json.dumps(schedule_doc))
    out = tmp_path / "p.json"
    assert main(["lower", str(source), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"needed orders: {lowering.needed} " in text
    assert f"waits: {lowering.waits_before} before reduction, {lowering.waits_after} after" \
        in text
    assert verify_program(json.loads(out.read_text())).legal


def test_lower_cli_refuses_a_bad_schedule_with_exit_2(tmp_path, capsys) -> None:
    schedule_doc, _ = searched("rmsnorm-gemm-chain-v75")
    bad = copy.deepcopy(schedule_doc)
    bad["ops"]["nobody"] = bad["ops"].pop(next(iter(bad["ops"])))
    source = tmp_path / "s.json"
    source.write_text(json.dumps(bad))
    assert main(["lower", str(source), "-o", str(tmp_path / "p.json")]) == 2
    assert "error" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()
