"""The paired passes: the lean split's fast ops on one queue, its lean ones on the other,
in the order that paces both queues of every task (:mod:`schedsearch.engine.portfolio`)."""

from __future__ import annotations

import dataclasses
import itertools

from models.formats import Mode, Op, Problem, Target, Task
from schedsearch.engine.bounds.lower import lower_bound
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import Instance, build_instance
from schedsearch.engine.modes import lean_split, paired_instance
from schedsearch.engine.orders import paced_order
from schedsearch.engine.passes import ModePolicy, OpOrder, PassSpec
from schedsearch.engine.portfolio import AMPLE_SHARE, PORTFOLIO, _Sequences, list_schedule
from schedsearch.engine.serial import SerialPass
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import example_at, target, verify

PAIRED_PASSES = [spec for spec in PORTFOLIO if spec.policy is ModePolicy.PAIRED]


def _transfer(task: str, fast: int, lean: int, other: Mode | None = None) -> Op:
    modes = (Mode(fast, {"DMA": 1}, {"BW": 40}), Mode(lean, {"DMA": 1}, {"BW": 20}))
    return Op(task, modes + ((other,) if other else ()))


def _two_tasks(big: int = 8, small: int = 16) -> Problem:
    """Task ``r``: transfers whose fast mode saves most (10 against 20 ticks); task
    ``g``: ones whose fast mode saves less (7 against 10)."""
    ops = {**{f"r{i}": _transfer("r", 10, 20) for i in range(big)},
           **{f"g{i}": _transfer("g", 7, 10) for i in range(small)}}
    return Problem("two", {}, {"r": Task("copy"), "g": Task("copy")}, {}, ops)


def _triple(ops: int) -> tuple[Problem, Target]:
    return example_at("gemm-rmsnorm-copy-v75", ops)


def test_the_lean_mode_is_the_fast_modes_lane_kind_not_a_thriftier_mode_elsewhere() -> None:
    """A copy that an HVX-like lane can also do, drawing 8 of the bus: the pair that
    shares the queues is still the queue's fast and half-bandwidth modes."""
    elsewhere = Mode(100, {"VX": 1}, {"BW": 8})
    problem = Problem("one", {}, {"t": Task("copy")}, {},
                      {f"c{i}": _transfer("t", 10, 20, elsewhere) for i in range(3)})
    choice = lean_split(build_instance(problem, target()))
    assert choice is not None
    assert {mode for mode, _ in choice} <= {0, 1}


def test_the_paired_instance_holds_each_fast_op_and_each_lean_op_to_one_queue() -> None:
    inst = build_instance(_two_tasks(), target())
    split = lean_split(inst)
    assert split is not None
    paired = paired_instance(inst, split)
    assert paired.target.lanes == {**inst.target.lanes, "DMA:fast": 1, "DMA:lean": 1}
    for i, (mode, unit) in enumerate(split):
        lanes = dict(paired.modes[i][mode].lanes)
        assert lanes.pop({0: "DMA:fast", 1: "DMA:lean"}[unit]) == 1
        assert lanes == dict(inst.modes[i][mode].lanes)  # the real lanes kept


def test_the_paced_order_advances_each_tasks_queues_at_the_same_pace() -> None:
    inst = build_instance(_two_tasks(), target())
    split = lean_split(inst)
    assert split is not None
    order = paced_order(inst, build_dag(inst), split)
    assert sorted(order) == list(range(inst.n_ops))
    done: dict[tuple[str, int], int] = {}
    total: dict[tuple[str, int], int] = {}
    for i, (mode, unit) in enumerate(split):
        key = (inst.op_task[i], unit)
        total[key] = total.get(key, 0) + inst.modes[i][mode].duration
    shares = []
    for i in order:  # the share of its own queue-stream each op finds done
        key = (inst.op_task[i], split[i][1])
        shares.append(done.get(key, 0) / total[key])
        done[key] = done.get(key, 0) + inst.modes[i][split[i][0]].duration
    assert shares == sorted(shares)


def _overlapping(inst: Instance, solution: Solution, split: list[tuple[int, int]],
                 unit: int) -> bool:
    """Whether two ops of the split's ``unit`` (0 fast, 1 lean) run at once."""
    spans = sorted((solution.starts[i], solution.starts[i] + inst.modes[i][m].duration)
                   for i, (m, u) in enumerate(split) if u == unit)
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))


def test_a_paired_pass_never_runs_two_fast_or_two_lean_ops_at_once_and_is_legal() -> None:
    problem, tgt = _triple(300)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    sequences = _Sequences(inst, dag)
    assert ModePolicy.PAIRED in sequences.policies and PAIRED_PASSES
    for spec in PAIRED_PASSES:
        found = sequences.make_pass(spec).run()
        assert isinstance(found, Solution)
        assert verify(to_schedule(inst, found, {})) == []
        split = sequences.split
        assert split is not None
        assert not _overlapping(inst, found, split, 0)
        assert not _overlapping(inst, found, split, 1)
        assert found.modes == tuple(mode for mode, _ in split)


def test_pairing_shortens_the_same_pass_where_a_bus_binds_and_memory_is_ample() -> None:
    """The bundled triple at about 500 ops (8 MiB of VTCM, 3 % of it held by its own
    order run one op at a time): the same sequence, window and modes without the two
    queues kept apart runs two lean transfers side by side, a third of the bus idle."""
    problem, tgt = _triple(500)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    sequences = _Sequences(inst, dag)
    spec = PassSpec(ModePolicy.PAIRED, OpOrder.PACED, 64)
    order, tail = sequences.get(spec.policy, spec.sequence)
    allowed = sequences.policies[ModePolicy.PAIRED]
    paired = sequences.make_pass(spec).run()
    unpaired = SerialPass(inst, dag, order, tail, spec, allowed).run()
    assert isinstance(paired, Solution) and isinstance(unpaired, Solution)
    assert paired.makespan(inst) < unpaired.makespan(inst)
    best = list_schedule(inst, dag)
    assert isinstance(best, Solution)
    assert best.makespan(inst) <= paired.makespan(inst)
    assert best.makespan(inst) < 1.02 * lower_bound(problem, tgt).value


def test_no_paired_passes_where_the_problems_own_order_holds_much_of_a_memory() -> None:
    problem, tgt = _triple(300)
    small = dataclasses.replace(tgt.memories["VTCM"], capacity_bytes=192 * 1024)
    tight = dataclasses.replace(tgt, memories={**tgt.memories, "VTCM": small})
    inst = build_instance(problem, tight)
    sequences = _Sequences(inst, build_dag(inst))
    assert sequences.split is not None  # the bus would split,
    assert sequences.serial_share() > 1 / AMPLE_SHARE  # but memory is not ample:
    assert ModePolicy.PAIRED not in sequences.policies
    assert not any(sequences.applies(spec) for spec in PAIRED_PASSES)
