"""A user's ``models.py`` beside them hides the installed ``models`` package: the command
says so in one line naming the file (it failed with "'models' is not a package")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def _run(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *argv], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("hider", ["models.py", "models/__init__.py", "checker.py"])
def test_python_m_schedsearch_names_the_file_that_hides_a_package(
        tmp_path: Path, hider: str) -> None:
    path = tmp_path / hider
    path.parent.mkdir(exist_ok=True)
    path.write_text("x = 1\n")
    done = _run(tmp_path, "-m", "schedsearch", "targets")
    assert done.returncode == 2, done.stderr
    named = path.parent if path.name == "__init__.py" else path
    assert done.stderr == (f"schedsearch: error: {named} hides the package "
                           f"{named.stem!r} schedsearch needs (Python imports from the "
                           f"script's or the current folder first): rename it, or run "
                           f"from another folder\n")


def test_the_library_raises_an_import_error_saying_the_same(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text("x = 1\n")
    done = _run(tmp_path, "-c", "import schedsearch; schedsearch.solve")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith(
        f"ImportError: {tmp_path / 'models.py'} hides the package 'models'")


def test_nothing_is_said_without_such_a_file(tmp_path: Path) -> None:
    done = _run(tmp_path, "-m", "schedsearch", "targets")
    assert done.returncode == 0 and "hexagon-v75" in done.stdout and done.stderr == ""
