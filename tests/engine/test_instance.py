"""The indexed view of a problem: what an op puts on each resource in any schedule."""

from __future__ import annotations

from models.formats import Mode, Op, Problem, Target, Task
from schedsearch.engine.instance import build_instance

TARGET = Target("t", lanes={"DMA": 2, "HVX": 4}, budgets={"BW": 60}, memories={})


def test_least_work_takes_each_resource_at_its_cheapest_mode() -> None:
    # A DMA load at full rate, or on HVX drawing less bandwidth for longer: neither
    # resource is needed in every mode, so only the bandwidth has work in any schedule.
    load = Op("t", (Mode(10, {"DMA": 1}, {"BW": 40}), Mode(30, {"HVX": 2}, {"BW": 10})))
    inst = build_instance(Problem("p", {}, {"t": Task("copy")}, {}, {"ld": load}), TARGET)
    assert inst.least_work(0) == {("lane", "DMA"): 0, ("lane", "HVX"): 0,
                                  ("budget", "BW"): 300}
    assert inst.capacities() == {("lane", "DMA"): 2, ("lane", "HVX"): 4,
                                 ("budget", "BW"): 60}
