"""``tune`` drops a default configuration that does not fit and searches the feasible
ones (issue #17 item 7); ``tune -o X.toml`` writes the chosen configuration back as a
workload file that every command takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker import verify
from models.errors import InputError
from models.formats import schedule_to_dict
from models.targets import load_target
from models.workload import load_workload, tile
from schedsearch.cli import main
from schedsearch.tuning.joint import SCREEN_SHARE, tune
from schedsearch.tuning.screen import UNITS_PER_SECOND
from tests.tuning.workloads import configured, small_vtcm, tiny

#: 256 x 256 f16 operand blocks (128 KiB each) and a 256 KiB accumulator, read by one
#: matrix op: more than a 384 KiB VTCM holds, while 128 x 128 blocks fit easily.
BIG_BLOCKS = [{"name": "g0", "kind": "gemm", "M": 512, "N": 256, "K": 256,
               "bm": 256, "bn": 256, "bk": 256}]


def test_a_default_that_does_not_fit_is_dropped_and_a_feasible_one_chosen() -> None:
    workload, target = tiny(tasks=BIG_BLOCKS), small_vtcm(384)
    with pytest.raises(InputError):
        tile(workload, target)  # the workload as given does not fit
    result = tune(workload, target, time_limit=0.5)  # legality and the choice, not quality
    assert result.default_makespan is None and result.default_schedule is None
    assert result.as_dict()["default_makespan"] is None
    assert verify(schedule_to_dict(result.schedule)).legal
    assert result.schedule.problem == tile(configured(workload, result.chosen), target)
    assert all(not c.default for c in result.candidates)


def test_a_workload_whose_leanest_configuration_does_not_fit_is_still_refused() -> None:
    with pytest.raises(InputError) as caught:
        tune(tiny(tasks=BIG_BLOCKS), small_vtcm(8), time_limit=0.5)
    assert caught.value.rule == "FIT"


def test_the_tuned_workload_file_reads_back_as_the_chosen_configuration(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tuned.toml"
    source = tmp_path / "tiny.toml"
    source.write_text('name = "tiny"\ntarget = "hexagon-v75"\n[[tasks]]\nname = "g0"\n'
                      'kind = "gemm"\nM = 128\nN = 128\nK = 64\n[[tasks]]\nname = "r0"\n'
                      'kind = "rmsnorm"\nrows = 64\ncols = 256\neps = 1e-5\n')
    assert main(["tune", str(source), "--time-limit", "0.5", "-o", str(out), "--json"]) == 0
    chosen = json.loads(capsys.readouterr().out)["chosen"]
    original, tuned = load_workload(str(source)), load_workload(str(out))
    assert tuned.name == original.name and tuned.target == original.target
    assert tuned.tasks == configured(original, chosen).tasks


def test_a_screening_budget_smaller_than_the_default_still_screens_the_default() -> None:
    """The default is the tuning's starting point: a limit whose screening work is less
    than its ops overdraws for it instead of ending as an interrupt (it once did)."""
    workload = load_workload("gemm-rmsnorm-v75")
    target = load_target(workload.target)
    limit = 0.01
    screening = SCREEN_SHARE * limit * UNITS_PER_SECOND
    assert len(tile(workload, target).ops) > screening  # the case itself
    result = tune(workload, target, time_limit=limit, seed=0, workers=1)
    assert result.chosen == result.default and result.screened >= 1
    assert verify(schedule_to_dict(result.schedule)).legal
