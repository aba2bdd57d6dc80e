"""Happens-before (:mod:`checker.rules.program_graph`) against reachability by graph
search, on random DAGs of queues and waits, with clock columns for every chain and with
none (every question then answered by the pruned search)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.rules import program_graph
from checker.rules.program_graph import Graph
from tests.fuzz._budget import examples


@st.composite
def dags(draw: st.DrawFn) -> tuple[int, list[list[int]], list[tuple[int, int]]]:
    """Ops 0..n-1 in topological order: queues are increasing runs, waits go forward."""
    n = draw(st.integers(1, 14))
    queues = []
    for _ in range(draw(st.integers(0, 4))):
        members = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
        queues.append(sorted(members))
    waits = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                          .filter(lambda e: e[0] < e[1]), max_size=2 * n))
    return n, queues, waits


def reachable(n: int, queues: list[list[int]], waits: list[tuple[int, int]]) -> set:
    succ: dict[int, set[int]] = {v: set() for v in range(n)}
    for q in queues:
        for a, b in zip(q, q[1:], strict=False):
            succ[a].add(b)
    for a, b in waits:
        succ[a].add(b)
    pairs = set()
    for a in range(n):
        stack, seen = list(succ[a]), set()
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(succ[v])
        pairs |= {(a, b) for b in seen}
    return pairs


@pytest.mark.parametrize("cells", [program_graph.CLOCK_CELLS, 1], ids=["clocks", "search"])
@settings(max_examples=examples(2))
@given(dag=dags())
def test_before_is_reachability(cells: int, dag) -> None:
    n, queues, waits = dag
    with mock.patch.object(program_graph, "CLOCK_CELLS", cells):
        graph = Graph(n, queues, waits)
    assert graph.cycle is None
    a, b = np.divmod(np.arange(n * n), n)
    found = {(int(x), int(y)) for x, y, ok in zip(a, b, graph.before(a, b), strict=True) if ok}
    assert found == reachable(n, queues, waits)


@settings(max_examples=examples(1))
@given(dag=dags())
def test_chains_follow_orders(dag) -> None:
    """Along a chain, each op happens before the next (what ORDER_REUSE relies on)."""
    n, queues, waits = dag
    graph = Graph(n, queues, waits)
    reach = reachable(n, queues, waits)
    by_chain: dict[int, list[tuple[int, int]]] = {}
    for v in range(n):
        by_chain.setdefault(int(graph.chain[v]), []).append((int(graph.position[v]), v))
    for members in by_chain.values():
        members.sort()
        assert [p for p, _ in members] == list(range(len(members)))
        for (_, x), (_, y) in zip(members, members[1:], strict=False):
            assert (x, y) in reach


def test_a_deep_chain_and_a_cycle() -> None:
    n = 200
    graph = Graph(n, [list(range(n))], [])
    assert graph.before(np.array([0, 199, 5]), np.array([199, 0, 5])).tolist() == \
        [True, False, False]
    assert Graph(3, [[0, 1, 2]], [(2, 0)]).cycle is not None
