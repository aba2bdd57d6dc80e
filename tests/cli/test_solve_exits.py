"""`schedsearch solve`'s exit status says what happened (issue #15 item 3, issue #17).

0 a schedule was written; 1 no schedule, for each reason (proved infeasible, none found
within the limit, the writer-order heuristic gave up), the message saying which; 2
unusable input; 130 interrupted (tests/cli/test_interrupt.py).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from models.formats import Buffer, Problem, Target, Task, problem_to_dict, target_to_dict
from schedsearch.cli import main
from schedsearch.engine import search as api
from schedsearch.engine.cpsat.model import Outcome
from schedsearch.engine.result import NoSchedule, SolveStatus
from tests.engine.problems import compute, gemm_problem, packing_problem, target


def _files(tmp_path: Path, problem: Problem, tgt: Target) -> tuple[str, str]:
    """The problem and target written as files (the problem naming no target)."""
    problem_file, target_file = tmp_path / "p.json", tmp_path / "t.json"
    problem_file.write_text(json.dumps(problem_to_dict(problem)))
    target_file.write_text(json.dumps(target_to_dict(tgt)))
    return str(problem_file), str(target_file)


def _solve(tmp_path: Path, problem: Problem, tgt: Target,
           capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, str, Path]:
    problem_file, target_file = _files(tmp_path, problem, tgt)
    out = tmp_path / "s.json"
    # a short limit: these tests read exit statuses and messages, not how good a schedule is
    code = main(["solve", problem_file, "--target", target_file, "-o", str(out),
                 "--time-limit", "0.5", *options])
    return code, capsys.readouterr().err, out


def test_a_schedule_is_exit_0_with_a_typed_status(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, err, out = _solve(tmp_path, gemm_problem(), target(), capsys)
    assert code == 0, err
    status = json.loads(out.read_text())["meta"]["status"]
    assert status in (SolveStatus.OPTIMAL.value, SolveStatus.FEASIBLE.value)


def test_contradicting_dependencies_are_infeasible_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem = gemm_problem()
    first, second = sorted(problem.ops)[:2]
    cyclic = replace(problem, after=((first, second), (second, first)))
    code, err, out = _solve(tmp_path, cyclic, target(), capsys)
    assert code == 1
    assert "INFEASIBLE" in err and "CYCLE" in err and first in err
    assert not out.exists()


def test_a_cycle_only_whole_tasks_have_names_the_granularity_in_the_status(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """t0.get reads t1's value v, which t1.over reads and overwrites (issue 34)."""
    ops = {"t0.get": compute("t0", [("x", "v")], []),
           "t1.put": compute("t1", [], [("x", "v")]),
           "t1.over": compute("t1", [("x", "v")], [("x", "u")])}
    problem = Problem("whole", {}, {"t0": Task("k"), "t1": Task("k")},
                      {"x": Buffer("M", 64)}, ops)
    code, err, out = _solve(tmp_path, problem, target(), capsys, "--granularity", "task")
    assert code == 1 and not out.exists()
    assert "no schedule (INFEASIBLE at granularity=task)" in err
    assert "CYCLE" in err and "try --granularity tile" in err


def test_no_schedule_within_the_limit_is_exit_1_saying_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Every greedy pass stalls on this packing; the exact last resort is made to run out
    of time (as it would on a slow machine or a harder packing)."""
    def out_of_time(*args: object, **kwargs: object) -> Outcome:
        return Outcome("UNKNOWN", None, None, None, 0.0, cut=True)

    # the exact fallback imports CP-SAT's solve where it runs it
    monkeypatch.setattr("schedsearch.engine.cpsat.model.solve_built", out_of_time)
    code, err, out = _solve(tmp_path, packing_problem(), target(capacity=7, alignment=2),
                            capsys)
    assert code == 1
    assert "NO_SOLUTION_IN_TIME" in err and "ran out of time" in err
    assert not out.exists()


def test_a_writer_order_heuristic_that_gives_up_is_not_called_a_cycle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("schedsearch.engine.hazards._order_writers", lambda *args: False)
    code, err, out = _solve(tmp_path, gemm_problem(), target(), capsys)
    assert code == 1
    assert "NO_SOLUTION_FOUND" in err and "WRITER_ORDER" in err and "gave up" in err
    assert "CYCLE" not in err
    assert not out.exists()


def test_unusable_input_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem_file, _ = _files(tmp_path, gemm_problem(), target())
    out = tmp_path / "s.json"
    assert main(["solve", problem_file, "--target", "no-such-target", "-o", str(out)]) == 2
    assert not out.exists()


def test_the_api_says_why_there_is_no_schedule() -> None:
    problem = gemm_problem()
    first, second = sorted(problem.ops)[:2]
    with pytest.raises(NoSchedule) as refused:
        api.solve_report(replace(problem, after=((first, second), (second, first))),
                         target(), time_limit=1)
    assert refused.value.status is SolveStatus.INFEASIBLE
