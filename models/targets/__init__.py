"""The bundled ``npu-target/1`` hardware descriptions, loadable by name or from a file.

A name refers to ``<name>.json`` shipped in this package (so it works from an installed
wheel); anything else is read as a path. Each bundled target states, in
``meta.sources``, where every figure comes from or that it is an assumption.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from models.errors import InputError
from models.formats import Target, read_target_file, target_from_dict
from models.jsonio import parse_json_text

__all__ = ["load_target", "target_names"]


def target_names() -> list[str]:
    """The names of the bundled targets, sorted."""
    return sorted(entry.name.removesuffix(".json")
                  for entry in resources.files(__name__).iterdir()
                  if entry.name.endswith(".json"))


def load_target(name_or_path: str) -> Target:
    """A bundled target by name, else an ``npu-target/1`` file; InputError otherwise."""
    if name_or_path in target_names():
        text = resources.files(__name__).joinpath(f"{name_or_path}.json").read_text("utf-8")
        return target_from_dict(parse_json_text(text, name_or_path), name_or_path)
    if Path(name_or_path).is_file():
        return read_target_file(name_or_path)
    raise InputError(f"no such target file or bundled target; bundled targets: "
                     f"{', '.join(target_names())}", source=name_or_path, rule="TARGET")
