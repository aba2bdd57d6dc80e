"""The search through the checker: what ``schedsearch.solve`` returns is legal.

Why these instances: each one comes with a legal schedule built by tests/fuzz/strategies.py,
so it is feasible by witness, and a refusal is as much a finding as an illegal answer.
With ``granularity="task"`` the witness also keeps a barrier between consecutive tasks,
so the task-level search has a feasible answer too. Both checkers judge every answer.

Problems stay small (<= 8 ops) and the time limit short; the CI profile runs a few
examples per granularity and seed, the long profile scales them up (tests/fuzz/_budget.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

from models.errors import InputError
from models.formats import problem_from_dict, schedule_to_dict, target_from_dict
from schedsearch import solve

from ._budget import examples
from ._real import dump, real_codes, real_report_text
from .reference_checker import reference_codes
from .strategies import feasible_instances

TIME_LIMIT = 1.0


def _solve(doc: dict[str, Any], granularity: str, seed: int) -> dict[str, Any]:
    target = target_from_dict(copy.deepcopy(doc["target"]))
    problem = problem_from_dict(copy.deepcopy(doc["problem"]), target=target)
    schedule = solve(problem, target, time_limit=TIME_LIMIT, seed=seed, workers=1,
                     granularity=granularity)
    return schedule_to_dict(schedule)


def _judge(witness: dict[str, Any], answer: dict[str, Any]) -> None:
    note(f"answer: {dump(answer)}")
    _assert_legal(witness, answer)
    ours, theirs = answer["makespan"], witness["makespan"]
    event("makespan vs witness: " + ("better" if ours < theirs else "same" if ours == theirs
                                     else "worse"))


def _assert_legal(witness: dict[str, Any], answer: dict[str, Any]) -> None:
    assert real_codes(answer) == set(), real_report_text(answer)
    assert reference_codes(answer) == set()
    assert answer["problem"]["ops"].keys() == witness["problem"]["ops"].keys()


@pytest.mark.parametrize("granularity", ["tile", "task"])
@settings(max_examples=examples(0.12, minimum=3))
@given(data=st.data(), seed=st.integers(0, 3))
def test_search_answers_are_legal(granularity: str, data: st.DataObject, seed: int) -> None:
    witness = data.draw(feasible_instances(max_ops=8, task_barriers=granularity == "task"),
                        label="witness")
    note(f"witness: {dump(witness)}")
    _judge(witness, _solve(witness, granularity, seed))


@settings(max_examples=examples(0.12, minimum=3))
@given(witness=feasible_instances(max_ops=8), seed=st.integers(0, 3))
def test_task_granularity_answers_or_names_a_cycle(witness: dict[str, Any], seed: int) -> None:
    """Without a task-ordered witness, the task-level search may refuse (rule CYCLE: the
    tasks' dependencies may really be circular), but anything it returns is legal."""
    note(f"witness: {dump(witness)}")
    try:
        answer = _solve(witness, "task", seed)
    except InputError as error:
        assert error.rule == "CYCLE" and "granularity=task" in error.message, str(error)
        event("refused: the tasks' dependencies are circular")
        return
    _judge(witness, answer)


def _pinned(witness: dict[str, Any], granularity: str = "tile") -> None:
    assert reference_codes(witness) == set() and real_codes(witness) == set(), "not a witness"
    _assert_legal(witness, _solve(witness, granularity, 0))


def test_search_orders_writes_against_the_value_flow() -> None:
    """Found by fuzzing, shrunk by hand. ``clobber`` must follow ``use`` (it overwrites the
    ``x1`` that ``use`` reads), and ``load_y`` must precede ``use`` (RAW on ``y0``), so
    ``clobber``'s unread ``y1`` must come after ``load_y``'s ``y0``: the order
    load_x, load_y, use, clobber is legal (the witness); the search orders the two writes
    to ``y`` the other way round and reported a dependency cycle."""
    _pinned(_WAW_CYCLE_WITNESS)


def test_search_places_two_tiny_buffers_in_the_wrong_order() -> None:
    """Found by fuzzing, shrunk by Hypothesis: one op writes two 1-byte buffers, one of
    them 2-aligned, in a 2-byte memory; offsets 0 (the aligned one) and 1 fit. The search
    placed the 1-byte one first and reported FIT."""
    _pinned(_ALIGN_FIT_WITNESS)


def test_search_ignores_a_mode_that_cannot_fit() -> None:
    """Found by fuzzing: mode 1 draws 2 of a budget of 1; mode 0 fits, so the problem is
    feasible (the schedule below is a witness) and FORMATS.md does not forbid such a mode."""
    _pinned(_UNFIT_MODE_WITNESS)


def test_search_finds_the_one_packing_first_fit_cannot_foresee() -> None:
    """Found by fuzzing: VTCM holds 7 bytes aligned to 2, and ``b1``, ``b2``, ``b3``
    (2, 3 and 2 bytes) are alive together during ``t0.op4``: they fit only with ``b2``
    at offset 4 and the others at 0 and 2. Every list-scheduling pass put ``b2`` first at
    offset 0 and stalled, and the search reported FIT; the exact last resort (CP-SAT on
    the whole problem) finds the packing."""
    _pinned(_FIRST_FIT_PACKING_WITNESS)


_FIRST_FIT_PACKING_WITNESS: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {"format": "npu-target/1", "name": "fuzz", "time_unit": "ns",
               "lanes": {"DMA": 3, "HVX": 1}, "budgets": {"DDR_BW": 1},
               "memories": {"VTCM": {"capacity_bytes": 7, "alignment_bytes": 2},
                            "L2": {"capacity_bytes": 1, "alignment_bytes": 1}},
               "costs": {}},
    "problem": {
        "format": "npu-problem/1", "name": "fuzz", "tensors": {},
        "tasks": {"t0": {"kind": "gemm", "space": [[0, 2], [0, 2]]},
                  "t1": {"kind": "gemm", "space": [[0, 1], [0, 3]]}},
        "buffers": {"b0": {"memory": "L2", "size": 1, "align": 1},
                    "b1": {"memory": "VTCM", "size": 2, "align": 1},
                    "b2": {"memory": "VTCM", "size": 3, "align": 1},
                    "b3": {"memory": "VTCM", "size": 2, "align": 1}},
        "ops": {
            "t0.op0": {"task": "t0", "space": [[0, 1], [0, 1]],
                       "modes": [{"duration": 1}, {"duration": 1}, {"duration": 1}],
                       "writes": [{"buffer": "b0", "value": "b0.s0@0"},
                                  {"buffer": "b2", "bytes": [0, 1], "value": "b2.s0@0"},
                                  {"buffer": "b2", "bytes": [1, 3], "value": "b2.s1@0"}]},
            "t0.op1": {"task": "t0", "space": [[0, 1], [1, 2]], "modes": [{"duration": 1}],
                       "writes": [{"buffer": "b1", "bytes": [0, 1], "value": "b1.s0@0"}]},
            "t0.op2": {"task": "t0", "space": [[1, 2], [0, 1]], "modes": [{"duration": 1}]},
            "t0.op3": {"task": "t0", "space": [[1, 2], [1, 2]], "modes": [{"duration": 1}]},
            "t0.op4": {"task": "t0",
                       "modes": [{"duration": 1, "lanes": {"DMA": 1}}, {"duration": 1}],
                       "reads": [{"buffer": "b1", "bytes": [0, 1], "value": "b1.s0@0"}],
                       "writes": [{"buffer": "b2", "bytes": [1, 3], "value": "b2.s1@1"},
                                  {"buffer": "b3", "value": "b3.s0@0"}]},
            "t1.op0": {"task": "t1", "space": [[0, 1], [0, 1]], "modes": [{"duration": 1}]},
            "t1.op1": {"task": "t1", "space": [[0, 1], [1, 2]], "modes": [{"duration": 1}]},
            "t1.op2": {"task": "t1", "space": [[0, 1], [2, 3]],
                       "modes": [{"duration": 2, "lanes": {"DMA": 1}}]}},
        "after": [["t0.op1", "t1.op2"], ["t0.op0", "t0.op4"]]},
    "ops": {"t0.op0": {"mode": 0, "start": 0, "end": 1, "units": {}},
            "t0.op1": {"mode": 0, "start": 0, "end": 1, "units": {}},
            "t0.op2": {"mode": 0, "start": 0, "end": 1, "units": {}},
            "t0.op3": {"mode": 0, "start": 0, "end": 1, "units": {}},
            "t0.op4": {"mode": 0, "start": 1, "end": 2, "units": {"DMA": [0]}},
            "t1.op0": {"mode": 0, "start": 0, "end": 1, "units": {}},
            "t1.op1": {"mode": 0, "start": 0, "end": 1, "units": {}},
            "t1.op2": {"mode": 0, "start": 1, "end": 3, "units": {"DMA": [1]}}},
    "buffers": {"b0": {"offset": 0, "alloc": 0, "free": 1},
                "b1": {"offset": 2, "alloc": 0, "free": 2},
                "b2": {"offset": 4, "alloc": 0, "free": 2},
                "b3": {"offset": 0, "alloc": 1, "free": 2}},
    "makespan": 3}

def test_search_orders_writers_knowing_the_other_buffers_war_edges() -> None:
    """Found by fuzzing (long profile), shrunk: the witness runs t1.op1, then t0.op0 and
    t1.op0, then t0.op1. With b2 ordered first, no order of b3's writers was left that
    closed no cycle, and the search reported one (t0.op0 -> t0.op1 -> t1.op1); now b3
    is ordered first on the second attempt."""
    _pinned(_WAR_ACROSS_BUFFERS_WITNESS)


def test_search_settles_writer_orders_across_buffers_when_one_at_a_time_fails() -> None:
    """Found by the long profile, shrunk: t1.op0 reads b3@0, which t1.op3 overwrites, so
    it precedes t1.op3; it also writes b2, so it may not fall between t0.op1's b2@1 and
    its reader t1.op3: it precedes t0.op1 too (the witness). Ordered one buffer at a
    time, b2 alone let t1.op0 follow t1.op3 and b3 alone let t0.op1 precede t1.op1 (and
    so t1.op0), each order boxing in the other buffer, and the search reported a cycle;
    now the orders those overwrites force across buffers are added first when that
    happens."""
    _pinned(_ACROSS_BUFFERS_SETTLED_WITNESS)


def test_task_search_orders_writers_within_a_task_first() -> None:
    """Found by fuzzing (a task-ordered witness, so feasible with barriers), shrunk.
    hazards.py ordered the writers of b2 by op index (t0.op1 before t0.op2), so t1.op0,
    reader of t0.op1's value, had to end before t0.op2: an edge t1 -> t0 against the RAW
    edge t0 -> t1, and granularity=task reported the tasks' cycle. The task order is now
    chosen first and the barriers take part in ordering the writers, so t0.op2's unread
    value is written first, as in the witness."""
    _pinned(_TASK_WRITER_ORDER_WITNESS, "task")


def test_task_search_backtracks_out_of_a_writer_order_that_leaves_no_way_on() -> None:
    """Found by a longer hunt after the task order fix, shrunk by hand: t0.op1 writes
    b1@1, t0.op5 reads it and writes b1@2 for t1, t0.op2 writes an unread b1@0. Taking
    t0.op1 first closes no cycle, but then t0.op2 must follow t0.op5 and so t1.op0,
    across the barrier; only t0.op2 first works (the witness). Each buffer's writer order
    is now searched depth first."""
    _pinned(_DEAD_WRITE_FIRST_WITNESS, "task")


def test_task_granularity_names_a_cycle_that_only_whole_tasks_have() -> None:
    """Found by the long profile (issue 34): t1.op0 writes b0@0, t0.op0 (another task)
    reads it, t1.op4 reads it too and then overwrites it. Whole tasks cannot run t0.op0
    between t1.op0 and t1.op4, so granularity=task has no schedule; the refusal was an
    op-level CYCLE that did not name the granularity. It now names it, the tasks, the
    value that ties them and suggests tile granularity, where the witness is legal."""
    _pinned(_WHOLE_TASK_CYCLE_WITNESS)
    with pytest.raises(InputError) as refused:
        _solve(_WHOLE_TASK_CYCLE_WITNESS, "task", 0)
    message = refused.value.message
    assert refused.value.rule == "CYCLE" and "granularity=task" in message, message
    assert "tasks t1, t0 cannot each run whole" in message, message
    assert "'b0.s0@0' of buffer 'b0'" in message and "t0.op0" in message, message
    assert "try --granularity tile" in message, message


_WHOLE_TASK_CYCLE_WITNESS: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {"format": "npu-target/1", "name": "fuzz", "time_unit": "ns",
               "lanes": {"DMA": 1}, "budgets": {"DDR_BW": 1},
               "memories": {"VTCM": {"capacity_bytes": 1, "alignment_bytes": 1}},
               "costs": {}},
    "problem": {
        "format": "npu-problem/1", "name": "fuzz", "tensors": {},
        "tasks": {"t0": {"kind": "gemm"}, "t1": {"kind": "gemm", "space": [[0, 3]]}},
        "buffers": {"b0": {"memory": "VTCM", "size": 1, "align": 1}},
        "ops": {
            "t0.op0": {"task": "t0", "modes": [{"duration": 1}],
                       "reads": [{"buffer": "b0", "value": "b0.s0@0"}]},
            "t1.op0": {"task": "t1", "space": [[0, 1]], "modes": [{"duration": 1}],
                       "writes": [{"buffer": "b0", "value": "b0.s0@0"}]},
            "t1.op1": {"task": "t1", "space": [[1, 2]], "modes": [{"duration": 1}]},
            "t1.op2": {"task": "t1", "space": [[2, 3]], "modes": [{"duration": 1}]},
            "t1.op3": {"task": "t1",
                       "modes": [{"duration": 2}, {"duration": 1}, {"duration": 1}]},
            "t1.op4": {"task": "t1", "modes": [{"duration": 1}],
                       "reads": [{"buffer": "b0", "value": "b0.s0@0"}],
                       "writes": [{"buffer": "b0", "value": "b0.s0@1"}]}},
        "after": [["t1.op3", "t1.op4"]]},
    "ops": {"t0.op0": {"mode": 0, "start": 1, "end": 2, "units": {}},
            "t1.op0": {"mode": 0, "start": 0, "end": 1, "units": {}},
            "t1.op1": {"mode": 0, "start": 0, "end": 1, "units": {}},
            "t1.op2": {"mode": 0, "start": 0, "end": 1, "units": {}},
            "t1.op3": {"mode": 0, "start": 0, "end": 2, "units": {}},
            "t1.op4": {"mode": 0, "start": 2, "end": 3, "units": {}}},
    "buffers": {"b0": {"offset": 0, "alloc": 0, "free": 3}},
    "makespan": 3}


_WAR_ACROSS_BUFFERS_WITNESS: dict[str, Any] = json.loads(
    '{"format": "npu-schedule/1", "target": {"format": "npu-target/1", "name": "fuzz", "t'
    'ime_unit": "ns", "lanes": {"DMA": 1, "HVX": 1, "HMX": 2}, "budgets": {}, "memories":'
    ' {"VTCM": {"capacity_bytes": 1, "alignment_bytes": 1}, "L2": {"capacity_bytes": 4, "'
    'alignment_bytes": 1}}, "costs": {}}, "problem": {"format": "npu-problem/1", "name": '
    '"fuzz", "tensors": {}, "tasks": {"t0": {"kind": "gemm"}, "t1": {"kind": "gemm"}}, "b'
    'uffers": {"b2": {"memory": "L2", "size": 1, "align": 1}, "b3": {"memory": "L2", "siz'
    'e": 1, "align": 1}}, "ops": {"t0.op0": {"task": "t0", "modes": [{"duration": 1, "lan'
    'es": {"DMA": 1, "HMX": 1}}], "reads": [{"buffer": "b3", "value": "b3.s0@0"}], "write'
    's": []}, "t0.op1": {"task": "t0", "modes": [{"duration": 1, "lanes": {"DMA": 1, "HMX'
    '": 1}}], "writes": [{"buffer": "b2", "value": "b2.s0@1"}, {"buffer": "b3", "value": '
    '"b3.s0@1"}]}, "t1.op0": {"task": "t1", "modes": [{"duration": 1}], "reads": [{"buffe'
    'r": "b3", "value": "b3.s0@0"}], "writes": [{"buffer": "b2", "value": "b2.s0@0"}]}, "'
    't1.op1": {"task": "t1", "modes": [{"duration": 1}], "writes": [{"buffer": "b3", "val'
    'ue": "b3.s0@0"}]}, "t1.op4": {"task": "t1", "modes": [{"duration": 1, "lanes": {"DMA'
    '": 1, "HMX": 1}}]}}, "after": [["t0.op0", "t0.op1"]]}, "ops": {"t0.op0": {"mode": 0,'
    ' "start": 1, "end": 2, "units": {"DMA": [0], "HMX": [0]}}, "t0.op1": {"mode": 0, "st'
    'art": 2, "end": 3, "units": {"DMA": [0], "HMX": [0]}}, "t1.op0": {"mode": 0, "start"'
    ': 1, "end": 2, "units": {}}, "t1.op1": {"mode": 0, "start": 0, "end": 1, "units": {}'
    '}, "t1.op4": {"mode": 0, "start": 5, "end": 6, "units": {"DMA": [0], "HMX": [0]}}}, '
    '"buffers": {"b2": {"offset": 2, "alloc": 1, "free": 5}, "b3": {"offset": 3, "alloc":'
    ' 0, "free": 3}}, "makespan": 6}')

_TASK_WRITER_ORDER_WITNESS: dict[str, Any] = json.loads(
    '{"format": "npu-schedule/1", "target": {"format": "npu-target/1", "name": "fuzz", "t'
    'ime_unit": "ns", "lanes": {"DMA": 3, "HVX": 3, "HMX": 2}, "budgets": {"DDR_BW": 4}, '
    '"memories": {"VTCM": {"capacity_bytes": 1, "alignment_bytes": 4}, "L2": {"capacity_b'
    'ytes": 7, "alignment_bytes": 1}}, "costs": {}}, "problem": {"format": "npu-problem/1'
    '", "name": "fuzz", "tensors": {}, "tasks": {"t0": {"kind": "vec", "params": {"note":'
    ' "free-form, ignored by the checker"}}, "t1": {"kind": "vec"}, "t2": {"kind": "copy"'
    '}}, "buffers": {"b2": {"memory": "L2", "size": 1, "align": 1}}, "ops": {"t0.op1": {"'
    'task": "t0", "modes": [{"duration": 3, "lanes": {"HMX": 1}, "budgets": {"DDR_BW": 4}'
    '}, {"duration": 4, "budgets": {"DDR_BW": 2}}], "writes": [{"buffer": "b2", "value": '
    '"b2.s0@1"}]}, "t0.op2": {"task": "t0", "modes": [{"duration": 2, "lanes": {"DMA": 1,'
    ' "HVX": 3}, "budgets": {"DDR_BW": 3}}, {"duration": 4}], "writes": [{"buffer": "b2",'
    ' "value": "b2.s0@0"}]}, "t1.op0": {"task": "t1", "modes": [{"duration": 1}, {"durati'
    'on": 1}], "reads": [{"buffer": "b2", "value": "b2.s0@1"}]}, "t2.op0": {"task": "t2",'
    ' "modes": [{"duration": 1}, {"duration": 1}, {"duration": 1}], "writes": []}}, "afte'
    'r": []}, "ops": {"t0.op1": {"mode": 0, "start": 2, "end": 5, "units": {"HMX": [0]}},'
    ' "t0.op2": {"mode": 0, "start": 0, "end": 2, "units": {"DMA": [2], "HVX": [0, 1, 2]}'
    '}, "t1.op0": {"mode": 0, "start": 5, "end": 6, "units": {}}, "t2.op0": {"mode": 0, "'
    'start": 6, "end": 7, "units": {}}}, "buffers": {"b2": {"offset": 3, "alloc": 0, "fre'
    'e": 7}}, "makespan": 7}')


_ACROSS_BUFFERS_SETTLED_WITNESS: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {"format": "npu-target/1", "name": "fuzz", "lanes": {"DMA": 1},
               "memories": {"L2": {"capacity_bytes": 4, "alignment_bytes": 1}}},
    "problem": {"format": "npu-problem/1", "name": "fuzz",
                "tasks": {"t0": {"kind": "gemm"}, "t1": {"kind": "gemm"}},
                "buffers": {"b2": {"memory": "L2", "size": 1},
                            "b3": {"memory": "L2", "size": 1}},
                "ops": {"t0.op0": {"task": "t0", "modes": [{"duration": 1}],
                                   "reads": [{"buffer": "b3", "value": "b3@0"}]},
                        "t0.op1": {"task": "t0", "modes": [{"duration": 4}],
                                   "writes": [{"buffer": "b2", "value": "b2@1"},
                                              {"buffer": "b3", "value": "b3@1"}]},
                        "t1.op0": {"task": "t1", "modes": [{"duration": 2}],
                                   "reads": [{"buffer": "b3", "value": "b3@0"}],
                                   "writes": [{"buffer": "b2", "value": "b2@0"}]},
                        "t1.op1": {"task": "t1", "modes": [{"duration": 1}],
                                   "writes": [{"buffer": "b3", "value": "b3@0"}]},
                        "t1.op3": {"task": "t1", "modes": [{"duration": 1}],
                                   "reads": [{"buffer": "b2", "value": "b2@1"}],
                                   "writes": [{"buffer": "b3", "value": "b3@2"}]}},
                "after": [["t0.op0", "t1.op3"]]},
    "ops": {"t1.op1": {"mode": 0, "start": 0, "end": 1},
            "t1.op0": {"mode": 0, "start": 3, "end": 5},
            "t0.op0": {"mode": 0, "start": 4, "end": 5},
            "t0.op1": {"mode": 0, "start": 5, "end": 9},
            "t1.op3": {"mode": 0, "start": 10, "end": 11}},
    "buffers": {"b2": {"offset": 2, "alloc": 3, "free": 11},
                "b3": {"offset": 3, "alloc": 0, "free": 11}},
    "makespan": 11}

_DEAD_WRITE_FIRST_WITNESS: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {"format": "npu-target/1", "name": "fuzz", "lanes": {"DMA": 1},
               "memories": {"L2": {"capacity_bytes": 1, "alignment_bytes": 1}}},
    "problem": {"format": "npu-problem/1", "name": "fuzz",
                "tasks": {"t0": {"kind": "gemm"}, "t1": {"kind": "gemm"}},
                "buffers": {"b1": {"memory": "L2", "size": 1}},
                "ops": {"t0.op1": {"task": "t0", "modes": [{"duration": 1}],
                                   "writes": [{"buffer": "b1", "value": "b1@1"}]},
                        "t0.op2": {"task": "t0", "modes": [{"duration": 1}],
                                   "writes": [{"buffer": "b1", "value": "b1@0"}]},
                        "t0.op5": {"task": "t0", "modes": [{"duration": 1}],
                                   "reads": [{"buffer": "b1", "value": "b1@1"}],
                                   "writes": [{"buffer": "b1", "value": "b1@2"}]},
                        "t1.op0": {"task": "t1", "modes": [{"duration": 1}],
                                   "reads": [{"buffer": "b1", "value": "b1@2"}]}}},
    "ops": {"t0.op2": {"mode": 0, "start": 0, "end": 1},
            "t0.op1": {"mode": 0, "start": 1, "end": 2},
            "t0.op5": {"mode": 0, "start": 2, "end": 3},
            "t1.op0": {"mode": 0, "start": 3, "end": 4}},
    "buffers": {"b1": {"offset": 0, "alloc": 0, "free": 4}},
    "makespan": 4}

_UNFIT_MODE_WITNESS: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {"format": "npu-target/1", "name": "fuzz", "time_unit": "ns",
               "lanes": {"DMA": 1}, "budgets": {"DDR_BW": 1},
               "memories": {"VTCM": {"capacity_bytes": 1, "alignment_bytes": 1}},
               "costs": {}},
    "problem": {"format": "npu-problem/1", "name": "fuzz", "tensors": {},
                "tasks": {"t0": {"kind": "gemm"}}, "buffers": {},
                "ops": {"t0.op0": {"task": "t0", "modes": [
                    {"duration": 1}, {"duration": 1, "budgets": {"DDR_BW": 2}}]}},
                "after": []},
    "ops": {"t0.op0": {"mode": 0, "start": 0, "end": 1, "units": {}}},
    "buffers": {}, "makespan": 1}

_WAW_CYCLE_WITNESS: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {"format": "npu-target/1", "name": "t", "lanes": {"DMA": 1},
               "memories": {"VTCM": {"capacity_bytes": 2, "alignment_bytes": 1}}},
    "problem": {"format": "npu-problem/1", "name": "p", "tasks": {"t": {"kind": "k"}},
                "buffers": {"x": {"memory": "VTCM", "size": 1},
                            "y": {"memory": "VTCM", "size": 1}},
                "ops": {
                    "load_x": {"task": "t", "modes": [{"duration": 1}],
                               "writes": [{"buffer": "x", "value": "x1"}]},
                    "use": {"task": "t", "modes": [{"duration": 1}],
                            "reads": [{"buffer": "y", "value": "y0"},
                                      {"buffer": "x", "value": "x1"}]},
                    "clobber": {"task": "t", "modes": [{"duration": 1}],
                                "writes": [{"buffer": "y", "value": "y1"},
                                           {"buffer": "x", "value": "x2"}]},
                    "load_y": {"task": "t", "modes": [{"duration": 1}],
                               "writes": [{"buffer": "y", "value": "y0"}]}}},
    "ops": {"load_x": {"mode": 0, "start": 0, "end": 1},
            "load_y": {"mode": 0, "start": 0, "end": 1},
            "use": {"mode": 0, "start": 1, "end": 2},
            "clobber": {"mode": 0, "start": 2, "end": 3}},
    "buffers": {"x": {"offset": 0, "alloc": 0, "free": 3},
                "y": {"offset": 1, "alloc": 0, "free": 3}},
    "makespan": 3}

_ALIGN_FIT_WITNESS: dict[str, Any] = {
    "format": "npu-schedule/1",
    "target": {"format": "npu-target/1", "name": "fuzz", "lanes": {"DMA": 1},
               "memories": {"VTCM": {"capacity_bytes": 2, "alignment_bytes": 1}}},
    "problem": {"format": "npu-problem/1", "name": "fuzz", "tasks": {"t0": {"kind": "k"}},
                "buffers": {"b0": {"memory": "VTCM", "size": 1, "align": 1},
                            "b1": {"memory": "VTCM", "size": 1, "align": 2}},
                "ops": {"t0.op1": {"task": "t0", "modes": [{"duration": 1}],
                                   "writes": [{"buffer": "b0", "value": "v0"},
                                              {"buffer": "b1", "value": "v1"}]}}},
    "ops": {"t0.op1": {"mode": 0, "start": 0, "end": 1}},
    "buffers": {"b0": {"offset": 1, "alloc": 0, "free": 1},
                "b1": {"offset": 0, "alloc": 0, "free": 1}},
    "makespan": 1}
