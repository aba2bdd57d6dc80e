"""A file of the user's named like a package schedsearch needs (``models.py``).

The distribution installs three top-level packages, ``schedsearch``, ``models`` and
``checker`` (the layout the people who use it chose). ``python -m schedsearch`` and a
script put their own folder first on ``sys.path``, so a ``models.py`` (or ``models/``)
there is imported instead of the package, and the first import inside schedsearch fails
with "'models' is not a package". This finds that file before anything else is imported,
so the command can say so in one line.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

__all__ = ["SIBLINGS", "shadowing_file", "shadowing_message"]

#: The top-level packages installed beside ``schedsearch`` that it imports.
SIBLINGS = ("models", "checker")


def shadowing_file() -> str | None:
    """The file or folder imported as one of :data:`SIBLINGS` that is not the package
    installed beside ``schedsearch``, or None when every one is the installed one."""
    root = Path(__file__).resolve().parent.parent
    for name in SIBLINGS:
        module = sys.modules.get(name)
        spec = module.__spec__ if module is not None else importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        found = Path(spec.origin).resolve()
        if found != root / name / "__init__.py":
            return str(found.parent if found.name == "__init__.py" else found)
    return None


def shadowing_message(path: str) -> str:
    """One line: which file hides which package, and what to do."""
    name = Path(path).stem
    return (f"{path} hides the package {name!r} schedsearch needs (Python imports from "
            f"the script's or the current folder first): rename it, or run from another "
            f"folder")
