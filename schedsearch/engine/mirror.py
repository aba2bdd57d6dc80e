"""Time reversal of a problem without buffers: the same problem, run backwards.

Why: on problems without memory (RCPSP such as PSPLIB) every constraint is a precedence
with a lag or a renewable resource, and both read the same backwards: a schedule of
makespan ``M`` becomes, with each op starting at ``M`` minus its old end, a legal
schedule of the problem whose precedences point the other way, of the same makespan.
So both problems have the same optimum, but CP-SAT does not find it equally fast: on
J30_288 (optimum 80, seeds 100-111, plain model, 2 workers, 10 s) the forward problem
gave 80 in 5 runs of 12 and the backward one in 11 of 12; on J30_126 (64) 11 and 12.
Which way is easier is not known in advance, so the whole model searches both.

Memory is not mirrored: a buffer is allocated at its first access and freed after its
last, which is not the same rule backwards. Callers keep this to ``inst.n_buffers == 0``.
"""

from __future__ import annotations

from schedsearch.engine.hazards import Dag
from schedsearch.engine.instance import Instance
from schedsearch.engine.solution import Solution

__all__ = ["mirrored_dag", "mirrored"]


def mirrored_dag(dag: Dag) -> Dag:
    """``dag`` with every edge reversed, its lag kept: ``start(b) >= end(a) + lag`` becomes
    ``start(a) >= end(b) + lag``, which is the same constraint on mirrored times."""
    edges = tuple(sorted((succ, pred, lag) for pred, succ, lag in dag.edges))
    return Dag(n_ops=dag.n_ops, n_nodes=dag.n_nodes, edges=edges, preds=dag.succs,
               succs=dag.preds, topo=tuple(reversed(dag.topo)), task_order=dag.task_order)


def mirrored(inst: Instance, solution: Solution) -> Solution:
    """``solution`` run backwards: each op starts at the makespan minus its old end. A
    legal schedule of the problem becomes one of the mirrored problem (and back) of the
    same makespan, as long as some op starts at 0."""
    if inst.n_buffers:
        raise ValueError("a problem with buffers cannot be mirrored")
    makespan = solution.makespan(inst)
    return Solution(modes=solution.modes,
                    starts=tuple(makespan - end for end in solution.ends(inst)),
                    offsets=solution.offsets)
