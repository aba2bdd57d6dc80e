"""The yielding policy: where a transfer queue binds, ops on other lanes that share its
budget take their leanest draws (:func:`schedsearch.engine.modes.yielding_modes`)."""

from __future__ import annotations

from models.formats import Memory, Mode, Op, Problem, Target, Task
from models.targets import load_target
from models.workload import load_workload, tile
from schedsearch.engine.hazards import build_dag
from schedsearch.engine.instance import build_instance
from schedsearch.engine.modes import yielding_modes
from schedsearch.engine.orders import bottleneck_lane, on_lane
from schedsearch.engine.passes import ModePolicy
from schedsearch.engine.portfolio import PORTFOLIO, _Sequences
from schedsearch.engine.solution import Solution, to_schedule
from tests.engine.problems import example_at, verify


def _queues() -> Target:
    """A load queue and a store queue of one unit each on 64 units of bandwidth."""
    return Target(name="queues", lanes={"LOAD": 1, "STORE": 1, "VX": 1}, budgets={"BW": 64},
                  memories={"M": Memory(capacity_bytes=4096, alignment_bytes=64)})


def _transfers(loads: int, stores: int) -> Problem:
    ops = {**{f"ld{i}": Op("t", (Mode(10, {"LOAD": 1}, {"BW": 48}),
                                 Mode(16, {"LOAD": 1}, {"BW": 24}))) for i in range(loads)},
           **{f"st{i}": Op("t", (Mode(10, {"STORE": 1}, {"BW": 48}),
                                 Mode(16, {"STORE": 1}, {"BW": 24}))) for i in range(stores)},
           "norm": Op("t", (Mode(5, {"VX": 1}),))}
    return Problem("queues", {}, {"t": Task("k")}, {}, ops)


def test_ops_off_the_busiest_queue_keep_only_their_leanest_draw() -> None:
    inst = build_instance(_transfers(loads=6, stores=2), _queues())
    lane = bottleneck_lane(inst)
    assert lane == "LOAD"
    allowed = yielding_modes(inst, lane, on_lane(inst, lane))
    for i, name in enumerate(inst.op_names):
        if name.startswith("st"):
            assert allowed[i] == [1]  # a store at 48 would keep every load off the bus
        else:
            assert allowed[i] == list(range(len(inst.modes[i])))  # loads, the norm


def test_no_yielding_policy_where_the_busiest_queue_moves_no_ddr_data_or_shares_nothing(
        ) -> None:
    inst = build_instance(_transfers(loads=6, stores=2), _queues())
    sequences = _Sequences(inst, build_dag(inst))
    assert ModePolicy.YIELDING not in sequences.policies  # no tensors: not a transfer queue
    loads_and_stores_on_one_kind = build_instance(
        tile(load_workload("gemm-rmsnorm-v75"), load_target("hexagon-v75")),
        load_target("hexagon-v75"))
    sequences = _Sequences(loads_and_stores_on_one_kind,
                           build_dag(loads_and_stores_on_one_kind))
    assert sequences.transfer_bound
    assert ModePolicy.YIELDING not in sequences.policies


def test_on_the_ascend_pair_stores_at_half_rate_shorten_the_hungriest_first_pass() -> None:
    problem, tgt = example_at("gemm-rmsnorm-ascend", 150)
    inst = build_instance(problem, tgt)
    dag = build_dag(inst)
    sequences = _Sequences(inst, dag)
    assert ModePolicy.YIELDING in sequences.policies
    yielding = [spec for spec in PORTFOLIO if spec.policy is ModePolicy.YIELDING]
    assert yielding
    for spec in yielding:
        every_mode = [s for s in PORTFOLIO if s.policy is ModePolicy.ALL and
                      s.sequence is spec.sequence and s.window == spec.window and
                      s.hungry_unguarded == spec.hungry_unguarded]
        found = sequences.make_pass(spec).run()
        assert isinstance(found, Solution)
        assert verify(to_schedule(inst, found, {})) == []
        for other in every_mode:
            before = sequences.make_pass(other).run()
            assert isinstance(before, Solution)
            assert found.makespan(inst) < before.makespan(inst)
