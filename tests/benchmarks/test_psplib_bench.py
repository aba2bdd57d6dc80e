"""The PSPLIB converter and results reader, on hand-written data (no public files read)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

import checker
from benchmarks.psplib_bench import (
    rcpsp_documents,
    read_best_known,
    sample_ids,
    summarize,
    to_problem,
)

# Patterson format: activities and resources; availabilities; then per activity its
# duration, one demand per resource, the number of successors and their 1-based numbers.
# Dummy source 1 and sink 5 take no time; 2 and 3 each need 2 of the 3 units of R1, so
# they cannot overlap; the optimum is 3 + 2 + 0 = 5 (2 and 4 may overlap with 3 and 4).
PATTERSON = """\
5 2
3 4
0 0 0 3 2 3 4
3 2 1 1 5
2 2 0 1 5
4 0 3 1 5
0 0 0 0
"""

BKS = """\
Title;J30
Number;2
Format;sm
ID;Ref1;Ref2;Ref3;LB value;LB ref;LB time;UB value;UB ref;UB time;OPT value;OPT ref
1;j301_1.sm;0;0;43;1;10;43;1;10;43;1
2;j301_2.sm;0;0;84;5;0;87;3;9000;0;0
# Record sets:
ID;1
# Author(s); Someone
"""


@dataclass
class _Mode:
    duration: int
    demands: list[int]


@dataclass
class _Activity:
    modes: list[_Mode]
    successors: list[int]


@dataclass
class _Resource:
    capacity: int
    renewable: bool = True


@dataclass
class _Project:
    """The three attributes of ``psplib.ProjectInstance`` the converter reads."""

    resources: list[_Resource]
    activities: list[_Activity] = field(default_factory=list)


def _project() -> _Project:
    """The instance of :data:`PATTERSON`, built without the psplib package."""
    return _Project([_Resource(3), _Resource(4)], [
        _Activity([_Mode(0, [0, 0])], [1, 2, 3]),
        _Activity([_Mode(3, [2, 1])], [4]),
        _Activity([_Mode(2, [2, 0])], [4]),
        _Activity([_Mode(4, [0, 3])], [4]),
        _Activity([_Mode(0, [0, 0])], [])])


def test_best_known_rows_skip_preamble_and_notes() -> None:
    table = read_best_known(BKS)
    assert sorted(table) == [1, 2]
    assert (table[1].lower, table[1].upper, table[1].optimum) == (43, 43, 43)
    assert table[1].reference == "j301_1.sm"
    assert (table[2].lower, table[2].upper, table[2].optimum) == (84, 87, None)


def test_best_known_without_header_is_an_error() -> None:
    with pytest.raises(ValueError, match="header"):
        read_best_known("Title;J30\n1;2;3\n")


def test_activities_become_ops_resources_budgets_successors_edges() -> None:
    problem, target = rcpsp_documents(_project(), "tiny")
    assert target["budgets"] == {"R1": 3, "R2": 4}
    assert target["lanes"] == {}
    assert list(problem["ops"]) == ["j1", "j2", "j3", "j4", "j5"]
    assert problem["ops"]["j1"]["modes"] == [{"duration": 0, "budgets": {}}]
    assert problem["ops"]["j2"]["modes"] == [{"duration": 3, "budgets": {"R1": 2, "R2": 1}}]
    assert problem["ops"]["j4"]["modes"] == [{"duration": 4, "budgets": {"R2": 3}}]
    assert sorted(map(tuple, problem["after"])) == [
        ("j1", "j2"), ("j1", "j3"), ("j1", "j4"), ("j2", "j5"), ("j3", "j5"), ("j4", "j5")]
    assert {op["task"] for op in problem["ops"].values()} == {"project"}


def test_psplib_parses_the_same_instance(tmp_path) -> None:
    import psplib  # in the test extra; the benchmark itself imports it only when run
    path = tmp_path / "tiny.txt"
    path.write_text(PATTERSON)
    parsed = psplib.parse(path, instance_format="patterson")
    assert rcpsp_documents(parsed, "tiny") == rcpsp_documents(_project(), "tiny")


def _schedule(problem_doc: dict, target_doc: dict, starts: dict[str, int]) -> dict:
    durations = {name: op["modes"][0]["duration"] for name, op in problem_doc["ops"].items()}
    ops = {name: {"mode": 0, "start": s, "end": s + durations[name], "units": {}}
           for name, s in starts.items()}
    return {"format": "npu-schedule/1", "target": target_doc, "problem": problem_doc,
            "ops": ops, "buffers": {},
            "makespan": max(op["end"] for op in ops.values())}


def test_checker_accepts_an_optimal_schedule_of_the_converted_instance() -> None:
    problem_doc, target_doc = rcpsp_documents(_project(), "tiny")
    schedule = _schedule(problem_doc, target_doc,
                         {"j1": 0, "j2": 0, "j3": 3, "j4": 0, "j5": 5})
    report = checker.verify(schedule)
    assert report.legal, report.violations


def test_checker_sees_a_resource_as_a_budget() -> None:
    problem_doc, target_doc = rcpsp_documents(_project(), "tiny")
    # j2 and j3 together draw 4 of R1's 3 units.
    schedule = _schedule(problem_doc, target_doc,
                         {"j1": 0, "j2": 0, "j3": 0, "j4": 0, "j5": 4})
    codes = {v.code for v in checker.verify(schedule).violations}
    assert codes == {"BUDGET"}


def test_readers_accept_the_documents() -> None:
    problem, target = to_problem(_project(), "tiny")
    assert len(problem.ops) == 5
    assert target.budgets == {"R1": 3, "R2": 4}
    assert problem.ops["j3"].modes[0].budgets == {"R1": 2}


def test_non_renewable_resource_is_refused() -> None:
    project = _project()
    project.resources[1].renewable = False
    with pytest.raises(ValueError, match="not renewable"):
        rcpsp_documents(project, "tiny")


def test_sample_spreads_over_the_ids() -> None:
    ids = list(range(1, 481))
    assert sample_ids(ids, None) == ids
    assert sample_ids(ids, 4) == [1, 121, 241, 361]
    assert sample_ids([3, 1, 2], 10) == [1, 2, 3]


def test_summary_counts_and_gaps_of_one_solver() -> None:
    records = [{"gap_pct": 0.0, "wall_s": 1.0, "at_best_known": True,
                "proven_optimal": True, "legal": True, "status": "OPTIMAL", "cut": False},
               {"gap_pct": 2.0, "wall_s": 3.0, "at_best_known": False,
                "proven_optimal": False, "legal": True, "status": "FEASIBLE", "cut": True}]
    summary = summarize(records)
    assert summary["instances"] == 2
    assert (summary["at_best_known"], summary["proven_optimal"]) == (1, 1)
    assert (summary["mean_gap_pct"], summary["max_gap_pct"]) == (1.0, 2.0)
    assert (summary["mean_wall_s"], summary["max_wall_s"]) == (2.0, 3.0)
    assert summary["all_legal"]
    assert summary["statuses"] == {"OPTIMAL": 1, "FEASIBLE": 1}
    assert summary["cut"] == 1  # a run the wall clock stopped may not repeat
    peers = [{k: v for k, v in r.items() if k != "cut"} for r in records]
    assert "cut" not in summarize(peers)  # the peers' sides have no work budget
    assert summarize([]) == {"instances": 0}


def test_only_keeps_the_named_instances(tmp_path) -> None:
    import io

    from benchmarks.psplib_bench import run

    folder = tmp_path / "psplib" / "j30"
    folder.mkdir(parents=True)
    for number in (1, 2):
        (folder / f"J30_{number}.txt").write_text(PATTERSON)
    (tmp_path / "psplib" / "bks-j30.csv").write_text(BKS)
    figures = run(tmp_path, ["j30"], None, time_limit=0.5, workers=1, seed=0, peer=False,
                  cpsat=False, only=[2], reproducible=True, wall_limit=60.0,
                  log=io.StringIO())
    (record,) = figures["sets"]["j30"]["records"]
    assert record["name"] == "J30_2" and record["ours"]["makespan"] == 5
    assert record["ours"]["legal"] and record["ours"]["cut"] is False
    assert figures["wall_limit_s"] == 60.0
