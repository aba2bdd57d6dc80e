"""Precedence derived from the accesses: every ordering a legal schedule must respect.

The ``after`` edges are not enough: FORMATS.md also forbids stale reads, write races and
early DDR reads, and each of those is an ordering between two ops that the accesses
imply. This module turns them into edges ``(pred, succ, lag)`` meaning
``succ.start >= pred.end + lag``, so that every search module only has to respect one
kind of constraint:

* buffer RAW: the op that writes the value a read expects ends before the reader starts;
* buffer WAW: writes to intersecting bytes of one buffer never overlap (WRITE_RACE) and
  are totally ordered, consistently with a topological order of after + RAW edges (or,
  where that order contradicts itself, one buffer at a time avoiding cycles, and last
  the orders the overwrites force across buffers settled first);
* buffer WAR: every reader of a written value ends before the next write to any of the
  bytes it reads starts (STALE_READ's "no other op writes those bytes" clause);
* DDR RAW: a read of an output/temp tensor region starts after every write of it ends.

``lag`` is 1 only on a write-after-write edge whose later writer may take zero time:
two writes ending at the same instant would make "the write that ended last" ambiguous.

With ``granularity="task"`` a zero-duration barrier node sits between consecutive tasks:
every op of task i precedes it and every op of task i+1 follows it, which is linear in the
number of ops where op-to-op edges would be quadratic. Barrier nodes are numbered after
the ops. The task order is decided before any writer order (:func:`_task_order`), and the
barriers take part in ordering the writers, so each buffer's writers run in task order
and no WAW or WAR edge points back to an earlier task.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import networkx as nx

from models.errors import InputError
from models.formats import Access, Box
from models.regions import BoxIndex
from schedsearch.engine.instance import Instance

__all__ = ["Dag", "build_dag", "task_order", "GRANULARITIES"]

GRANULARITIES = ("tile", "task")


@dataclass(frozen=True, slots=True)
class Dag:
    """Precedence over ``n_ops`` ops (nodes ``0..n_ops-1``) and barrier nodes after them."""

    n_ops: int
    n_nodes: int
    edges: tuple[tuple[int, int, int], ...]
    preds: tuple[tuple[tuple[int, int], ...], ...]
    succs: tuple[tuple[tuple[int, int], ...], ...]
    topo: tuple[int, ...]
    task_order: tuple[str, ...]


def _intersects(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _covers(outer: tuple[int, int], inner: tuple[int, int]) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def _byte_range(inst: Instance, access: Access) -> tuple[int, int]:
    if access.bytes is not None:
        return access.bytes
    return 0, inst.buffer_size[inst.buffer_index[access.buffer or ""]]


class _Edges:
    """Edges keyed by (pred, succ), keeping the largest lag; self-loops are dropped."""

    def __init__(self) -> None:
        self.lags: dict[tuple[int, int], int] = {}

    def add(self, pred: int, succ: int, lag: int = 0) -> None:
        if pred != succ and self.lags.get((pred, succ), -1) < lag:
            self.lags[(pred, succ)] = lag


class _Cycle(InputError):
    """Rule CYCLE, with the nodes (indices into the ``names`` it was built with) that its
    message names, so that a caller can say which tasks the cycle ties."""

    def __init__(self, message: str, nodes: frozenset[int]) -> None:
        super().__init__(message, path="$.ops", rule="CYCLE")
        self.nodes = nodes


def _cycle_error(graph: nx.DiGraph, names: list[str], what: str) -> _Cycle:
    """CYCLE naming one cycle, with the reasons of its edges that carry a ``why``."""
    cycle = nx.find_cycle(graph)
    ring = " -> ".join([names[u] for u, _ in cycle] + [names[cycle[0][0]]])
    reasons = [f"{names[u]} -> {names[v]}: {graph.edges[u, v]['why']}"
               for u, v in cycle if "why" in graph.edges[u, v]]
    because = f" ({'; '.join(reasons)})" if reasons else ""
    nodes = {u for u, _ in cycle}
    nodes.update(n for u, v in cycle for n in graph.edges[u, v].get("ops", ()))
    return _Cycle(f"{what} form a cycle: {ring}{because}", frozenset(nodes))


def _topological(edges: _Edges, names: list[str], what: str) -> list[int]:
    """Every node (``names`` holds one per op and barrier) in dependency order, ties by
    number."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(names)))
    graph.add_edges_from(edges.lags)
    try:
        return list(nx.lexicographical_topological_sort(graph))
    except nx.NetworkXUnfeasible:
        raise _cycle_error(graph, names, what) from None


#: A write: (op, byte range, value); a read: (op, buffer, byte range, value).
_Write = tuple[int, tuple[int, int], str | None]
_Read = tuple[int, int, tuple[int, int], str | None]


def _buffer_accesses(inst: Instance) -> tuple[dict[int, list[_Write]], list[_Read]]:
    writes: dict[int, list[_Write]] = defaultdict(list)
    reads: list[_Read] = []
    for i, name in enumerate(inst.op_names):
        op = inst.problem.ops[name]
        for access in op.writes:
            if access.buffer is not None:
                b = inst.buffer_index[access.buffer]
                writes[b].append((i, _byte_range(inst, access), access.value))
        for access in op.reads:
            if access.buffer is not None:
                b = inst.buffer_index[access.buffer]
                reads.append((i, b, _byte_range(inst, access), access.value))
    return writes, reads


def _producer(inst: Instance, writers: list[_Write],
              reader: int, buffer: int, span: tuple[int, int], value: str | None) -> int:
    """The write a read must see: the first (in problem order) that wrote ``value`` over
    all the bytes read. STALE_READ needs one write covering every byte read."""
    for op, written, tag in writers:
        if tag == value and _covers(written, span):
            return op
    raise InputError(
        f"op {inst.op_names[reader]!r} reads value {value!r} from bytes {list(span)} of "
        f"buffer {inst.buffer_names[buffer]!r}, but no single op writes that value over "
        f"those bytes", path=f"$.ops[\"{inst.op_names[reader]}\"].reads", rule="STALE_READ")


def _ddr_raw(inst: Instance, edges: _Edges) -> None:
    tensors = inst.problem.tensors
    writes: dict[str, list[tuple[int, Box]]] = defaultdict(list)
    reads: dict[str, list[tuple[int, Box]]] = defaultdict(list)
    for i, name in enumerate(inst.op_names):
        op = inst.problem.ops[name]
        for access in op.writes:
            if access.tensor is not None and tensors[access.tensor].role != "input":
                writes[access.tensor].append((i, access.box or ()))
        for access in op.reads:
            if access.tensor is not None and tensors[access.tensor].role != "input":
                reads[access.tensor].append((i, access.box or ()))
    for tensor, tensor_writes in writes.items():
        index = BoxIndex(sorted(tensor_writes,
                                key=lambda item: (item[1][0][0] if item[1] else 0, item[0])))
        for reader, box in reads.get(tensor, ()):
            for writer in index.intersecting(box):
                edges.add(writer, reader)


def _order_buffer(inst: Instance, edges: _Edges, b: int, writers: list[_Write],
                  reads: list[_Read], zero: list[bool]) -> None:
    """WAW and WAR edges of buffer ``b`` whose ``writers`` are in the order they must run."""
    position: dict[int, int] = {}
    for k, (op, span, _) in enumerate(writers):
        position.setdefault(op, k)
        for later, later_span, _ in writers[k + 1:]:
            if later != op and _intersects(span, later_span):
                edges.add(op, later, 1 if zero[later] else 0)
                if _covers(later_span, span):
                    break
    for reader, _, span, value in reads:
        producer = _producer(inst, writers, reader, b, span, value)
        for later, later_span, _ in writers[position[producer] + 1:]:
            if later != reader and later != producer and _intersects(span, later_span):
                edges.add(reader, later)
                if _covers(later_span, span):
                    break


def _buffer_order(inst: Instance, edges: _Edges, writes: dict[int, list[_Write]],
                  reads: list[_Read], names: list[str]) -> None:
    """WAW and WAR edges for every buffer (:func:`_order_writers`).

    Last resort, when those close a cycle: first add the orderings the overwrites force
    across all buffers together (:func:`_settle` over :func:`_overwrites`, as for tasks),
    since the order one buffer's writers need can hinge on another buffer's, then order
    the writers again. Taken only after the usual ordering failed, so it changes no
    ordering that used to succeed. A cycle among the forced orders is CYCLE (a proof);
    failing after that is WRITER_ORDER (the heuristic gave up).
    """
    base = dict(edges.lags)
    if _order_writers(inst, edges, writes, reads, names):
        return
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(names)))
    graph.add_edges_from(base)
    if not _settle(graph, dict(_overwrites(inst, writes, reads)), names):
        raise _cycle_error(graph, names, "the op dependencies (after, RAW) and the orders "
                                         "the overwrites of read values force")
    edges.lags = base
    for pred, succ in graph.edges:
        edges.add(pred, succ)
    if not _order_writers(inst, edges, writes, reads, names):
        raise InputError(
            "the writer-order heuristic gave up: it found no order of the writers of "
            "shared buffers (WAW, WAR) that closes no cycle, although the dependencies "
            "after, RAW and the orders the overwrites force have none; a schedule may "
            "still exist (try granularity=task, or split the buffers that several ops "
            "overwrite)", path="$.ops", rule="WRITER_ORDER")


def _overwrites(inst: Instance, writes: dict[int, list[_Write]],
                reads: list[_Read]) -> Iterator[tuple[tuple[int, int, int], str]]:
    """Op triples ``(p, w, r)``: ``w`` writes bytes that ``r`` reads the value of from its
    producer ``p``, so ``w`` runs before ``p`` or after ``r`` (STALE_READ); each with the
    access that ties them, as messages name it."""
    for reader, b, span, value in reads:
        producer = _producer(inst, writes[b], reader, b, span, value)
        what = f"value {value!r}" if value is not None else f"bytes {list(span)}"
        read = f"{what} of buffer {inst.buffer_names[b]!r}"
        for op, written, _ in writes[b]:
            if op not in (producer, reader) and _intersects(written, span):
                yield (producer, op, reader), read


def _order_writers(inst: Instance, edges: _Edges, writes: dict[int, list[_Write]],
                   reads: list[_Read], names: list[str]) -> bool:
    """WAW and WAR edges for every buffer; False if they close a cycle.

    Fast path: the writers of every buffer in one topological order of after + RAW (and
    the barriers, which put them in task order). That order can contradict itself (a
    reader of buffer y must end before an op that also overwrites x, which that order put
    before y's producer), so when the result has a cycle, each buffer with several
    writers is ordered again by :func:`_safe_order`, one buffer after another; a buffer
    whose writers can no longer be ordered without a cycle moves to the front of that
    sequence and the ordering starts again (at most once per such buffer), since the
    buffers ordered before it may have been what boxed it in.
    """
    zero = [inst.min_duration(i) == 0 for i in range(inst.n_ops)]
    reads_of: dict[int, list[_Read]] = defaultdict(list)
    for read in reads:
        reads_of[read[1]].append(read)
    base = dict(edges.lags)
    rank = {op: k for k, op in enumerate(_topological(
        edges, names, "the after edges and read-after-write dependencies"))}
    for b, ws in writes.items():
        _order_buffer(inst, edges, b, sorted(ws, key=lambda w: rank[w[0]]), reads_of[b],
                      zero)
    if _acyclic(inst, edges):
        return True
    several = {b for b, ws in writes.items() if len({op for op, _, _ in ws}) > 1}
    sequence = list(writes)
    for _ in range(len(several) + 1):
        edges.lags = dict(base)
        failed = None
        for b in sequence:
            ws = writes[b]
            if b in several:
                ws = _safe_order(inst, edges, b, ws, reads_of[b])
            _order_buffer(inst, edges, b, ws, reads_of[b], zero)
            if b in several and not _acyclic(inst, edges):
                failed = b
                break
        if failed is None or failed == sequence[0]:
            break  # done, or no sequence left to try
        sequence.remove(failed)  # order it first next time, before others constrain it
        sequence.insert(0, failed)
    return _acyclic(inst, edges)


#: Candidate writers :func:`_safe_order` may try per buffer: every order of the handful
#: of writers a buffer has when its order is in question, yet a quick refusal otherwise.
_SAFE_ORDER_STEPS = 1000


def _safe_order(inst: Instance, edges: _Edges, b: int, writers: list[_Write],
                reads: list[_Read]) -> list[_Write]:
    """The writers of ``b`` in an order whose WAW and WAR edges close no cycle with the
    edges decided so far, built one writer at a time, depth first: the next writer is
    the first (by index) whose new edges close no cycle, and when none is left the last
    choice is undone (a writer can qualify and still leave the rest no order: with task
    barriers, an unread write that must precede a value a later task reads). Placing a
    writer adds edges into it (from every earlier writer of intersecting bytes and every
    reader of their values over those bytes) and commits every writer still to come that
    touches its bytes to follow it and the readers of its own value.
    When no order is found within :data:`_SAFE_ORDER_STEPS` tries, the writers keep their
    order and the caller reports the cycle."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(inst.n_ops))
    graph.add_edges_from(edges.lags)
    spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for op, span, _ in writers:
        spans[op].append(span)
    readers: dict[int, list[tuple[int, tuple[int, int]]]] = defaultdict(list)
    for reader, _, span, value in reads:
        readers[_producer(inst, writers, reader, b, span, value)].append((reader, span))

    def touches(op: int, span: tuple[int, int]) -> bool:
        return any(_intersects(span, t) for t in spans[op])

    def edges_into(op: int, placed: list[int],
                   remaining: list[int]) -> list[tuple[int, int]] | None:
        """The new edges placing ``op`` next adds, or None if they or the ones it commits
        the writers still to come to close a cycle."""
        sources = {p for p in placed if any(touches(op, s) for s in spans[p])}
        sources |= {r for p in placed for r, span in readers[p] if r != op and touches(op, span)}
        later = [w for w in remaining if w != op and any(touches(op, s) for s in spans[w])]
        later_edges = [(op, w) for w in later]
        later_edges += [(r, w) for w in later for r, span in readers[op]
                        if r != w and touches(w, span)]
        into = [(s, op) for s in sources if not graph.has_edge(s, op)]
        tentative = [e for e in {*into, *later_edges} if not graph.has_edge(*e)]
        graph.add_edges_from(tentative)
        closes = any(nx.has_path(graph, v, u) for u, v in tentative)
        graph.remove_edges_from(tentative)
        return None if closes else into

    # Each placed writer with its index in ``remaining`` and the edges it added.
    placed: list[tuple[int, int, list[tuple[int, int]]]] = []
    remaining = sorted(spans)
    start = steps = 0
    while remaining and steps < _SAFE_ORDER_STEPS:
        for k in range(start, len(remaining)):
            steps += 1
            into = edges_into(remaining[k], [op for op, _, _ in placed], remaining)
            if into is not None:
                graph.add_edges_from(into)
                placed.append((remaining.pop(k), k, into))
                start = 0
                break
        else:
            if not placed:
                break
            op, k, into = placed.pop()
            graph.remove_edges_from(into)
            remaining.insert(k, op)
            start = k + 1
    if remaining:
        return writers
    order = {op: k for k, (op, _, _) in enumerate(placed)}
    return sorted(writers, key=lambda w: order[w[0]])


def _acyclic(inst: Instance, edges: _Edges) -> bool:
    graph = nx.DiGraph()
    graph.add_nodes_from(range(inst.n_ops))
    graph.add_edges_from(edges.lags)
    return nx.is_directed_acyclic_graph(graph)


def task_order(inst: Instance) -> list[str]:
    """The tasks (those with ops) in the one order that runs them one after another: the
    barriers' order (``granularity="task"``) and the order separate kernels run in
    (:func:`schedsearch.engine.slicing.task_order`). Raises :class:`InputError` (rule CYCLE) when
    no order respects the dependencies; see :func:`_task_order`."""
    edges, writes, reads = _access_edges(inst)
    return _task_order(inst, edges, writes, reads)


def _access_edges(inst: Instance) -> tuple[_Edges, dict[int, list[_Write]], list[_Read]]:
    """The edges every granularity has (after, buffer RAW, DDR RAW), with the buffer
    accesses they came from."""
    edges = _Edges()
    for pred, succ in inst.problem.after:
        edges.add(inst.op_index[pred], inst.op_index[succ])
    writes, reads = _buffer_accesses(inst)
    for reader, b, span, value in reads:
        edges.add(_producer(inst, writes.get(b, []), reader, b, span, value), reader)
    _ddr_raw(inst, edges)
    return edges, writes, reads


def _task_order(inst: Instance, edges: _Edges, writes: dict[int, list[_Write]],
                reads: list[_Read]) -> list[str]:
    """The order the barriers put the tasks in, chosen before any writer order.

    It follows the edges decided so far (after, RAW, DDR RAW) and keeps every overwrite
    out of a value's life: a task that writes bytes a second task's value occupies until
    a third task reads it must run before the second or after the third
    (:func:`_overwrites` between three different tasks). Tasks are placed one at a time,
    the first ready one (problem order) whose placement leaves those choices consistent
    (:func:`_settle`).
    """
    tasks = [t for t in inst.problem.tasks if t in set(inst.op_task)]
    index = {t: k for k, t in enumerate(tasks)}
    task_of = [index[t] for t in inst.op_task]
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(tasks)))
    graph.add_edges_from((task_of[p], task_of[s]) for p, s in edges.lags
                         if task_of[p] != task_of[s])
    shared = {b for b, ws in writes.items() if len({task_of[op] for op, _, _ in ws}) > 1}
    overwrites: dict[tuple[int, int, int], str] = {}
    for (p, w, r), read in _overwrites(inst, writes, [read for read in reads
                                                       if read[1] in shared]):
        if len({task_of[p], task_of[w], task_of[r]}) == 3:
            overwrites.setdefault((task_of[p], task_of[w], task_of[r]), read)
    what = "with granularity=task, the tasks' dependencies (after, RAW, overwrites)"
    if not _settle(graph, overwrites, tasks):
        raise _cycle_error(graph, tasks, what)
    order: list[int] = []
    while len(order) < len(tasks):
        ready = [k for k in range(len(tasks)) if k not in order
                 and all(p in order for p in graph.predecessors(k))]
        for k in ready:
            trial = graph.copy()
            trial.add_edges_from(((k, u) for u in range(len(tasks)) if u != k
                                  and u not in order and not graph.has_edge(k, u)),
                                 why=f"{tasks[k]} runs next")
            if _settle(trial, overwrites, tasks):
                break
        else:
            placed = ", ".join(tasks[k] for k in order)
            raise _cycle_error(trial, tasks,
                               f"{what}, whatever ready task runs next after [{placed}],")
        graph = trial
        order.append(k)
    return [tasks[k] for k in order]


def _settle(graph: nx.DiGraph, overwrites: dict[tuple[int, int, int], str],
            names: list[str]) -> bool:
    """Add the edges the overwrites ``(p, w, r)`` force (between tasks or ops), until none
    is new: ``w`` before ``r`` forces ``w`` before ``p``; ``p`` before ``w`` forces ``r``
    before ``w``. Each overwrite comes with the read it clobbers, for the edge's ``why``.
    False when the edges form a cycle (``graph`` then holds it)."""
    changed = True
    while changed:
        if not nx.is_directed_acyclic_graph(graph):
            return False
        changed = False
        for (p, w, r), read in overwrites.items():
            if nx.has_path(graph, w, p) or nx.has_path(graph, r, w):
                continue
            why = f"{names[w]} overwrites the {read} that {names[p]} writes for {names[r]}"
            if nx.has_path(graph, w, r):
                graph.add_edge(w, p, why=why, ops=(p, w, r))
                changed = True
            elif nx.has_path(graph, p, w):
                graph.add_edge(r, w, why=why, ops=(p, w, r))
                changed = True
    return True


def _barriers(inst: Instance, edges: _Edges, order: list[str]) -> list[str]:
    """Add barrier ``k`` between tasks ``order[k]`` and ``order[k+1]``; return the
    barriers' names."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, task in enumerate(inst.op_task):
        members[task].append(i)
    for k in range(len(order) - 1):
        node = inst.n_ops + k
        for op in members[order[k]]:
            edges.add(op, node)
        for op in members[order[k + 1]]:
            edges.add(node, op)
    return [f"barrier({order[k]}|{order[k + 1]})" for k in range(len(order) - 1)]


def _whole_task_cycle(inst: Instance, cycle: _Cycle, order: list[str]) -> InputError:
    """CYCLE among the ops once the barriers of ``granularity="task"`` keep each task
    whole, naming the tasks it ties. When the same problem has no cycle at tile
    granularity, the cycle exists only because the tasks run whole (a task's value is
    read by another task and overwritten by its own later op, say): the message says so
    and suggests tile granularity, since "the dependencies form a cycle" alone reads as
    a broken problem."""
    named = {inst.op_task[n] for n in cycle.nodes if n < inst.n_ops}
    named.update(order[n - inst.n_ops + k] for n in cycle.nodes if n >= inst.n_ops
                 for k in (0, 1))
    tasks = ", ".join(t for t in order if t in named)
    try:
        build_dag(inst, "tile")
    except InputError:
        return InputError(f"with granularity=task and the tasks in order {', '.join(order)}, "
                          f"{cycle.message}", path=cycle.path, rule="CYCLE")
    return InputError(
        f"with granularity=task, tasks {tasks} cannot each run whole, one after another (in "
        f"order {', '.join(order)}): {cycle.message}; the cycle exists only between whole "
        f"tasks: try --granularity tile, which lets their ops interleave",
        path=cycle.path, rule="CYCLE")


def build_dag(inst: Instance, granularity: str = "tile") -> Dag:
    """All precedence a legal schedule of ``inst`` must respect, as a checked-acyclic DAG.

    Raises :class:`InputError` (rule CYCLE, naming the ops or tasks) when the orderings
    contradict each other, (rule STALE_READ) when a read can never see its value, and
    (rule WRITER_ORDER) when the heuristic that orders the writers of shared bytes gives
    up although nothing contradicts (no proof that no schedule exists).
    """
    if granularity not in GRANULARITIES:
        raise InputError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}",
                         rule="OPTION")
    edges, writes, reads = _access_edges(inst)
    names = list(inst.op_names)
    what = "the op dependencies (after, RAW, WAW, WAR)"
    task_order: list[str] = []
    if granularity == "task":
        task_order = _task_order(inst, edges, writes, reads)
        names += _barriers(inst, edges, task_order)
        what = f"{what} and the barriers between the tasks"
    try:
        _buffer_order(inst, edges, writes, reads, names)
        topo = _topological(edges, names, what)
    except _Cycle as cycle:
        if granularity != "task":
            raise
        raise _whole_task_cycle(inst, cycle, task_order) from None
    op_edges = sorted((p, s, lag) for (p, s), lag in edges.lags.items())
    preds: list[list[tuple[int, int]]] = [[] for _ in names]
    succs: list[list[tuple[int, int]]] = [[] for _ in names]
    for pred, succ, lag in op_edges:
        preds[succ].append((pred, lag))
        succs[pred].append((succ, lag))
    return Dag(n_ops=inst.n_ops, n_nodes=len(names), edges=tuple(op_edges),
               preds=tuple(map(tuple, preds)), succs=tuple(map(tuple, succs)),
               topo=tuple(topo), task_order=tuple(task_order))
