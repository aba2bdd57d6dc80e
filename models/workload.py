"""Workload files (what a user writes) and tiling them into an ``npu-problem/1``.

A workload names a target and lists tasks, each a ``kind`` with flat parameters
(see ``docs/models.md``). TOML or JSON::

    name = "gemm-rmsnorm"
    target = "hexagon-v75"
    [[tasks]]
    name = "g0"
    kind = "gemm"
    M = 512
    N = 512
    K = 256

Wherever a workload file is accepted, the name of a bundled example is accepted too.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from models.cost import cost_model
from models.errors import InputError
from models.formats import (
    PROBLEM_FORMAT,
    Problem,
    Target,
    problem_from_dict,
    read_target_file,
)
from models.heap import cycles_uncollected
from models.jsonio import MAX_DEPTH, json_path, load_json_file, parse_json_text
from models.ops import KINDS
from models.ops.builder import ProblemBuilder
from models.ops.params import read_params
from models.targets import load_target, target_names
from models.validate import find_problem_error, validate_problem
from models.workload_data import Workload, WorkloadTask

__all__ = ["WORKLOAD_FORMAT", "WorkloadTask", "Workload", "example_names", "example_text",
           "load_workload", "workload_target", "workload_target_path",
           "workload_from_dict", "tile", "scaled", "load_problem_input"]

WORKLOAD_FORMAT = "npu-workload/1"
#: Workloads that would tile into more ops than this are refused before tiling (rule SIZE;
#: ``--max-ops`` raises it). The search is measured up to 8,000 ops (docs/search.md);
#: tiling and the lower bound, which no search limit can cut, took 4 s and 11 s at 20,000
#: ops on a loaded 2-core machine (``python benchmarks/bench_sizes.py``): seconds, where
#: a gigantic GEMM would take minutes and gigabytes.
MAX_OPS = 20_000
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
#: Per kind, the parameters that :func:`scaled` multiplies (the row dimension).
_SCALED = {"gemm": "M", "rmsnorm": "rows", "elementwise": "rows", "copy": "rows",
           "relayout": "rows", "softmax": "rows", "layernorm": "rows", "binary": "rows",
           "cast": "rows", "attention": "q_len"}


def _examples() -> Any:
    return resources.files("models").joinpath("examples")


def example_names() -> list[str]:
    """The bundled example workloads, sorted by name."""
    return sorted(Path(entry.name).stem for entry in _examples().iterdir()
                  if entry.name.endswith((".toml", ".json")))


def example_text(name: str) -> str:
    """The file text of bundled example ``name`` (a starting point to copy and edit);
    InputError (rule FILE) naming the examples if there is none by that name."""
    for suffix in (".toml", ".json"):
        entry = _examples().joinpath(name + suffix)
        if entry.is_file():
            return str(entry.read_text("utf-8"))
    raise InputError(f"no bundled example of that name; examples: "
                     f"{', '.join(example_names())}", source=name, rule="FILE")


def workload_from_dict(document: Any, source: str = "<workload>") -> Workload:
    """Check a parsed workload document; InputError names the JSON path and the rule."""
    def fail(path: str, message: str) -> InputError:
        return InputError(message, source=source, path=path, rule="FORMAT")

    if not isinstance(document, dict):
        raise fail("$", "expected an object (a table)")
    other = document.get("format", WORKLOAD_FORMAT)
    if other != WORKLOAD_FORMAT:  # a schedule, a plan...: say what it is, not what it lacks
        raise fail("$.format", f"this is a {other!r} document, not a workload: expected a "
                               f"{WORKLOAD_FORMAT} file (.toml or .json), a bundled example "
                               f"name, or where a problem is accepted a {PROBLEM_FORMAT} file")
    for key in ("name", "target", "tasks"):
        if key not in document:
            raise fail("$", f"missing required key {key!r}")
    for key in document:
        if key not in ("format", "name", "target", "tasks", "meta"):
            raise fail(json_path("$", key), f"unknown key {key!r}")
    for key in ("name", "target"):
        if not isinstance(document[key], str) or not document[key]:
            raise fail(json_path("$", key), "expected a non-empty string")
    if not isinstance(document["tasks"], list) or not document["tasks"]:
        raise fail("$.tasks", "expected a non-empty array of tasks")
    tasks: list[WorkloadTask] = []
    for i, raw in enumerate(document["tasks"]):
        path = json_path("$.tasks", i)
        if not isinstance(raw, dict):
            raise fail(path, "expected an object (a table)")
        for key in ("name", "kind"):
            if key not in raw:
                raise fail(path, f"missing required key {key!r}")
        name, kind = raw["name"], raw["kind"]
        if not isinstance(name, str) or not _NAME.match(name):
            raise fail(json_path(path, "name"), "a task name is letters, digits, '_' or '-'")
        if any(task.name == name for task in tasks):
            raise fail(json_path(path, "name"), f"duplicate task name {name!r}")
        if kind not in KINDS:
            raise fail(json_path(path, "kind"), f"unknown kind {kind!r}; known: "
                                                f"{', '.join(KINDS)}")
        params = {k: v for k, v in raw.items() if k not in ("name", "kind")}
        tasks.append(WorkloadTask(name, kind,
                                  read_params(KINDS[kind].PARAMS, params, name, path, source)))
    return Workload(document["name"], document["target"], tuple(tasks), source)


def _depth(value: Any) -> int:
    """How deeply arrays and tables nest in ``value`` (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else \
            item if isinstance(item, list) else ()
        for child in children:
            stack.append((child, level + 1))
        deepest = max(deepest, level)
    return deepest


def _parse_toml(text: str, source: str) -> Any:
    """Parse a TOML workload; nesting deeper than JSON's limit is refused like JSON's
    (the parser itself recurses, and ran out of stack at 500 levels)."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"not valid TOML: {error}", source=source, rule="TOML") from None
    except RecursionError:
        document = None
    if document is None or _depth(document) > MAX_DEPTH:
        raise InputError(f"not valid TOML: nesting deeper than {MAX_DEPTH} levels",
                         source=source, rule="TOML")
    return document


def load_workload(name_or_path: str, dims: Mapping[str, int] | None = None) -> Workload:
    """A bundled example by name, else a ``.toml`` or ``.json`` workload file, else an
    ``.onnx`` model (:mod:`models.onnx`; ``dims`` binds its symbolic dimensions)."""
    if Path(name_or_path).suffix == ".onnx":
        return _onnx_workload(name_or_path, dims or {})
    if dims:
        raise InputError("--dim applies to ONNX models only", source=name_or_path,
                         rule="DIM")
    if name_or_path in example_names():
        for suffix in (".toml", ".json"):
            entry = _examples().joinpath(name_or_path + suffix)
            if entry.is_file():
                text = entry.read_text("utf-8")
                parse = _parse_toml if suffix == ".toml" else parse_json_text
                return workload_from_dict(parse(text, name_or_path), name_or_path)
    path = Path(name_or_path)
    if path.is_dir():
        raise InputError("is a directory, not a workload file", source=name_or_path,
                         rule="FILE")
    if not path.is_file():
        raise InputError(f"no such workload file or bundled example; examples: "
                         f"{', '.join(example_names())}", source=name_or_path, rule="FILE")
    if path.suffix == ".toml":
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(f"cannot read: {error}", source=name_or_path,
                             rule="FILE") from None
        return workload_from_dict(_parse_toml(text, name_or_path), name_or_path)
    return workload_from_dict(load_json_file(path), name_or_path)


def workload_target_path(workload: Workload) -> Path | None:
    """Where the file ``workload``'s ``target`` names lies: relative to the workload's own
    folder (not the current directory); None for a bundled target name."""
    if workload.target in target_names():
        return None
    source = Path(workload.source)
    return (source.parent if source.is_file() else Path(".")) / workload.target


def workload_target(workload: Workload, option: str | None = None) -> Target:
    """The target a command runs ``workload`` on: ``option`` (``--target``, a name or a
    path as the user typed it) when given, else the workload's ``target``: a bundled
    target, or a file relative to the workload's folder. InputError naming the workload
    and ``$.target`` when it is neither."""
    if option:
        return load_target(option)
    path = workload_target_path(workload)
    if path is None:
        return load_target(workload.target)
    if not path.is_file():
        raise InputError(f"target {workload.target!r} is not a bundled target "
                         f"({', '.join(target_names())}) nor a file beside the workload "
                         f"({str(path)!r})", source=workload.source, path="$.target",
                         rule="TARGET")
    return read_target_file(path)


def _onnx_workload(path: str, dims: Mapping[str, int]) -> Workload:
    """The workload of an ONNX model; its target is :data:`models.onnx.lower.DEFAULT_TARGET`
    unless a caller's ``--target`` overrides it."""
    if not Path(path).is_file():
        raise InputError("no such ONNX model file", source=path, rule="FILE")
    try:
        from models.onnx import load_onnx_workload
    except ImportError:
        raise InputError("reading .onnx models needs the onnx package: "
                         "pip install 'npu-schedsearch[onnx]'", source=path,
                         rule="ONNX") from None
    return load_onnx_workload(path, dims)


def op_count(workload: Workload, target: Target) -> int:
    """How many ops :func:`tile` would make, from each kind's ``op_count`` (no tiling)."""
    model = cost_model(target)
    return sum(KINDS[task.kind].op_count(task.params, model) for task in workload.tasks)


def tile(workload: Workload, target: Target, max_ops: int = MAX_OPS) -> Problem:
    """Tile every task into ops on ``target``; the problem's ``meta.target`` names it.

    A problem that cannot run on the target (a block larger than its memory, say) is an
    InputError naming the workload file and the task (``$.tasks[i]``). One that would
    have more than ``max_ops`` ops is refused before tiling (rule SIZE), since tiling,
    bounding and searching it would take minutes and gigabytes.
    """
    count = op_count(workload, target)
    if count > max_ops:
        raise InputError(f"tiles into {count:,} ops on {target.name}, more than the limit of "
                         f"{max_ops:,}: use larger blocks (gemm bm/bn/bk, block_rows) or "
                         f"raise the limit with --max-ops", source=workload.source,
                         rule="SIZE")
    model = cost_model(target)
    builder = ProblemBuilder(target, model, workload.source)
    paths = {}
    with cycles_uncollected():
        for i, task in enumerate(workload.tasks):
            paths[task.name] = builder.path = json_path("$.tasks", i)
            KINDS[task.kind].build(builder, task.name, task.params)
        problem = builder.build(workload.name, {"target": target.name,
                                                "workload": workload.name})
        finding = find_problem_error(problem, target)
    if finding is not None:
        raise InputError(f"{finding.message} (at {finding.path} of the tiled problem)",
                         source=workload.source, path=paths.get(finding.task or "", "$"),
                         rule=finding.rule)
    return problem


def scaled(workload: Workload, factor: float) -> Workload:
    """The same workload with every task's row dimension (gemm ``M``, else ``rows``)
    multiplied by ``factor`` and rounded; op counts grow roughly in proportion.

    Equal extents stay equal, so a chain whose tasks share a tensor stays consistent.
    """
    if not math.isfinite(factor) or factor <= 0:
        raise ValueError(f"factor must be a finite number above 0, got {factor!r}")
    tasks = []
    for task in workload.tasks:
        key = _SCALED.get(task.kind)
        if key is None:
            raise InputError(f"task {task.name!r} ({task.kind}) has no row dimension to "
                             f"scale", source=workload.source, rule="SCALE")
        params = {**task.params, key: max(1, round(task.params[key] * factor))}
        tasks.append(replace(task, params=params))
    return replace(workload, name=f"{workload.name}x{factor:g}", tasks=tuple(tasks))


def _json_document(path: str) -> Any:
    """The parsed document if ``path`` is a JSON file (not an example name), else None."""
    if (path in example_names() or Path(path).suffix in (".toml", ".onnx")
            or not Path(path).is_file()):
        return None
    return load_json_file(path)


def load_problem_input(path_or_name: str, target_option: str | None,
                       max_ops: int = MAX_OPS,
                       dims: Mapping[str, int] | None = None) -> tuple[Problem, Target]:
    """A problem and its target from a workload (file or example name) or a problem file.

    The target is ``target_option`` if given, else the workload's target or the problem's
    ``meta.target``; a problem file without either is an InputError. A problem file's
    durations hold only for the target it was costed for: naming another one is an
    InputError (rule TARGET) that says how to get a problem for it. The problem is
    checked against the target (:func:`models.validate.validate_problem`); a workload
    that would tile into more than ``max_ops`` ops is refused (see :func:`tile`). An
    ``.onnx`` model is read with ``dims`` binding its symbolic dimensions.
    """
    if dims and Path(path_or_name).suffix != ".onnx":
        raise InputError("--dim applies to ONNX models only", source=path_or_name,
                         rule="DIM")
    document = _json_document(path_or_name)
    if not (isinstance(document, dict) and document.get("format") == PROBLEM_FORMAT):
        workload = (load_workload(path_or_name, dims) if document is None
                    else workload_from_dict(document, path_or_name))
        target = workload_target(workload, target_option)
        return tile(workload, target, max_ops), target
    meta = document.get("meta")
    costed_for = meta.get("target") if isinstance(meta, dict) else None
    name = target_option or costed_for
    if not isinstance(name, str) or not name:
        raise InputError("no target: give --target, or set meta.target in the problem",
                         source=path_or_name, path="$.meta", rule="TARGET")
    target = load_target(name)
    if isinstance(costed_for, str) and costed_for and target.name != costed_for:
        workload = meta.get("workload") if isinstance(meta, dict) else None
        raise InputError(
            f"this problem was costed for {costed_for!r} (its durations and sizes hold "
            f"there only), not for {target.name!r}: tile or solve the workload"
            f"{f' {workload!r}' if isinstance(workload, str) else ''} with --target "
            f"{name} instead", source=path_or_name, path="$.meta.target", rule="TARGET")
    problem = problem_from_dict(document, path_or_name, target)
    validate_problem(problem, target, path_or_name)
    return problem, target
