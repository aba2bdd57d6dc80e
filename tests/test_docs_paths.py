"""Every module path and dotted name the docs mention exists in this tree.

Modules move (the architecture step of issue 30 moved most of ``schedsearch/``); a doc
that points to a file or a function that is no longer there misleads the next reader.
The CHANGELOG is history and may name what has since moved.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", ROOT / "benchmarks" / "README.md",
               *(ROOT / "docs").glob("*.md")])
PACKAGES = ("schedsearch", "models", "checker", "benchmarks")
#: ``schedsearch/engine/search.py``: a module file of one of our packages.
FILE = re.compile(rf"(?<![\w/])(?:{'|'.join(PACKAGES)})/[A-Za-z0-9_/]*\.py")
#: ``benchmarks.md`` or a user's ``models.py`` is a file name, not a dotted name.
FILE_SUFFIXES = ("py", "md", "json", "toml", "csv", "png", "txt", "onnx")
#: ``schedsearch.engine.search.solve`` and the like, up to the first non-name character.
DOTTED = re.compile(rf"(?<![\w./-])(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+")


def _module_names(path: Path) -> set[str]:
    """The names a module defines or imports at its top level, or lists in ``__all__``
    (a package that imports its functions on first use, PEP 562, lists them there)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                names.update(ast.literal_eval(node.value))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _resolves(dotted: str) -> bool:
    """A dotted name resolves when its longest module prefix is a file or package of this
    tree and the rest (at most a name and one attribute of it) is defined there."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() \
            else base / "__init__.py"
        if not module.is_file():
            continue
        rest = parts[cut:]
        if not rest:
            return True
        if (base / f"{rest[0]}.py").is_file() or (base / rest[0]).is_dir():
            return True
        return rest[0] in _module_names(module) and len(rest) <= 2
    return False


def _mentions(doc: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        found += [(number, m.group(0)) for m in FILE.finditer(line)]
        found += [(number, m.group(0)) for m in DOTTED.finditer(line)
                  if m.group(0).rsplit(".", 1)[1] not in FILE_SUFFIXES]
    return found


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_the_docs_name_exists(doc: Path) -> None:
    missing = []
    for number, mention in _mentions(doc):
        exists = (ROOT / mention).exists() if "/" in mention else _resolves(mention)
        if not exists:
            missing.append(f"{doc.relative_to(ROOT)}:{number}: {mention}")
    assert not missing, "\n".join(missing)


def test_a_moved_module_is_caught() -> None:
    """The check itself: a name that is not in the tree is reported, one that is is not."""
    assert _resolves("schedsearch.cli.main")
    assert not _resolves("schedsearch.no_such_module.solve")
    assert FILE.findall("see `schedsearch/no_such.py`") == ["schedsearch/no_such.py"]
    assert not (ROOT / "schedsearch/no_such.py").exists()
