"""Bundled targets: names, loading by name or file, the stated figures and their sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.errors import InputError
from models.formats import target_to_dict
from models.targets import load_target, target_names


def test_names() -> None:
    assert target_names() == ["ascend-910b-core", "hexagon-v68", "hexagon-v73", "hexagon-v75",
                              "hexagon-v79"]


@pytest.mark.parametrize(("name", "vtcm"), [("hexagon-v68", 4 << 20),
                                            ("hexagon-v73", 8 << 20), ("hexagon-v75", 8 << 20),
                                            ("hexagon-v79", 8 << 20)])
def test_hexagon_figures(name: str, vtcm: int) -> None:
    target = load_target(name)
    assert target.memories["VTCM"].capacity_bytes == vtcm
    assert target.memories["VTCM"].alignment_bytes == 2048
    assert target.lanes["HMX"] == 1 and set(target.lanes) == {"HMX", "HVX", "DMA"}
    assert set(target.budgets) == {"DDR_BW"}


def test_ascend_is_a_different_backend() -> None:
    target = load_target("ascend-910b-core")
    assert target.lanes == {"CUBE": 1, "VECTOR": 2, "MTE2": 1, "MTE3": 1}
    assert {name: m.capacity_bytes for name, m in target.memories.items()} == {
        "L1": 512 * 1024, "UB": 192 * 1024}
    assert set(target.budgets) == {"GM_BW"}


def _figures(value: object, path: str) -> list[str]:
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _figures(item, f"{path}.{key}")]
    if isinstance(value, list):
        return [path] if any(isinstance(v, int | float) for v in value) else []
    return [path] if isinstance(value, int | float) and not isinstance(value, bool) else []


@pytest.mark.parametrize("name", target_names())
def test_every_figure_has_a_source_or_says_it_is_an_assumption(name: str) -> None:
    document = target_to_dict(load_target(name))
    sources = document["meta"]["sources"]
    for key in ("lanes", "budgets", "memories", "costs"):
        for path in _figures(document[key], key):
            note = sources.get(path.removeprefix("."))
            assert note is not None, f"{name}: {path} has no source"
            assert note.startswith(("source:", "assumption:")), (path, note)


def test_load_from_a_file_and_unknown_names(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({**target_to_dict(load_target("hexagon-v75")), "name": "mine"}))
    assert load_target(str(path)).name == "mine"
    with pytest.raises(InputError) as caught:
        load_target("hexagon-v99")
    assert caught.value.rule == "TARGET" and "hexagon-v75" in caught.value.message
