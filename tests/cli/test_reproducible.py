"""``--reproducible``: the commands that search pass it on; without it they use the time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schedsearch import cli
from schedsearch.commands import compare as compare_command
from schedsearch.commands import solve as solve_command


@pytest.mark.parametrize(("flag", "said"), [(False, "searched until the time limit"),
                                            (True, "")])
def test_solve_passes_reproducible_on_and_says_how_the_search_stopped(
        flag: bool, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """One solve per flag checks both what reaches the search and what the summary says."""
    seen: dict[str, Any] = {}
    real = solve_command.solve_report

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(solve_command, "solve_report", recording)
    argv = ["solve", "gemm-rmsnorm-v75", "-o", str(tmp_path / "s.json"), "--time-limit", "0.5"]
    assert cli.main(argv + (["--reproducible"] if flag else [])) == 0
    assert seen["reproducible"] is flag
    summary = [line for line in capsys.readouterr().err.splitlines()
               if line.startswith("makespan")][0]
    if said:
        assert said in summary
    else:
        assert "searched until" not in summary


def test_compare_solves_with_the_options_given(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def recording(problem: Any, target: Any, *, options: Any, **kwargs: Any) -> Any:
        seen.append(options)
        raise KeyboardInterrupt  # enough: the options are what this test is about

    monkeypatch.setattr(compare_command, "compare", recording)
    assert cli.main(["compare", "gemm-rmsnorm-v75", "--reproducible", "--seed", "7"]) == 130
    assert seen[0].reproducible is True and seen[0].seed == 7
    assert seen[0].search()["reproducible"] is True
