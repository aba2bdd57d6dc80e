"""The edges of the commands a new user hits (issue 31): each is one clear line and exit 2,
or says what it did."""

from __future__ import annotations

import fnmatch
import json
import tomllib
from pathlib import Path

import pytest

from checker.cli import main as schedcheck
from models.formats import schedule_to_dict, target_to_dict
from models.targets import load_target
from models.workload import load_workload, tile
from schedsearch.cli import main
from schedsearch.engine.search import solve
from schedsearch.version import package_version
from schedsearch.wording import counted

ROOT = Path(__file__).parents[2]

WORKLOAD = """format = "npu-workload/1"
name = "w"
target = "{target}"

[[tasks]]
name = "r0"
kind = "rmsnorm"
rows = 64
cols = 256
"""


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error, error
    return error


@pytest.fixture(scope="module")
def small_schedule() -> dict:
    workload = load_workload("gemm-rmsnorm-v75")
    target = load_target(workload.target)
    return schedule_to_dict(solve(tile(workload, target), target, time_limit=0.3, workers=1))


def test_chain_refuses_an_unwritable_plot_before_solving(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*_: object, **__: object) -> None:
        raise AssertionError("solved before the --plot path was checked")

    monkeypatch.setattr("schedsearch.commands.chain.chain_paths", never)
    assert main(["chain", "rmsnorm-gemm-chain-v75", "--plot", "/proc/x.png"]) == 2
    assert "--plot" in _error(capsys)


def test_a_workload_target_file_is_read_beside_the_workload(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    target = target_to_dict(load_target("hexagon-v75"))
    (folder / "mine.json").write_text(json.dumps({**target, "name": "mine"}))
    workload = folder / "w.toml"
    workload.write_text(WORKLOAD.format(target="mine.json"))
    monkeypatch.chdir(tmp_path)  # not the workload's folder
    assert main(["tile", str(workload), "-o", str(tmp_path / "p.json")]) == 0
    assert "on mine" in capsys.readouterr().out
    workload.write_text(WORKLOAD.format(target="absent.json"))
    assert main(["tile", str(workload)]) == 2
    error = _error(capsys)
    assert f"{workload}: $.target: TARGET: target 'absent.json'" in error
    assert str(folder / "absent.json") in error


def test_tune_writes_a_target_file_path_relative_to_the_tuned_workload(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "w"
    (folder / "out").mkdir(parents=True)
    (folder / "mine.json").write_text(json.dumps(target_to_dict(load_target("hexagon-v75"))))
    workload = folder / "w.toml"
    workload.write_text(WORKLOAD.format(target="mine.json"))
    tuned = folder / "out" / "tuned.toml"
    assert main(["tune", str(workload), "--time-limit", "0.3", "--reproducible",
                 "-o", str(tuned)]) == 0
    assert tomllib.loads(tuned.read_text())["target"] == "../mine.json"
    assert main(["tile", str(tuned), "-o", str(tmp_path / "p.json")]) == 0


@pytest.mark.parametrize("value", ["[" * 500 + "]" * 500, "{b = " * 500 + "1" + "}" * 500,
                                   "[" * 65 + "]" * 65])
def test_a_toml_nested_too_deep_is_one_line(tmp_path: Path, value: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text(f"a = {value}\n")
    assert main(["tile", str(deep)]) == 2
    assert "TOML: not valid TOML: nesting deeper than 64 levels" in _error(capsys)


def test_an_unterminated_json_string_says_at_once(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "abc')
    assert main(["tile", str(bad)]) == 2
    error = _error(capsys)
    assert "Unterminated string starting at line 1 column 10" in error and "at at" not in error


def test_place_echoes_at_most_a_short_piece_of_a_huge_header(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    zeros = tmp_path / "zeros.csv"
    zeros.write_bytes(b"\0" * 1_000_000)
    assert main(["place", str(zeros)]) == 2
    error = _error(capsys)
    assert len(error) < 600 and "(1,000,000 characters)" in error


@pytest.mark.parametrize("command", [["place"], ["calibrate", "hexagon-v75", "-o", "c.json"]])
def test_a_csv_that_is_not_utf8_names_the_line(tmp_path: Path, command: list[str],
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"id,lower,upper,size\nb0,0,\xff,8\n")
    assert main([command[0], *command[1:2], str(bad), *command[2:]]) == 2
    error = _error(capsys)
    assert "line 2" in error and "not UTF-8 text: byte 0xff at line 2 column 6" in error
    assert "line 0" not in error


@pytest.mark.parametrize("command", ["trace", "plot"])
def test_a_report_of_another_schedule_is_refused(
        tmp_path: Path, command: str, small_schedule: dict,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A legal report names no op: its counts tell whose report it is."""
    schedule = tmp_path / "s.json"
    schedule.write_text(json.dumps(small_schedule))
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"legal": True, "violations": [],
                                  "stats": {"ops": 4, "buffers": 3, "violations": 0}}))
    out = tmp_path / ("t.json" if command == "trace" else "t.png")
    assert main([command, str(schedule), "-o", str(out), "--violations", str(report)]) == 2
    assert "$.stats.ops: REPORT: the report is of a schedule with 4 ops" in _error(capsys)
    assert not out.exists()


def test_a_report_of_the_schedule_itself_is_taken(
        tmp_path: Path, small_schedule: dict, capsys: pytest.CaptureFixture[str]) -> None:
    schedule = tmp_path / "s.json"
    schedule.write_text(json.dumps(small_schedule))
    report = tmp_path / "r.json"
    document = {"legal": True, "violations": [],
                "stats": {"ops": len(small_schedule["ops"]),
                          "buffers": len(small_schedule["buffers"])}}
    report.write_text(json.dumps(document))
    assert main(["trace", str(schedule), "-o", str(tmp_path / "t.json"),
                 "--violations", str(report)]) == 0


def test_solve_says_what_the_peak_memory_stage_did(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    workload = tmp_path / "w.toml"
    workload.write_text(WORKLOAD.format(target="hexagon-v75"))
    assert main(["solve", str(workload), "-o", str(tmp_path / "s.json"), "--time-limit", "1",
                 "--reproducible", "--secondary", "peak-memory"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("peak memory: highest addresses sum to ")


def test_solve_help_says_the_search_uses_its_whole_limit(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "normally stops earlier" not in text
    assert "the search uses all of it" in text and "--reproducible" in text


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"schedsearch {package_version()} " \
                                              f"(npu-schedsearch)"


def test_schedcheck_help_cites_a_file_the_repository_has(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert schedcheck(["--help"]) == 0
    text = capsys.readouterr().out
    assert "FORMATS.md" not in text and "docs/formats.md" in text
    assert (ROOT / "docs" / "formats.md").is_file()


@pytest.mark.parametrize(("number", "noun", "text"), [
    (1, "launch", "1 launch"), (2, "launch", "2 launches"), (0, "op", "0 ops"),
    (1, "configuration", "1 configuration"), (3, "box", "3 boxes")])
def test_counted_nouns(number: int, noun: str, text: str) -> None:
    assert counted(number, noun) == text


@pytest.mark.parametrize(("number", "text"), [(1, "1 traced op"),
                                              (1234567, "1,234,567 traced ops")])
def test_counted_groups_thousands_and_counts_the_last_word(number: int, text: str) -> None:
    assert counted(number, "traced op", grouped=True) == text


def test_tile_counts_in_the_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = tmp_path / "w.toml"
    workload.write_text(WORKLOAD.format(target="hexagon-v75"))
    assert main(["tile", str(workload), "-o", str(tmp_path / "p.json")]) == 0
    assert "1 task on hexagon-v75" in capsys.readouterr().out


def test_every_data_file_of_the_packages_is_package_data() -> None:
    """The bundled measurements CSV was left out of the wheel."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = project["tool"]["setuptools"]["package-data"]
    missing = []
    for package in ("models", "schedsearch", "checker"):
        patterns = globs.get(package, [])
        for path in (ROOT / package).rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc") and \
                    "__pycache__" not in path.parts:
                relative = path.relative_to(ROOT / package).as_posix()
                if not any(fnmatch.fnmatch(relative, pattern) for pattern in patterns):
                    missing.append(f"{package}/{relative}")
    assert missing == []


def test_replay_plot_says_what_it_wrote(tmp_path: Path, small_schedule: dict,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from models.formats import schedule_from_dict
    from schedsearch.trace import schedule_to_trace

    schedule = tmp_path / "s.json"
    schedule.write_text(json.dumps(small_schedule))
    trace = tmp_path / "run.json"
    trace.write_text(json.dumps(schedule_to_trace(schedule_from_dict(small_schedule))))
    picture = tmp_path / "replay.png"
    assert main(["replay", str(schedule), str(trace), "--plot", str(picture)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {picture}"
    assert picture.stat().st_size > 0
