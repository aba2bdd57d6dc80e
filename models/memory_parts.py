"""The parts of :func:`models.bounds.lower_bound` that know memory, per memory that
buffers use: ``memory:M`` and ``exclusion:M`` (:mod:`models.memory_bound`) and ``gaps:M``
(:mod:`models.gap_bound`). One module assembles them so that the necessary edges, their
reach and the sets of ops apart are computed once for all three."""

from __future__ import annotations

from models.formats import Problem, Target
from models.gap_bound import gap_bound
from models.memory_bound import (
    exclusion_bound,
    exclusion_sets,
    memory_volumes,
    necessary_edges,
    reach_bits,
    usable_by_op,
)

__all__ = ["memory_bound_parts"]


def memory_bound_parts(problem: Problem, target: Target) -> dict[str, int]:
    """``memory:M``, ``exclusion:M`` and ``gaps:M`` for each memory that buffers use."""
    edges = necessary_edges(problem)
    usable = usable_by_op(problem, target)
    volumes = memory_volumes(problem, target, edges, usable)
    if not volumes:
        return {}
    before, after = reach_bits(problem, edges)
    ordered = {name: before[name] | after[name] for name in problem.ops}
    parts = {}
    for volume in volumes:
        sets = exclusion_sets(problem, target, volume.memory, edges, ordered)
        parts[f"memory:{volume.memory}"] = volume.bound
        parts[f"exclusion:{volume.memory}"] = exclusion_bound(target, sets, usable)
        parts[f"gaps:{volume.memory}"] = gap_bound(problem, target, sets, before, after,
                                                        usable)
    return parts
