"""schedsearch.plot: pictures render headless to real image files, or fail cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from models.errors import InputError
from models.formats import Schedule, schedule_from_dict
from schedsearch.plot import plot_paths, plot_schedule

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which a PNG must start with."""
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_plot_schedule_writes_a_png_and_leaves_no_temporary(schedule: Schedule,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "gantt.png"
    plot_schedule(schedule, out)
    width, height = png_size(out)
    assert width > 600 and height > 300
    assert [p.name for p in tmp_path.iterdir()] == ["gantt.png"]


def test_the_picture_gets_the_usual_permissions(schedule: Schedule, tmp_path: Path) -> None:
    """Not mkstemp's 0o600: a picture is for sharing."""
    previous = os.umask(0o022)
    try:
        plot_schedule(schedule, tmp_path / "gantt.png")
    finally:
        os.umask(previous)
    assert (tmp_path / "gantt.png").stat().st_mode & 0o777 == 0o644


def test_plot_schedule_follows_the_suffix(schedule: Schedule, tmp_path: Path) -> None:
    plot_schedule(schedule, tmp_path / "gantt.svg")
    assert b"<svg" in (tmp_path / "gantt.svg").read_bytes()[:400]


def test_plot_schedule_draws_an_illegal_schedule_too(schedule_doc: dict[str, Any],
                                                     tmp_path: Path) -> None:
    """A picture is how one looks at a broken schedule, so it must not need a legal one."""
    schedule_doc["ops"]["v0"]["units"] = {"HVX": [5]}
    schedule_doc["ops"]["v1"]["mode"] = 7
    schedule_doc["ops"]["stray"] = {"mode": 0, "start": -20, "end": 900, "units": {}}
    schedule_doc["buffers"]["a1"]["offset"] = 4000  # runs past the capacity
    schedule_doc["buffers"]["o0"]["free"] = 50  # freed before allocated
    plot_schedule(schedule_from_dict(schedule_doc), tmp_path / "broken.png")
    png_size(tmp_path / "broken.png")


def test_plot_paths_draws_several_schedules_on_one_axis(schedule: Schedule,
                                                        schedule_doc: dict[str, Any],
                                                        tmp_path: Path) -> None:
    for placement in schedule_doc["ops"].values():
        placement["start"] *= 2
        placement["end"] *= 2
    slower = schedule_from_dict(schedule_doc)
    out = tmp_path / "paths.png"
    plot_paths([("interleaved", schedule), ("sequential", slower)], out)
    _, two_high = png_size(out)
    plot_paths([("interleaved", schedule)], out)
    _, one_high = png_size(out)
    assert two_high > one_high


def test_plot_paths_refuses_an_empty_list(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one"):
        plot_paths([], tmp_path / "paths.png")


def test_an_unknown_image_type_is_an_input_error(schedule: Schedule, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="xyz") as caught:
        plot_schedule(schedule, tmp_path / "gantt.xyz")
    assert caught.value.source == str(tmp_path / "gantt.xyz")
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_path_is_an_input_error_and_keeps_the_old_file(
        schedule: Schedule, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot write"):
        plot_schedule(schedule, tmp_path / "missing" / "gantt.png")
    directory = tmp_path / "gantt.png"
    directory.mkdir()  # os.replace cannot put a file over a directory
    with pytest.raises(InputError, match="cannot write"):
        plot_schedule(schedule, directory)
    assert [p.name for p in tmp_path.iterdir()] == ["gantt.png"]
    assert directory.is_dir()


@pytest.mark.slow
def test_commands_that_draw_nothing_do_not_load_matplotlib() -> None:
    code = ("import sys\nfrom schedsearch.cli import build_parser\nbuild_parser()\n"
            "assert 'matplotlib' not in sys.modules, 'matplotlib was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
