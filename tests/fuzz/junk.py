"""Junk for the readers: random JSON values, and legal documents with one subtree broken.

Why near-valid junk: random bytes and random JSON stop at the JSON parser or the first
``format`` check; a legal document with one subtree replaced, deleted or extended gets
deep into a reader, where a missing type check becomes a traceback or a wrong verdict.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

__all__ = ["BOUNDARY_INTEGERS", "json_scalars", "json_values", "json_hooks", "corrupted"]

#: The integers where a reader's minimums and its 64-bit range are decided.
BOUNDARY_INTEGERS = (0, 1, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1)

json_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)
#: Tags and names that steer random JSON into the readers' branches.
json_hooks = st.fixed_dictionaries(
    {"format": st.sampled_from(["npu-schedule/1", "npu-problem/1", "npu-target/1",
                                "npu-workload/1", "npu-request/1"])},
    optional={"target": json_values, "problem": json_values, "ops": json_values,
              "buffers": json_values, "makespan": json_values, "name": json_values,
              "lanes": json_values, "tasks": json_values, "tensors": json_values})


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*prefix, i))


@st.composite
def corrupted(draw: st.DrawFn, document: dict[str, Any]) -> Any:
    """``document`` with one random subtree replaced (by random JSON or by an integer at a
    boundary), removed, given an extra key, or given a ``meta`` (an object, which every
    object may carry, or anything else)."""
    doc = copy.deepcopy(document)
    path = draw(st.sampled_from(list(_paths(doc))[1:]), label="path")
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    how = draw(st.sampled_from(["replace", "boundary", "delete", "add key", "add meta"]),
               label="how")
    if how == "replace":
        parent[path[-1]] = draw(json_values | json_scalars, label="new value")
    elif how == "boundary":
        parent[path[-1]] = draw(st.sampled_from(BOUNDARY_INTEGERS), label="boundary value")
    elif how == "delete":
        del parent[path[-1]]
    elif how == "add meta" and isinstance(parent[path[-1]], dict):
        meta = st.dictionaries(st.text(max_size=6), json_values, max_size=3)
        parent[path[-1]]["meta"] = draw(meta | json_values, label="meta")
    elif isinstance(parent[path[-1]], dict):
        parent[path[-1]][draw(st.text(max_size=6), label="key")] = draw(json_values)
    else:
        parent[path[-1]] = [parent[path[-1]]]
    return doc


