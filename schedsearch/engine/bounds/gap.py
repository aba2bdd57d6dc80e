"""The ``gaps:M`` part of the lower bound: what must fill the time between ops apart.

Why. ``exclusion:M`` (:mod:`schedsearch.engine.bounds.memory`) takes a set ``X`` of ops pairwise
apart (no two run at once) and the ops ``Y`` apart from all of them, and adds the least
time of ``Y`` to the durations of ``X``. It knows *that* ``Y`` runs between the ops of
``X``, not *what* runs in each gap. Where memory binds it is mostly decided: an RMSNorm
block's input buffer cannot be live while another block computes, so its load runs in
the gap just before its own compute, and its store in the gap just after. With one gap
holding a store and the next load, and nothing else fitting beside them, the gap lasts
at least as long as that pair takes alone, however idle the lanes and the bus are.

The argument, for a memory ``M`` (space ``S``: capacity rounded up to the alignment;
sizes rounded up, as in ``memory:M``):

1. *Gaps.* The windows of ``X`` are disjoint, so in any schedule they split
   ``[0, T)`` into ``|X| + 1`` gaps (before the first, between consecutive ones, after
   the last) and ``T = sum of X's durations + sum of the gaps``. Every op of ``Y`` lies
   inside one gap.
2. *Confining buffers.* A buffer ``b`` of ``M`` accessed by at most one op ``x`` of ``X``
   (its *holder*), such that ``round(b) + footprint(x')`` exceeds ``S`` for every other
   op ``x'`` of ``X``, is never live while such an ``x'`` runs (padding argument). Its
   window, from its first access to its last, contains every op accessing it.
3. *Units.* Join the ops of ``Y`` (and ``X``) that access a common confining buffer. The
   union of the windows of a joined group's buffers is an interval that meets no op of
   ``X`` outside the group. So a group with no op of ``X`` (a *free unit*) lies inside
   one gap; a group with one op ``x`` puts the ops that must precede ``x`` (necessary
   edges) in the gap just before ``x`` (its *pre piece*) and those that must follow in
   the gap just after (its *post piece*); ops ordered neither way, groups with two ops of
   ``X``, and ops of ``Y`` with no confining buffer are *fluid*: counted by energy only.
4. *A gap's least length.* A gap between ``x`` and ``x'`` holds the post piece of ``x``,
   the pre piece of ``x'`` and some free units. In it the buffers ``x`` holds are live
   from its start, those ``x'`` holds until its end, and the buffers every op of ``X``
   holds (a weight) all along. A *pattern* (those pieces, the free units, the space left)
   is a small scheduling problem: per op one mode out of its usable ones, lanes and
   budgets as cumulatives, each buffer a window over its accessors (anchored to the
   gap's start or end as above) in a cumulative of rounded sizes over the space, and the
   necessary edges among them. Dropping everything else from the schedule of a real gap
   gives a solution of it, so the gap is at least the pattern's optimum, which CP-SAT
   bounds (its proven objective bound, one worker, a fixed seed and a deterministic work
   limit: reproducible, and valid even when cut short). A gap with more free units is at
   least as long (fewer ops only relax), and at least its ops' energy on each lane kind
   and budget over the capacity.
5. *Which gaps exist* depends on the order of ``X``, so the part is the optimum of an LP
   over all orders at once: gaps are counted by the kinds of their two pieces (a
   transportation problem: each op's post piece starts one gap, each pre piece ends one,
   one gap has no post piece and one no pre piece), each gap kind is split by the
   multiset of up to ``K`` free unit kinds in it, free units beyond ``K`` per gap and the
   fluid ops are charged by energy. Any schedule gives an integral point of it, so::

       T >= sum over X of its shortest durations + the LP optimum.

Patterns are priced lazily: the LP starts from cheap valid estimates, and the patterns it
uses are solved by CP-SAT until it uses only solved ones or a budget of solves is spent
(the LP stays valid at every step). Hand cases where it is exact: an RMSNorm whose blocks
fill VTCM (norms and their transfer pairs alternate, tests/engine/bounds/test_gap_bound.py).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter, defaultdict
from dataclasses import dataclass

from ortools.linear_solver import pywraplp

from models.formats import Mode, Problem, Target
from schedsearch.engine.bounds.lp import ceil_bound
from schedsearch.engine.bounds.memory import Exclusion

__all__ = ["Piece", "Pattern", "Priced", "mode_key", "pattern_length", "price_pattern",
           "gap_bound"]

#: Free units per gap whose pattern is priced exactly (more are charged by energy).
FREE_PER_GAP = 2
#: Pieces with more ops than this are left fluid (their patterns would be slow to solve).
MAX_PIECE_OPS = 12
#: Kinds of pre or post pieces beyond which the part is not computed (0).
MAX_KINDS = 16
#: LP columns (gap kinds times free-unit multisets) allowed before FREE_PER_GAP shrinks.
MAX_PATTERNS = 1500
#: CP-SAT solves per call, the deterministic work (CP-SAT's seconds) of each and of all.
MAX_SOLVES = 48
_SOLVE_WORK = 0.25
MAX_WORK = 1.5

ModeKey = tuple[int, tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]


@dataclass(frozen=True, slots=True)
class Piece:
    """Ops that lie in one gap together, as a canonical signature: per op its usable
    modes; per buffer its rounded size, whether it is anchored (held by the op of X next
    to the gap) and the indices of the ops accessing it; necessary edges by index."""

    modes: tuple[tuple[ModeKey, ...], ...]
    buffers: tuple[tuple[int, bool, tuple[int, ...]], ...] = ()
    edges: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Pattern:
    """A gap's content: the ``post`` piece of the op of X before it (anchored buffers
    live from the gap's start), the ``pre`` piece of the one after it (anchored buffers
    live until its end), ``free`` units, and the ``space`` left to them."""

    space: int
    post: Piece | None
    pre: Piece | None
    free: tuple[Piece, ...]

    def pieces(self) -> list[tuple[Piece, str]]:
        found = [] if self.post is None else [(self.post, "start")]
        found += [] if self.pre is None else [(self.pre, "end")]
        return found + [(piece, "") for piece in self.free]


def mode_key(mode: Mode) -> ModeKey:
    """A mode as a pattern holds it: duration, lanes and budget draws, sorted."""
    return (mode.duration, tuple(sorted(mode.lanes.items())),
            tuple(sorted(mode.budgets.items())))


@dataclass(frozen=True, slots=True)
class Priced:
    """A pattern's ``length`` (None: no legal gap holds it) and the deterministic ``work``
    CP-SAT spent on it."""

    length: int | None
    work: float


def pattern_length(pattern: Pattern, target: Target) -> int | None:
    """A lower bound on the length of any gap holding ``pattern`` (CP-SAT's proven bound
    on the small problem of the module docstring, step 4), or None when no legal gap can
    hold it."""
    return price_pattern(pattern, target, _SOLVE_WORK).length


def price_pattern(pattern: Pattern, target: Target, work: float) -> Priced:
    """:func:`pattern_length` within ``work`` deterministic seconds of CP-SAT."""
    ops: list[tuple[ModeKey, ...]] = []
    buffers: list[tuple[int, str, list[int]]] = []
    edges: list[tuple[int, int]] = []
    for piece, anchor in pattern.pieces():
        base = len(ops)
        ops.extend(piece.modes)
        edges.extend((base + a, base + b) for a, b in piece.edges)
        buffers.extend((size, anchor if anchored else "", [base + i for i in users])
                       for size, anchored, users in piece.buffers)
    if not ops:
        return Priced(0, 0.0)
    from ortools.sat.python import cp_model  # imported when used: it imports pandas

    horizon = sum(max(m[0] for m in modes) for modes in ops)
    model = cp_model.CpModel()
    makespan = model.new_int_var(0, horizon, "T")
    starts, ends = [], []
    demands: dict[str, list[tuple[cp_model.IntervalVar, int]]] = defaultdict(list)
    for modes in ops:
        start, end = model.new_int_var(0, horizon, ""), model.new_int_var(0, horizon, "")
        chosen = []
        for duration, lanes, budgets in modes:
            present = model.new_bool_var("")
            chosen.append(present)
            interval = model.new_optional_interval_var(start, duration, end, present, "")
            for name, units in (*lanes, *budgets):
                demands[name].append((interval, units))
        model.add_exactly_one(chosen)
        model.add(end <= makespan)
        starts.append(start)
        ends.append(end)
    for a, b in edges:
        model.add(ends[a] <= starts[b])
    capacities = {**target.lanes, **target.budgets}
    for name, used in demands.items():
        model.add_cumulative([i for i, _ in used], [n for _, n in used], capacities[name])
    windows = []
    for size, anchor, users in buffers:
        if size > pattern.space:
            return Priced(None, 0.0)
        low = model.new_int_var(0, horizon, "")
        high = model.new_int_var(0, horizon, "")
        model.add(low == 0) if anchor == "start" else model.add_min_equality(
            low, [starts[i] for i in users])
        model.add(high == makespan) if anchor == "end" else model.add_max_equality(
            high, [ends[i] for i in users])
        length = model.new_int_var(0, horizon, "")
        windows.append((model.new_interval_var(low, length, high, ""), size))
    if windows:
        model.add_cumulative([w for w, _ in windows], [s for _, s in windows], pattern.space)
    model.minimize(makespan)
    solver = cp_model.CpSolver()
    solver.parameters.catch_sigint_signal = False  # see schedsearch.engine.bounds.configurations
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = work
    solver.parameters.linearization_level = 0  # measured: proves these tiny optima far sooner
    status = solver.solve(model)
    spent = solver.deterministic_time
    if status == cp_model.INFEASIBLE:
        return Priced(None, spent)
    if status == cp_model.MODEL_INVALID:
        return Priced(0, spent)
    return Priced(max(0, math.ceil(solver.best_objective_bound - 1e-6)), spent)


@dataclass(slots=True)
class _Gaps:
    """The pieces found in a problem (module docstring, step 3), by kind with counts."""

    posts: Counter[Piece]
    pres: Counter[Piece]
    free: Counter[Piece]
    fluid: list[str]
    space: int  # between two ops of X: the space less what every op of X holds


def _find_pieces(problem: Problem, sets: Exclusion, chosen: list[str],
                 before: dict[str, int], after: dict[str, int],
                 usable: dict[str, list[Mode]]) -> _Gaps:
    """Steps 2 and 3 of the module docstring: confining buffers, the groups they join,
    and the pieces of those groups by kind (ops of X without one get empty pieces)."""
    index = {name: i for i, name in enumerate(problem.ops)}
    xs = set(chosen)
    ys = {y for y in sets.rest if min(m.duration for m in usable[y]) > 0}
    # held by every op of X, so live all through a gap between two of them
    always = frozenset.intersection(*(sets.held[x] for x in chosen)) if len(chosen) > 1 \
        else frozenset()
    smallest = sorted((sets.footprint[x], x) for x in chosen)[:2]
    users: dict[str, list[str]] = defaultdict(list)
    for name in problem.ops:
        for b in sets.held[name]:
            users[b].append(name)
    parent = {name: name for name in (*ys, *xs)}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    confining = set()
    for b, size in sets.rounded.items():
        holders = [o for o in users[b] if o in xs]
        if b in always or not users[b] or len(holders) > 1 or \
                any(o not in ys and o not in xs for o in users[b]):
            continue
        others = [f for f, x in smallest if x not in holders]
        if others and size + others[0] <= sets.space:
            continue
        confining.add(b)
        first = root(users[b][0])
        for o in users[b][1:]:
            parent[root(o)] = first
    groups: dict[str, list[str]] = defaultdict(list)
    for name in sorted(parent, key=index.__getitem__):
        groups[root(name)].append(name)
    posts: Counter[Piece] = Counter()
    pres: Counter[Piece] = Counter()
    free: Counter[Piece] = Counter()
    fluid: list[str] = []
    seen_x = set()
    for members in groups.values():
        holders = [o for o in members if o in xs]
        ops = [o for o in members if o in ys]
        if len(holders) > 1 or len(ops) > MAX_PIECE_OPS or \
                not any(b in confining for o in ops for b in sets.held[o]):
            fluid.extend(ops)
            continue
        if not holders:
            free[_piece(ops, confining, frozenset(), sets, after, index, usable)] += 1
            continue
        x = holders[0]
        seen_x.add(x)
        bit = 1 << index[x]
        pre = [o for o in ops if after[o] & bit]
        post = [o for o in ops if before[o] & bit]
        fluid.extend(o for o in ops if not (after[o] | before[o]) & bit)
        anchored = sets.held[x] & confining
        pres[_piece(pre, confining, anchored, sets, after, index, usable)] += 1
        posts[_piece(post, confining, anchored, sets, after, index, usable)] += 1
    if len(xs) > len(seen_x):  # ops of X with no confining buffer: empty pieces
        pres[Piece(())] += len(xs) - len(seen_x)
        posts[Piece(())] += len(xs) - len(seen_x)
    return _Gaps(posts, pres, free, fluid,
                 sets.space - sum(sets.rounded[b] for b in always))


def _piece(ops: list[str], confining: set[str], anchored: frozenset[str], sets: Exclusion,
           after: dict[str, int], index: dict[str, int], usable: dict[str, list[Mode]]
           ) -> Piece:
    """The :class:`Piece` of ``ops`` (in problem order): their confining buffers, those
    in ``anchored`` marked, and the necessary edges among them (transitively closed)."""
    position = {name: i for i, name in enumerate(ops)}
    accessed: dict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(ops):
        for b in sorted(sets.held[name] & confining):
            accessed[b].append(i)
    buffers = sorted((sets.rounded[b], b in anchored, tuple(users))
                     for b, users in accessed.items())
    edges = tuple((position[a], position[b]) for a in ops for b in ops
                  if after[a] >> index[b] & 1)
    modes = tuple(tuple(mode_key(m) for m in usable[name]) for name in ops)
    return Piece(modes, tuple(buffers), edges)


def gap_bound(problem: Problem, target: Target, sets: Exclusion, before: dict[str, int],
              after: dict[str, int], usable: dict[str, list[Mode]]) -> int:
    """The ``gaps:M`` part for the memory of ``sets`` (see the module docstring)."""
    chosen = [x for x in sets.chosen if min(m.duration for m in usable[x]) > 0]
    if not chosen:
        return 0
    gaps = _find_pieces(problem, sets, chosen, before, after, usable)
    if len(gaps.posts) > MAX_KINDS or len(gaps.pres) > MAX_KINDS or gaps.space <= 0:
        return 0  # too many kinds to price; or no legal schedule (FIT)
    resources = [(k, n) for k, n in (*target.lanes.items(), *target.budgets.items()) if n > 0]
    fluid: Counter[OpKey] = Counter(
        (tuple(mode_key(m) for m in usable[y]),
         (0.0,) * len(_DFF)) for y in gaps.fluid)
    free_kinds = list(gaps.free)
    kinds = [(p, q) for p in [None, *gaps.posts] for q in [None, *gaps.pres]
             if (p is None) != (q is None) or (p is not None and len(chosen) > 1)]
    per_gap = FREE_PER_GAP
    while per_gap and len(kinds) * math.comb(len(free_kinds) + per_gap, per_gap) > MAX_PATTERNS:
        per_gap -= 1
    patterns = [Pattern(gaps.space if p is not None and q is not None else sets.space, p, q,
                        tuple(free_kinds[i] for i in combo))
                for p, q in kinds for size in range(per_gap + 1)
                for combo in itertools.combinations_with_replacement(range(len(free_kinds)),
                                                                     size)]
    pricing = _Pricing(target, resources, sets.space, MAX_SOLVES)
    for p, q in kinds:
        pricing.solve(Pattern(gaps.space if p is not None and q is not None else sets.space,
                              p, q, ()))
    for unit in free_kinds:
        pricing.solve(Pattern(sets.space, None, None, (unit,)))
    value = 0.0
    while True:
        lp = _gap_lp(gaps, kinds, patterns, per_gap, free_kinds, fluid, resources, pricing)
        if lp is None:
            return 0
        value, used = lp
        pending = [pattern for pattern in used if pattern not in pricing.exact]
        if not pending or pricing.spent:
            break
        for pattern in pending:
            pricing.solve(pattern)
    shortest = sum(min(m.duration for m in usable[x]) for x in chosen)
    return shortest + ceil_bound(value)


class _Pricing:
    """Each pattern's least length: the largest of CP-SAT's bound where solved (``exact``),
    the lengths of the pattern less one free unit and of its free units alone (fewer ops
    only relax), and its ops' least work on each resource (:func:`_work`)."""

    def __init__(self, target: Target, resources: list[tuple[str, int]], space: int,
                 solves: int) -> None:
        self.target = target
        self.space = space  # of a gap with nothing held all along: free units alone
        self.resources = resources
        self.left = solves
        self.work = MAX_WORK
        self.exact: dict[Pattern, int | None] = {}
        self.known: dict[Pattern, float | None] = {}

    @property
    def spent(self) -> bool:
        return self.left <= 0 or self.work <= 0.0

    def solve(self, pattern: Pattern) -> None:
        if pattern in self.exact or self.spent:
            return
        priced = price_pattern(pattern, self.target, min(_SOLVE_WORK, self.work))
        self.left -= 1
        self.work -= priced.work
        self.exact[pattern] = priced.length
        self.known.clear()

    def length(self, pattern: Pattern) -> float | None:
        """None: no legal gap holds it."""
        if pattern in self.known:
            return self.known[pattern]
        found = [self.exact.get(pattern, 0), *_work(_pattern_ops(pattern), self.resources)]
        for i, unit in enumerate(pattern.free):
            if i and unit == pattern.free[i - 1]:
                continue
            rest = (*pattern.free[:i], *pattern.free[i + 1:])
            found.append(self.length(Pattern(pattern.space, pattern.post, pattern.pre, rest)))
            if pattern.post is not None or pattern.pre is not None or rest:
                found.append(self.length(Pattern(self.space, None, None, (unit,))))
        value = None if any(f is None for f in found) else max(f or 0.0 for f in found)
        self.known[pattern] = value
        return value


#: An op as the energy and memory rows see it: its usable modes, and its memory weights
#: (one per dual-feasible function of :data:`_DFF`; see :func:`_op_keys`).
OpKey = tuple[tuple[ModeKey, ...], tuple[float, ...]]
#: The dual-feasible functions u_k of the memory rows.
_DFF = (1, 2, 3)


def _dff(size: int, space: int, k: int) -> float:
    """Fekete and Schepers' dual-feasible function u_k of ``size / space``: sizes that
    fit together in ``space`` have values summing to at most 1 (so with k = 2 a buffer of
    more than a third of the space counts as half of it: two at a time)."""
    if (k + 1) * size % space == 0:
        return size / space
    return ((k + 1) * size // space) / k


def _chain(piece: Piece, among: set[int], ends: set[int], reverse: bool) -> set[int]:
    """The ops of a longest chain of necessary edges within ``among`` (by shortest
    durations) that ends at an op of ``ends`` (starts there if ``reverse``)."""
    shortest = [min(mode[0] for mode in modes) for modes in piece.modes]
    best = {i: (shortest[i], (i,)) for i in among}
    edges = [(b, a) if reverse else (a, b) for a, b in piece.edges if a in among and b in among]
    for _ in range(len(among)):
        for a, b in edges:
            if best[a][0] + shortest[b] > best[b][0]:
                best[b] = (best[a][0] + shortest[b], (*best[a][1], b))
    return set(max((best[i] for i in ends), default=(0, ()))[1])


@functools.lru_cache(maxsize=4096)
def _op_keys(piece: Piece, anchor: str, space: int) -> tuple[OpKey, ...]:
    """Per op of ``piece`` in a gap of ``space``, its :data:`OpKey`. The memory rows:
    the buffers live at any instant have :func:`_dff` values summing to at most 1, so a
    gap lasts at least the sum over its buffers of that value times the buffer's
    lifetime. A buffer lives at least as long as a chain of ops that must run one after
    another inside its window: its accessors, and for a buffer anchored to the gap's
    start (end), any chain of the piece that ends (starts) at an accessor. Each op of the
    chain chosen per buffer (:func:`_chain`) carries the buffer's value as its weight, so
    the row is the ops' durations, in the modes they take, times their weights."""
    weights = [[0.0] * len(_DFF) for _ in piece.modes]
    everything = set(range(len(piece.modes)))
    for size, anchored, users in piece.buffers:
        if anchored and anchor:
            chain = _chain(piece, everything, set(users), anchor == "end")
        else:
            chain = _chain(piece, set(users), set(users), False)
        for i in chain:
            for j, k in enumerate(_DFF):
                weights[i][j] += _dff(size, space, k)
    return tuple((modes, tuple(w)) for modes, w in zip(piece.modes, weights, strict=True))


def _pattern_ops(pattern: Pattern) -> Counter[OpKey]:
    """The ops of ``pattern``, by :data:`OpKey`."""
    return Counter(key for piece, anchor in pattern.pieces()
                   for key in _op_keys(piece, anchor, pattern.space))


def _work(ops: Counter[OpKey], resources: list[tuple[str, int]]) -> list[float]:
    """Per lane kind and budget, then per memory row, the least time ``ops`` need (each
    op in its mode that needs least of it)."""
    totals = []
    for name, capacity in resources:
        totals.append(sum(n * min(d * dict((*lanes, *budgets)).get(name, 0)
                                  for d, lanes, budgets in modes)
                          for (modes, _), n in ops.items()) / capacity)
    for j in range(len(_DFF)):
        totals.append(sum(n * weights[j] * min(mode[0] for mode in modes)
                          for (modes, weights), n in ops.items()))
    return totals


def _gap_lp(gaps: _Gaps, kinds: list[tuple[Piece | None, Piece | None]],
            patterns: list[Pattern], per_gap: int, free_kinds: list[Piece],
            fluid: Counter[OpKey], resources: list[tuple[str, int]], pricing: _Pricing
            ) -> tuple[float, list[Pattern]] | None:
    """The LP of the module docstring (step 5): its optimum, and the patterns it uses.

    Beside each pattern's length, rows of energy and memory (:func:`_energy_rows`) hold
    for all gaps together, and for the gaps of each space with ``per_gap`` free units or
    more (``full``), which also hold the free units beyond."""
    solver = pywraplp.Solver.CreateSolver("GLOP")
    infinity = solver.infinity()
    count = {kind: solver.NumVar(0.0, infinity, "") for kind in kinds}
    for p, n in [(None, 1), *gaps.posts.items()]:
        solver.Add(sum(v for (a, _), v in count.items() if a == p) == n)
    for q, n in [(None, 1), *gaps.pres.items()]:
        solver.Add(sum(v for (_, b), v in count.items() if b == q) == n)
    split: dict[tuple[Piece | None, Piece | None], list] = defaultdict(list)
    units: dict[Piece, list] = defaultdict(list)
    spaces = sorted({pattern.space for pattern in patterns})
    lengths: list = []
    full_lengths: dict[int, list] = {space: [] for space in spaces}
    everywhere: dict[OpKey, list] = defaultdict(list)
    in_full: dict[int, dict[OpKey, list]] = {space: defaultdict(list) for space in spaces}
    for key, n in fluid.items():
        everywhere[key].append(n)
    columns = []
    for pattern in patterns:
        length = pricing.length(pattern)
        if length is None:
            continue
        use = solver.NumVar(0.0, infinity, "")
        columns.append((pattern, use))
        split[(pattern.post, pattern.pre)].append(use)
        for unit in pattern.free:
            units[unit].append(use)
        full = len(pattern.free) == per_gap
        (full_lengths[pattern.space] if full else lengths).append(length * use)
        for key, n in _pattern_ops(pattern).items():
            everywhere[key].append(n * use)
            if full:
                in_full[pattern.space][key].append(n * use)
    for kind, v in count.items():
        solver.Add(sum(split[kind]) == v)
    for unit, n in gaps.free.items():
        extras = {space: solver.NumVar(0.0, infinity, "") for space in spaces}
        solver.Add(sum(units[unit]) + sum(extras.values()) == n)
        for space, extra in extras.items():
            for key, m in Counter(_op_keys(unit, "", space)).items():
                everywhere[key].append(m * extra)
                in_full[space][key].append(m * extra)
    total = sum(lengths)
    for space in spaces:
        full = solver.NumVar(0.0, infinity, "")
        total += full
        solver.Add(full >= sum(full_lengths[space]))
        _energy_rows(solver, full, in_full[space], resources)
    _energy_rows(solver, total, everywhere, resources)
    solver.Minimize(total)
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        return None
    used = [pattern for pattern, use in columns if use.solution_value() > 1e-9]
    return solver.Objective().Value(), used


def _energy_rows(solver: pywraplp.Solver, length: object, ops: dict[OpKey, list],
                 resources: list[tuple[str, int]]) -> None:
    """``length`` is at least each resource's work over its capacity and each memory
    row (:func:`_op_keys`), for ``ops`` (per :data:`OpKey`, terms that sum to how many:
    numbers or LP expressions), each op in a mode of its own: the ``energy`` LP with
    memory beside lanes and budgets, so one mode choice pays for both."""
    work = [0.0] * (len(resources) + len(_DFF))
    for (modes, weights), terms in ops.items():
        shares = [solver.NumVar(0.0, solver.infinity(), "") for _ in modes]
        solver.Add(sum(shares) == sum(terms))
        for r, (name, _) in enumerate(resources):
            work[r] += sum(share * d * dict((*lanes, *budgets)).get(name, 0)
                           for share, (d, lanes, budgets) in zip(shares, modes, strict=True))
        for j, weight in enumerate(weights):
            if weight:
                work[len(resources) + j] += sum(share * mode[0] * weight
                                                for share, mode in zip(shares, modes,
                                                                       strict=True))
    capacities = [capacity for _, capacity in resources] + [1] * len(_DFF)
    for w, capacity in zip(work, capacities, strict=True):
        solver.Add(capacity * length >= w)
