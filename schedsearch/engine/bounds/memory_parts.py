"""The parts of :func:`schedsearch.engine.bounds.lower.lower_bound` that know memory, per memory
that buffers use: ``memory:M`` and ``exclusion:M`` (:mod:`schedsearch.engine.bounds.memory`) and
``gaps:M`` (:mod:`schedsearch.engine.bounds.gap`). One module assembles them so that the necessary
edges, their reach and the sets of ops apart are computed once for all three.

Which set X of ops apart to build on. Any X of pairwise-apart ops gives valid
``exclusion:M`` and ``gaps:M`` figures, so the parts may take the largest over several.
The greedy X takes every op of more than half the space, but one smaller op in X can
spoil the whole part: the ops Y must be apart from *every* op of X, and a transfer that
fits beside the smaller one (a partial last block) is then in no Y at all. So X is also
drawn from the ops of each of the largest footprints of the greedy X and up
(:data:`MAX_CHOICES` of them), and each part keeps its best figure.
"""

from __future__ import annotations

from models.formats import Problem, Target
from schedsearch.engine.bounds.gap import gap_bound
from schedsearch.engine.bounds.memory import (
    exclusion_bound,
    exclusion_sets,
    memory_volumes,
    necessary_edges,
    reach_bits,
    usable_by_op,
)

__all__ = ["MAX_CHOICES", "memory_bound_parts"]

#: Sets X tried per memory: the greedy one, and those drawn from the ops of each of the
#: largest footprints of it and up (each costs an exclusion and a gap part).
MAX_CHOICES = 3


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
        choices = [sets]
        sizes = sorted({sets.footprint[x] for x in sets.chosen}, reverse=True)
        for least in sizes[:MAX_CHOICES - 1] if len(sizes) > 1 else ():
            choices.append(exclusion_sets(problem, target, volume.memory, edges, ordered,
                                          least))
        parts[f"memory:{volume.memory}"] = volume.bound
        parts[f"exclusion:{volume.memory}"] = max(exclusion_bound(target, choice, usable)
                                                  for choice in choices)
        parts[f"gaps:{volume.memory}"] = max(gap_bound(problem, target, choice, before,
                                                       after, usable)
                                             for choice in choices)
    return parts
