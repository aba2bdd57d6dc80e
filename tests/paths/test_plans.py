"""Plans: domains, selection inside and outside them, plan files, and the two commands."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from checker import verify
from models.errors import InputError
from models.formats import Problem, Target, schedule_to_dict
from schedsearch.cli import main
from schedsearch.paths import Comparison
from schedsearch.plans import (
    Request,
    domain_failures,
    make_plan,
    plan_from_dict,
    plan_to_dict,
    read_plans,
    select,
    write_plan,
)
from tests.paths.paths_workloads import OPTIONS, PAIR, tiled


@pytest.fixture(scope="module")
def plan_dict(compared: dict[str, Comparison]) -> dict[str, Any]:
    return plan_to_dict(make_plan(compared["pair"]))


def _request(problem: Problem, target: Target, free: int | None = None) -> Request:
    capacity = target.memories["VTCM"].capacity_bytes
    return Request(problem, target, {"VTCM": capacity if free is None else free})


def test_plan_files_round_trip(plan_dict: dict[str, Any]) -> None:
    plan = plan_from_dict(json.loads(json.dumps(plan_dict)), "p.plan.json")
    assert plan_to_dict(plan) == plan_dict
    assert plan.cost["path"] == "fused-interleaved"
    assert plan.fallback["makespan"] > plan.cost["makespan"]
    assert not plan.fallback["preferred"]


def test_inside_the_domain_the_plan_is_chosen(plan_dict: dict[str, Any],
                                              pair: tuple[Problem, Target]) -> None:
    plan = plan_from_dict(plan_dict, "p.plan.json")
    choice = select([plan], _request(*pair))
    assert (choice.kind, choice.path, choice.plan) == ("plan", "fused-interleaved", plan)
    assert choice.cost["makespan"] <= plan.fallback["makespan"]
    assert verify(schedule_to_dict(choice.schedule)).legal


def test_a_plan_that_cannot_beat_its_fallback_selects_the_fallback(
        plan_dict: dict[str, Any], pair: tuple[Problem, Target]) -> None:
    document = copy.deepcopy(plan_dict)
    document["fallback"]["preferred"] = True
    plan = plan_from_dict(document, "p.plan.json")
    choice = select([plan], _request(*pair))
    assert (choice.kind, choice.path) == ("fallback", plan.fallback["path"])
    assert choice.cost["makespan"] == plan.fallback["makespan"]
    assert "prefers its fallback" in choice.reason


def test_each_broken_clause_is_named(plan_dict: dict[str, Any],
                                     pair: tuple[Problem, Target]) -> None:
    plan = plan_from_dict(plan_dict, "p.plan.json")
    problem, target = pair
    need = plan.domain["min_free_bytes"]["VTCM"]
    assert domain_failures(plan.domain, _request(problem, target)) == []
    assert domain_failures(plan.domain, _request(problem, target, need)) == []
    low = domain_failures(plan.domain, _request(problem, target, need - 1))
    assert low == [f"VTCM has {need - 1} bytes free, the plan needs {need}"]
    changed = replace(target, costs={**target.costs, "ddr_budget": "DDR_BW", "x": 1})
    assert "version" in domain_failures(plan.domain, _request(problem, changed))[0]
    other = tiled({**PAIR, "target": "hexagon-v73"})
    assert "is not hexagon-v75" in domain_failures(plan.domain, _request(*other))[0]


def test_outside_the_domain_the_fallback_runs_with_its_cost(
        plan_dict: dict[str, Any]) -> None:
    plan = plan_from_dict(plan_dict, "p.plan.json")
    tasks = [dict(PAIR["tasks"][0]), {**PAIR["tasks"][1], "rows": 96}]
    problem, target = tiled({**PAIR, "tasks": tasks})
    choice = select([plan], _request(problem, target), options=OPTIONS)
    assert (choice.kind, choice.path, choice.plan) == ("fallback", "separate", None)
    assert "r0 rows=96 is outside [64, 64]" in choice.reason
    assert choice.cost["launches"] == 2
    assert choice.cost["makespan"] == choice.cost["device_makespan"] + choice.cost["overhead"]
    assert verify(schedule_to_dict(choice.schedule)).legal


def test_a_wider_domain_serves_more_shapes(plan_dict: dict[str, Any]) -> None:
    document = copy.deepcopy(plan_dict)
    document["domain"]["tasks"]["r0"]["shapes"]["rows"] = [32, 128]
    plan = plan_from_dict(document, "p.plan.json")
    tasks = [dict(PAIR["tasks"][0]), {**PAIR["tasks"][1], "rows": 96}]
    assert domain_failures(plan.domain, _request(*tiled({**PAIR, "tasks": tasks}))) == []


@pytest.mark.parametrize(("edit", "path"), [
    (lambda d: d.pop("domain"), "$"),
    (lambda d: d["domain"]["tasks"]["g0"]["shapes"].update(M=[9, 3]),
     "$.domain.tasks.g0.shapes.M"),
    (lambda d: d["domain"]["tasks"]["g0"]["shapes"].update(M=["1", 3]),
     "$.domain.tasks.g0.shapes.M[0]"),
    (lambda d: d["fallback"].update(preferred="no"), "$.fallback.preferred"),
    (lambda d: d["schedule"].update(makespan=-1.5), "$.schedule.makespan"),
])
def test_a_bad_plan_file_names_the_json_path(plan_dict: dict[str, Any], edit: Any,
                                             path: str) -> None:
    document = copy.deepcopy(plan_dict)
    edit(document)
    with pytest.raises(InputError) as error:
        plan_from_dict(document, "bad.plan.json")
    assert error.value.path == path


def test_compare_and_select_commands(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """What compare prints, the plan it saves and what select runs agree, whatever the
    machine's speed: each figure is checked against the same run's plan, not against a
    fixture solved at another moment (a loaded machine had made the two differ)."""
    workload = tmp_path / "pair.json"
    workload.write_text(json.dumps(PAIR))
    plans = tmp_path / "plans"
    argv = ["compare", str(workload), "--json", "--time-limit", "0.2", "--workers", "1",
            "--reproducible",  # as the fixture solves: the same work, the same answers
            "--save-plan", str(plans)]
    assert main(argv) == 0
    figures = json.loads(capsys.readouterr().out)
    makespans = {p["name"]: p["makespan"] for p in figures["paths"]}
    assert list(makespans) == ["separate", "concurrent", "fused-barrier", "fused-interleaved"]
    [plan] = read_plans(plans)
    assert plan.cost["makespan"] == makespans["fused-interleaved"]
    assert plan.fallback["makespan"] == makespans[plan.fallback["path"]]
    assert verify(schedule_to_dict(plan.schedule)).legal
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"format": "npu-request/1", "workload": "pair.json",
                                   "free_bytes": {"VTCM": 4 << 20}}))
    out = tmp_path / "run.json"
    assert main(["select", "--plans", str(plans), str(request), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    runs = (f"fallback: {plan.fallback['path']}" if plan.fallback["preferred"]
            else "plan: fused-interleaved")
    assert text.startswith(f"{runs} from ")
    assert verify(json.loads(out.read_text())).legal
    request.write_text(json.dumps({"format": "npu-request/1", "workload": "pair.json",
                                   "free_bytes": {"L2": 1}}))
    assert main(["select", "--plans", str(plans), str(request)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "$.free_bytes.L2" in error


def test_write_plan_names_the_file_after_problem_and_target(
        tmp_path: Path, compared: dict[str, Comparison]) -> None:
    written = write_plan(make_plan(compared["chain"]), tmp_path)
    assert written.name == "chain.hexagon-v75.plan.json"
    assert [p.source for p in read_plans(tmp_path)] == [str(written)]
