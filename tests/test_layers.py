"""The package layers point down only, and no module imports another in a cycle.

Layers, lowest first (docs/DESIGN's map): ``models`` (data, formats, the cost model),
``schedsearch.engine`` (the search), the features (every other ``schedsearch`` module),
the CLI (``schedsearch.commands``, ``schedsearch.cli``). A module may import its own layer
or a lower one. The checker stands apart: the features and the CLI may use it, ``models``
and the engine never do (a plain solve must not load it).

The graph is read from the source, every ``import`` statement wherever it stands, so a
function-level import counts as much as one at the top.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("models", "schedsearch", "checker")
LAYERS = ("models", "engine", "features", "cli")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _targets(name: str, path: Path, node: ast.Import | ast.ImportFrom,
             modules: dict[str, Path]) -> list[str]:
    """The project modules one import statement names (``from p import m`` names ``p.m``
    when that is a module, else ``p``)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        if node.level:
            package = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
            base = ".".join(filter(None, [package, node.module]))
        else:
            base = node.module or ""
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                 for a in node.names]
    found = []
    for target in names:
        while target not in modules and "." in target:
            target = target.rpartition(".")[0]
        if target in modules and target != name:
            found.append(target)
    return found


def import_graph() -> nx.DiGraph:
    """Every project module, with an edge for each project module it imports."""
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph.add_edges_from((name, t) for t in _targets(name, path, node, modules))
    return graph


def layer(module: str) -> str:
    """The layer of a ``models`` or ``schedsearch`` module."""
    if module.split(".")[0] == "models":
        return "models"
    if module == "schedsearch.engine" or module.startswith("schedsearch.engine."):
        return "engine"
    if module in ("schedsearch", "schedsearch.cli", "schedsearch.__main__") \
            or module.startswith("schedsearch.commands"):
        return "cli"
    return "features"


def stale_imports(folders: tuple[str, ...]) -> list[str]:
    """Imports in ``folders`` of a project module that this tree does not have. Such an
    import can still succeed, through an editable install of another checkout, which
    would hide a module that moved."""
    modules = _modules()
    stale = []
    for folder in folders:
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom)
                         and node.module and not node.level else [])
                stale += [f"{path.relative_to(ROOT)}: {name}" for name in names
                          if name.split(".")[0] in PACKAGES and name not in modules]
    return stale


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    return import_graph()


def test_the_graph_sees_function_level_imports(graph: nx.DiGraph) -> None:
    # commands.solve imports the checker inside run(), only for --verify
    assert any(b.startswith("checker") for b in graph.successors("schedsearch.commands.solve"))
    assert graph.has_edge("schedsearch.commands.solve", "schedsearch.engine.search")


def test_every_import_names_a_module_of_this_tree() -> None:
    assert stale_imports(("models", "schedsearch", "checker", "tests", "benchmarks")) == []


def test_no_import_cycle(graph: nx.DiGraph) -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == [], f"modules that import each other in a cycle: {cycles}"


def upward(graph: nx.DiGraph) -> list[str]:
    """The imports from a lower layer to a higher one (the checker's are judged apart)."""
    return [f"{a} ({layer(a)}) -> {b} ({layer(b)})" for a, b in graph.edges
            if not (a.startswith("checker") or b.startswith("checker"))
            and LAYERS.index(layer(a)) < LAYERS.index(layer(b))]


def test_layers_point_down(graph: nx.DiGraph) -> None:
    found = upward(graph)
    assert found == [], "imports from a lower layer to a higher one:\n" + "\n".join(found)


def test_the_checker_stands_apart(graph: nx.DiGraph) -> None:
    wrong = [f"{a} -> {b}" for a, b in graph.edges
             if (a.startswith("checker") and not b.startswith("checker"))
             or (b.startswith("checker") and not a.startswith("checker")
                 and layer(a) in ("models", "engine"))]
    assert wrong == []


def test_the_layer_rule_catches_an_upward_import() -> None:
    graph = nx.DiGraph([("schedsearch.engine.search", "schedsearch.paths"),
                        ("schedsearch.paths", "schedsearch.engine.search"),
                        ("schedsearch.commands.solve", "models.formats")])
    assert upward(graph) == ["schedsearch.engine.search (engine) -> schedsearch.paths "
                             "(features)"]


_CHECKER_LOADED = "print(sorted(m for m in sys.modules if m.split('.')[0] == 'checker'))"


def _run(code: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=True)
    return done.stdout.strip().splitlines()[-1]


def test_a_plain_solve_loads_no_checker_module(tmp_path: Path) -> None:
    code = (f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
            "from models.workload import load_problem_input\n"
            "from schedsearch import solve\n"
            "problem, target = load_problem_input('gemm-rmsnorm-v75', None)\n"
            "solve(problem, target, time_limit=2.0, workers=1)\n" + _CHECKER_LOADED)
    assert _run(code, ROOT) == "[]"


@pytest.mark.slow
def test_the_solve_command_loads_no_checker_module_without_verify(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    code = (f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
            "from schedsearch.cli import main\n"
            f"assert main(['solve', 'gemm-rmsnorm-v75', '-o', {str(out)!r}, '--time-limit', "
            "'2', '--workers', '1']) == 0\n" + _CHECKER_LOADED)
    assert _run(code, ROOT) == "[]"
    assert out.is_file()
