"""The ``schedsearch`` frame: every listed command is reachable, errors end in exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from schedsearch import cli


def test_every_listed_command_is_registered(capsys) -> None:
    assert cli.main(["--help"]) == 0
    listed = capsys.readouterr().out
    for name in cli.COMMANDS:
        assert f"    {name} " in listed


def test_help_lists_every_command_without_loading_one() -> None:
    """``schedsearch --help`` names the commands from :data:`cli.SUMMARIES` alone: no
    command module, hence no OR-Tools, SciPy or Matplotlib, is imported for it."""
    code = ("import sys\nfrom schedsearch.cli import main\nassert main(['--help']) == 0\n"
            "print(sorted(m for m in sys.modules if m.startswith('schedsearch.commands.')"
            " or m.split('.')[0] in ('ortools', 'scipy', 'matplotlib')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert set(cli.SUMMARIES) == set(cli.COMMANDS)


def test_unusable_input_is_one_line_and_exit_2(tmp_path, capsys) -> None:
    junk = tmp_path / "p.json"
    junk.write_text("{not json")
    assert cli.main(["bound", str(junk), "--target", "hexagon-v75"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"schedsearch: error: {junk}: $: JSON: ")


@pytest.mark.parametrize("argv", [
    ["solve", "gemm-rmsnorm-v75", "-o", "x.json", "--time-limit", "nan"],
    ["compare", "gemm-rmsnorm-v75", "--time-limit", "0"],
    ["tune", "gemm-rmsnorm-v75", "--workers", "0"],
    ["select", "r.json", "--plans", ".", "--workers", "two"],
    ["tile", "gemm-rmsnorm-v75", "--scale", "nan"],  # was a traceback
    ["tile", "gemm-rmsnorm-v75", "--scale", "inf"],
])
def test_bad_numeric_options_are_refused_before_anything_runs(argv, capsys) -> None:
    assert cli.main(argv) == 2
    assert "error: argument --" in capsys.readouterr().err


def test_a_closed_pipe_ends_quietly() -> None:
    # The reader closes at once; a long output must not end in a BrokenPipeError traceback.
    script = ("import sys; from schedsearch.cli import main; "
              "sys.exit(main(['target', 'hexagon-v75']))")
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        process.stdout.close()
        _, err = process.communicate(timeout=60)
    assert b"Traceback" not in err
