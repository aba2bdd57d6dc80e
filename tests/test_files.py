"""The one atomic writer: whole or nothing, and the usual file mode for every format."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from models.files import write_atomic, write_json_atomic, write_text_atomic
from schedsearch.engine.placement import PlacementBuffer, write_csv


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_json_text_and_csv_files_get_the_usual_mode(tmp_path: Path, umask_022: None) -> None:
    write_json_atomic(tmp_path / "a.json", {"x": 1})
    write_text_atomic(tmp_path / "a.txt", "x\n")
    write_csv(tmp_path / "a.csv", [PlacementBuffer("b", 0, 2, 8)], {"b": 0})
    assert {p.name: _mode(p) for p in tmp_path.iterdir()} == \
        {"a.json": 0o644, "a.txt": 0o644, "a.csv": 0o644}


def test_the_mode_follows_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        write_json_atomic(tmp_path / "private.json", [])
    finally:
        os.umask(previous)
    assert _mode(tmp_path / "private.json") == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old")

    def fail(stream: BinaryIO) -> None:
        raise ValueError("half way")

    with pytest.raises(ValueError, match="half way"):
        write_atomic(path, fail)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_json_is_indented_with_a_final_newline(tmp_path: Path) -> None:
    write_json_atomic(tmp_path / "d.json", {"a": [1]})
    assert (tmp_path / "d.json").read_text() == '{\n "a": [\n  1\n ]\n}\n'
