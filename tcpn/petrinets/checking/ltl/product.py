"""The product of a Büchi automaton with a whole explored state space, built and searched
with NumPy and SciPy: the LTL checker's path for large spaces.

:func:`product_lasso` evaluates every atom once per marking (NumPy boolean vectors), folds
the markings into classes of equal atom values, and reads an automaton state's label once
per class. The product's reachable part is built breadth-first, a whole layer at a time:
the layer's markings' edges (a dead marking's repetition included) times the automaton's
edges, kept where the target marking satisfies the target automaton state's label. Its
strongly connected components come from the graph kernel
(:func:`~tcpn.petrinets.statespace.graph.labelled_components`);
a component is accepting when it has a cycle and meets every acceptance set, and fair when
it passes the Emerson-Lei test of :mod:`tcpn.petrinets.checking.fairness` (refined, as there, by
removing the states that enable a strongly fair transition the component never takes).
Only then is a lasso built: the breadth-first tree gives a shortest stem, and a cycle
through the component's acceptance states (and its fair transitions) comes from
breadth-first searches inside it (:func:`~tcpn.petrinets.statespace.graph.bfs_path`).
The components are searched already while the product grows (each time it has grown
:data:`CHECK_GROWTH` times in edges): a lasso in a part of the product is one in the whole,
so a counterexample stops the construction early; only "no lasso" needs the whole product.
The construction stops with :class:`ProductTooLarge` naming the budget when the process's
resident memory passes its :class:`~tcpn.petrinets.statespace.memory.MemoryBudget`.

The answers are those of the on-the-fly search in :mod:`tcpn.petrinets.checking.ltl` (tested);
what differs is the cost: a product state costs a few array operations instead of a
Python loop turn.
"""

from __future__ import annotations

import time as wallclock
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse import csr_array

from tcpn.petrinets.checking.fairness import component_fairness
from tcpn.petrinets.checking.formulas import Formula, Not
from tcpn.petrinets.statespace.graph import bfs_path, labelled_components
from tcpn.petrinets.statespace.memory import MemoryBudget

if TYPE_CHECKING:
    from tcpn.petrinets.checking.ltl import BuchiAutomaton

__all__ = ["ProductTooLarge", "product_lasso"]

#: Product states (markings x automaton states) beyond which the dense index is refused.
MAX_DENSE_PRODUCT = 100_000_000
#: Product edges at the first search of a part of the product for a lasso...
FIRST_CHECK_EDGES = 1 << 20
#: ...and how many times the product grows in edges before the next one (the searches of
#: parts cost at most 1 / (CHECK_GROWTH - 1) of the last search's).
CHECK_GROWTH = 4
#: Bytes per edge :meth:`StutteringGraph.of` may hold at once (with dead markings: sources,
#: targets, edge numbers, labels and the sort's order), checked against the memory budget.
STATE_GRAPH_EDGE_BYTES = 32
#: Product states expanded per slice of a breadth-first layer (bounds the memory) ...
SLICE_STATES = 1 << 16
#: ... and at most this many product edges (their state-space edges times the automaton
#: successors) per slice: a state space stopped early has states of hundreds of edges
#: (SemanticWebServices-PT-S064P06: 80 a state expanded), and 65,536 of them with an
#: automaton of 12 states made a slice of 10^8 edges, past the memory budget between two
#: of its readings.
SLICE_EDGES = 1 << 22
#: Bytes a product edge of a slice takes at once (its position, state-space edge and
#: target, int64 each, their sort's order and the sorted copies), read against the budget.
SLICE_EDGE_BYTES = 64


class ProductTooLarge(Exception):
    """A budget was reached (the message names it)."""


@dataclass
class StutteringGraph:
    """A state space as arrays: edges ``indptr[s]:indptr[s + 1]`` go to ``targets`` with
    transition ``labels`` (indexing ``names``); a dead marking gets one extra edge to
    itself, labelled -1 (its repetition: the path stutters there, as LTL's infinite paths
    need). The graph kernel's :class:`~tcpn.petrinets.statespace.graph.StateGraph`, which
    CTL reads, keeps dead markings dead (CTL's finite maximal paths)."""

    indptr: np.ndarray
    targets: np.ndarray
    edge: np.ndarray
    labels: np.ndarray

    @classmethod
    def of(cls, indptr: np.ndarray, targets: np.ndarray, labels: np.ndarray,
           expanded: int | None = None) -> StutteringGraph:
        """The graph with each dead marking's repetition added (edge arrays in 4-byte
        integers below 2**31 edges and states; no copy of a space's own int32 arrays
        when no marking is dead). States numbered ``expanded`` and up (a budget's
        frontier: found, not expanded) are not dead, only unknown: they get no
        repetition, so no path of the product continues from them."""
        n = len(indptr) - 1
        index = np.int32 if len(targets) + n < 2**31 else np.int64
        degree = np.diff(indptr)
        dead = np.flatnonzero(degree[:expanded] == 0)
        if not len(dead):
            return cls(indptr.astype(np.int64, copy=False),
                       targets.astype(index, copy=False),
                       np.arange(len(targets), dtype=index),
                       labels.astype(np.int32, copy=False))
        src = np.concatenate([np.repeat(np.arange(n, dtype=index), degree),
                              dead.astype(index)])
        dst = np.concatenate([targets.astype(index, copy=False), dead.astype(index)])
        edge = np.concatenate([np.arange(len(targets), dtype=index),
                               np.full(len(dead), -1, dtype=index)])
        order = np.argsort(src, kind="stable")
        ext = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=ext[1:])
        lab = np.concatenate([labels.astype(np.int32, copy=False),
                              np.full(len(dead), -1, dtype=np.int32)])
        return cls(ext, dst[order], edge[order], lab[order])


def _classes(automaton: BuchiAutomaton, n: int, mask: Callable[[Formula], np.ndarray]
             ) -> tuple[np.ndarray, np.ndarray]:
    """(class of each marking, readable[q, class]): markings with the same value of every
    atom the automaton reads share a class."""
    atoms: list[Formula] = []
    for literals in automaton.literals:
        for literal in literals:
            atom = literal.operand if isinstance(literal, Not) else literal
            if atom not in atoms:
                atoms.append(atom)
    if not atoms:
        return np.zeros(n, dtype=np.int64), np.ones((len(automaton), 1), dtype=bool)
    values = np.column_stack([np.asarray(mask(a), dtype=bool) for a in atoms])
    packed = np.packbits(values, axis=1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, klass = np.unique(keys, return_index=True, return_inverse=True)
    table = values[first]  # classes x atoms
    position = {a: i for i, a in enumerate(atoms)}
    readable = np.ones((len(automaton), len(first)), dtype=bool)
    for q, literals in enumerate(automaton.literals):
        for literal in literals:
            if isinstance(literal, Not):
                readable[q] &= ~table[:, position[literal.operand]]
            else:
                readable[q] &= table[:, position[literal]]
    return klass.ravel().astype(np.int64), readable


def _expand(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For CSR ``indptr`` and row numbers: (which input row, entry index) of every entry
    of those rows, in order."""
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    total = int(lengths.sum())
    which = np.repeat(np.arange(len(rows)), lengths)
    if total == 0:
        return which, np.zeros(0, dtype=np.int64)
    offsets = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return which, np.repeat(starts, lengths) + offsets


class _Product:
    """The reachable product, as arrays in discovery (breadth-first) order, built one
    breadth-first layer per :meth:`grow`; between layers it is a sub-graph of the whole
    product (the frontier's edges missing) that :meth:`freeze` makes searchable."""

    def __init__(self, automaton: BuchiAutomaton, graph: StutteringGraph, klass: np.ndarray,
                 readable: np.ndarray, max_states: int | None, deadline: float | None,
                 budget: MemoryBudget):
        n_q = len(automaton)
        n = len(graph.indptr) - 1
        if n * n_q > MAX_DENSE_PRODUCT:
            raise ProductTooLarge(f"product of {n} markings and {n_q} automaton states "
                                  f"exceeds {MAX_DENSE_PRODUCT} array entries")
        if budget.exceeded(5 * n * n_q):  # the dense index (4 bytes) and reads (1 byte)
            raise ProductTooLarge(budget.reason() + f" (the index of {n} markings x {n_q} "
                                  "automaton states would not fit)")
        self.n_q, self.graph = n_q, graph
        self.max_states, self.deadline, self.budget = max_states, deadline, budget
        self.successors = [np.array(s, dtype=np.int64) for s in automaton.successors]
        # reads[q2][s]: automaton state q2 may read marking s
        self.reads = readable[:, klass]
        self.index = np.full(n * n_q, -1, dtype=np.int32)  # MAX_DENSE_PRODUCT < 2**31
        roots = np.array([q for q in automaton.initial if readable[q, klass[0]]],
                         dtype=np.int64)
        self.index[roots] = np.arange(len(roots))
        self.nodes_parts = [roots]
        self.parent_parts = [np.full(len(roots), -1, dtype=np.int64)]
        self.parent_edge_parts = [np.full(len(roots), -1, dtype=np.int64)]
        self.src_parts: list[np.ndarray] = []
        self.dst_parts: list[np.ndarray] = []
        self.edge_parts: list[np.ndarray] = []
        self.size = len(roots)
        self.edges = 0
        self.frontier, self.first = roots, 0

    def _stop_if_over_budget(self, more_bytes: int = 0) -> None:
        if self.deadline is not None and wallclock.perf_counter() > self.deadline:
            raise ProductTooLarge("time budget reached")
        if self.budget.exceeded(more_bytes):
            raise ProductTooLarge(self.budget.reason() + (
                f" (a slice of the product needs {more_bytes / 1e6:,.0f} MB)"
                if more_bytes else ""))

    def _slices(self, frontier: np.ndarray) -> list[tuple[int, int, int]]:
        """The frontier cut into slices of at most :data:`SLICE_STATES` product states and
        :data:`SLICE_EDGES` product edges (one state at least): ``(lo, hi, edges)``."""
        state, q = np.divmod(frontier, self.n_q)
        indptr = self.graph.indptr
        fanout = np.array([len(s) for s in self.successors], dtype=np.int64)
        edges = (indptr[state + 1] - indptr[state]) * fanout[q]
        total = np.concatenate(([0], np.cumsum(edges)))
        found, lo = [], 0
        while lo < len(frontier):
            hi = int(np.searchsorted(total, total[lo] + SLICE_EDGES, side="right")) - 1
            hi = min(max(hi, lo + 1), lo + SLICE_STATES, len(frontier))
            found.append((lo, hi, int(total[hi] - total[lo])))
            lo = hi
        return found

    def _slice_edges(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The product edges leaving product states ``ids``: (position in ``ids``, state
        space edge, target product node), sorted by position. The state graph's edges are
        gathered once per automaton state, then kept per automaton successor."""
        n_q, graph = self.n_q, self.graph
        state, q = np.divmod(ids, n_q)
        pairs, edges, targets = [], [], []
        for qa in np.unique(q).tolist():
            chosen = np.flatnonzero(q == qa)
            which, e = _expand(graph.indptr, state[chosen])
            target_state = graph.targets[e]
            for q2 in self.successors[qa].tolist():
                keep = np.flatnonzero(self.reads[q2][target_state])
                pairs.append(chosen[which[keep]])
                edges.append(e[keep])
                targets.append(target_state[keep].astype(np.int64) * n_q + q2)
        if not pairs:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        pair = np.concatenate(pairs)
        order = np.argsort(pair, kind="stable")
        return pair[order], np.concatenate(edges)[order], np.concatenate(targets)[order]

    def grow(self) -> bool:
        """Expand the frontier (one breadth-first layer); False when nothing is left."""
        frontier, index = self.frontier, self.index
        if not len(frontier):
            return False
        following = []
        for lo, hi, n_edges in self._slices(frontier):
            self._stop_if_over_budget(SLICE_EDGE_BYTES * n_edges)
            pair, e, target = self._slice_edges(frontier[lo:hi])
            into = np.flatnonzero(index[target] < 0)
            if len(into):
                # the first edge into each new node is its breadth-first parent: mark
                # each node with its first position (-2 - position; the last write of
                # the reversed order wins), then keep the positions that are first
                fresh = target[into]
                position = np.arange(len(fresh))
                index[fresh[::-1]] = -2 - position[::-1]
                first_time = -2 - index[fresh] == position
                new, into = fresh[first_time], into[first_time]
                index[new] = np.arange(self.size, self.size + len(new))
                self.size += len(new)
                if self.max_states is not None and self.size > self.max_states:
                    raise ProductTooLarge(f"product budget reached: {self.max_states} "
                                          "states")
                self.nodes_parts.append(new)
                self.parent_parts.append(self.first + lo + pair[into])
                self.parent_edge_parts.append(self.graph.edge[e[into]])
                following.append(new)
            self.edges += len(pair)
            self.src_parts.append((self.first + lo + pair).astype(np.int32))
            self.dst_parts.append(index[target].astype(np.int32))
            self.edge_parts.append(e.astype(np.int32))
        self.first += len(frontier)
        self.frontier = np.concatenate(following) if following else np.zeros(0, np.int64)
        return True

    def freeze(self) -> None:
        """Make the arrays of what is built so far (each set of parts joined into one)."""
        def joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
            whole = np.concatenate(parts) if parts else np.zeros(0, dtype)
            parts[:] = [whole]
            return whole

        n_q = self.n_q
        self.nodes = joined(self.nodes_parts, np.int64)
        self.state = self.nodes // n_q
        self.q = self.nodes % n_q
        self.parent = joined(self.parent_parts, np.int64)
        self.parent_edge = joined(self.parent_edge_parts, np.int64)
        # sources come in discovery order: the edges are already compressed rows
        self.src = joined(self.src_parts, np.int32)
        self.dst = joined(self.dst_parts, np.int32)
        self.state_edge = joined(self.edge_parts, np.int32)
        self.row = np.zeros(self.size + 1, dtype=np.int64)  # edges of u: row[u]:row[u+1]
        np.cumsum(np.bincount(self.src, minlength=self.size), out=self.row[1:])

    @property
    def label(self) -> np.ndarray:
        """The transition of each product edge (-1: a dead marking's repetition)."""
        return self.graph.labels[self.state_edge]

    def subgraph(self, mask: np.ndarray) -> csr_array:
        """The sub-graph ``mask`` induces, as a CSR matrix over all product states
        (parallel edges merged: scipy's strongly connected components need that)."""
        src, dst = self.src, self.dst
        if not mask.all():
            kept = mask[src] & mask[dst]
            src, dst = src[kept], dst[kept]
        index = np.int32 if len(src) < 2**31 else np.int64
        row = np.zeros(self.size + 1, dtype=index)
        np.cumsum(np.bincount(src, minlength=self.size), out=row[1:])
        # float64 weights: what scipy.sparse.csgraph works on (no conversion copy)
        matrix = csr_array((np.ones(len(src)), dst.astype(index), row),  # sorted: a copy
                           shape=(self.size, self.size))
        matrix.sum_duplicates()
        return matrix

    def edge(self, u: int, v: int) -> int:
        """The number of a product edge from ``u`` to ``v``."""
        lo, hi = self.row[u], self.row[u + 1]
        return int(lo + np.flatnonzero(self.dst[lo:hi] == v)[0])

    def components(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, csr_array]:
        """(component of each product state in ``mask``, -1 outside; whether each
        component has a cycle; the sub-graph, as :meth:`subgraph`)."""
        matrix = self.subgraph(mask)
        loops = self.src[self.src == self.dst]
        labels, cyclic = labelled_components(matrix, mask, loops[mask[loops]])
        return labels, cyclic, matrix


def product_lasso(automaton: BuchiAutomaton, indptr: np.ndarray, targets: np.ndarray,
                  labels: np.ndarray, names: Sequence[str],
                  mask: Callable[[Formula], np.ndarray],
                  fair: tuple[frozenset[str], frozenset[str]],
                  max_product_states: int | None = None, deadline: float | None = None,
                  graph: StutteringGraph | None = None, budget: MemoryBudget | None = None,
                  expanded: int | None = None, on_frontier: Callable[[], None] | None = None
                  ) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int] | None:
    """An accepted (and fair) lasso of the product, or None if there is none.

    Returns ``(stem, cycle, product_states)``; stem and cycle are lists of ``(state,
    edge)``, ``edge`` the state space's edge index leading into ``state`` (-1: the
    repetition of a dead marking). ``graph`` is :meth:`StutteringGraph.of` the edges when the
    caller keeps it for several formulas. Raises :class:`ProductTooLarge` naming a budget
    (``budget``: the process's resident memory, :meth:`MemoryBudget.default` if None).
    States numbered ``expanded`` and up are a stopped search's frontier: when the whole
    product (no lasso in it) reaches one, ``on_frontier`` is called.

    The components are searched each time the product has grown :data:`CHECK_GROWTH`
    times in edges since the last search (from :data:`FIRST_CHECK_EDGES` on), and once
    it is whole: a component of a part of the product is strongly connected in the whole
    product, so a lasso found early is a lasso (only "none" needs the whole product).
    """
    graph = graph if graph is not None else StutteringGraph.of(indptr, targets, labels)
    budget = budget if budget is not None else MemoryBudget.default()
    n = len(indptr) - 1
    klass, readable = _classes(automaton, n, mask)
    product = _Product(automaton, graph, klass, readable, max_product_states, deadline,
                       budget)
    check_at = FIRST_CHECK_EDGES
    while product.grow():
        if product.edges >= check_at and len(product.frontier):
            check_at = product.edges * CHECK_GROWTH
            found = _search_product(product, automaton, graph, names, fair)
            if found is not None:
                return found
    found = _search_product(product, automaton, graph, names, fair)
    if found is None and expanded is not None and on_frontier is not None and (
            product.size and (product.state >= expanded).any()):
        on_frontier()
    return found


def _search_product(product: _Product, automaton: BuchiAutomaton, graph: StutteringGraph,
                    names: Sequence[str], fair: tuple[frozenset[str], frozenset[str]]
                    ) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int] | None:
    """A lasso in the product built so far, or None."""
    # joining the parts, then scipy's CSR copy (float64 weights, indices, a sorted copy)
    # and its component labels: about 40 bytes a product edge at once
    if product.budget.exceeded(40 * product.edges):
        raise ProductTooLarge(product.budget.reason() + f" (the strongly connected "
                              f"components of {product.edges} product edges would not fit)")
    product.freeze()
    if product.size == 0:
        return None
    found = _fair_accepting_component(product, automaton, graph, names, fair)
    if found is None:
        return None
    return (*_lasso(product, *found, automaton), product.size)


#: A component found: its product states, its cycle's waypoints, the sub-graph in which it
#: is strongly connected.
_Found = tuple[np.ndarray, list[int | np.ndarray], csr_array]


def _fair_accepting_component(product: _Product, automaton: BuchiAutomaton,
                              graph: StutteringGraph, names: Sequence[str],
                              fair: tuple[frozenset[str], frozenset[str]]
                              ) -> _Found | None:
    """The product states of an accepting fair component nearest the root, what its
    cycle must pass (a transition number: an edge of it; a mask of product states: one of
    them, where a weakly fair transition the component never takes is disabled), and the
    sub-graph in which it is a strongly connected component."""
    number = {name: i for i, name in enumerate(names)}
    weak, strong = fair
    checks = [(t, False) for t in sorted(weak)] + [(t, True) for t in sorted(strong)]
    enabled: dict[str, np.ndarray] = {}
    n = len(graph.indptr) - 1
    graph_src = np.repeat(np.arange(n), np.diff(graph.indptr)) if checks else graph.labels
    for name, _ in checks:
        at_state = np.zeros(n, dtype=bool)
        at_state[graph_src[graph.labels == number[name]]] = True
        enabled[name] = at_state[product.state]
    number = {name: number.get(name, -2) for name, _ in checks}  # -2: no edge's label
    accepting_q = [np.isin(product.q, sorted(acc)) for acc in automaton.accepting]
    label = product.label if checks else product.src
    work = [np.ones(product.size, dtype=bool)]
    best: tuple[int, _Found] | None = None
    while work:
        mask = work.pop()
        labels, cyclic, matrix = product.components(mask)
        k = len(cyclic)
        safe = np.maximum(labels, 0)
        good = cyclic.copy()
        for accepting in accepting_q:
            good &= np.bincount(safe[mask & accepting], minlength=k) > 0
        if not checks:
            candidates = np.flatnonzero(good)
        else:
            weak_ok, refine, remove = component_fairness(labels, mask, k, product.src,
                                                         product.dst, label, number,
                                                         enabled, checks)
            good &= weak_ok
            again = mask & (good & refine)[safe] & ~remove
            if again.any():
                work.append(again)
            candidates = np.flatnonzero(good & ~refine)
        if not len(candidates):
            continue
        # the component reached first (its least discovery index) gives the shortest stem
        first_node = np.full(k, product.size, dtype=np.int64)
        members = np.flatnonzero(mask)[::-1]
        first_node[labels[members]] = members  # the last write, the least index, stays
        chosen = int(candidates[np.argmin(first_node[candidates])])
        if best is not None and first_node[chosen] >= best[0]:
            continue
        component = labels == chosen
        waypoints: list[int | np.ndarray] = []
        if checks:
            inside_chosen = component[product.src] & component[product.dst]
        for name, is_strong in checks:
            if (inside_chosen & (label == number[name])).any():
                waypoints.append(number[name])
            elif not is_strong:
                waypoints.append(~enabled[name])
        best = (int(first_node[chosen]), (component, waypoints, matrix))
    return None if best is None else best[1]


def _lasso(product: _Product, component: np.ndarray, waypoints: list[int | np.ndarray],
           matrix: csr_array, automaton: BuchiAutomaton
           ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """A stem from the root to the component and a cycle inside it through every
    acceptance set and waypoint. The cycle's legs are shortest paths in ``matrix`` (the
    sub-graph of which the component is a strongly connected component) between nodes of
    the component: such a path never leaves the component."""
    start = int(np.flatnonzero(component)[0])  # least discovery index: nearest the root
    stem: list[tuple[int, int]] = []
    walker = start
    while product.parent[walker] >= 0:
        stem.append((int(product.state[walker]), int(product.parent_edge[walker])))
        walker = int(product.parent[walker])
    stem.reverse()
    legs = _Legs(product, matrix, component, start)
    for accepting in automaton.accepting:
        legs.reach(component & np.isin(product.q, sorted(accepting)))
    for waypoint in waypoints:
        if isinstance(waypoint, np.ndarray):
            legs.reach(component & waypoint)
        else:
            legs.take(waypoint)
    if not legs.steps:  # a cycle has at least one edge: leave the start, then return
        legs.take(None)
    legs.reach(np.arange(product.size) == start)
    return stem, legs.steps


class _Legs:
    """A walk inside a component, leg by leg, as ``(state, edge)`` steps."""

    def __init__(self, product: _Product, matrix: csr_array, component: np.ndarray,
                 start: int):
        self.product, self.matrix, self.component = product, matrix, component
        self.here = start
        self.steps: list[tuple[int, int]] = []

    def _step(self, k: int) -> None:
        """Take product edge ``k``."""
        product = self.product
        self.here = int(product.dst[k])
        self.steps.append((int(product.state[self.here]),
                           int(product.graph.edge[product.state_edge[k]])))

    def reach(self, goal: np.ndarray) -> None:
        """Walk a shortest path to a node of ``goal``."""
        if goal[self.here]:
            return
        path = bfs_path(self.matrix, self.here, goal)
        assert path is not None, "a strongly connected component reaches all its nodes"
        for u, v in pairwise(path):
            self._step(self.product.edge(u, v))

    def take(self, transition: int | None) -> None:
        """Walk to an edge of ``transition`` inside the component (any edge: None) and
        take it."""
        product, component = self.product, self.component
        inside = component[product.src] & component[product.dst]
        if transition is not None:
            inside &= product.label == transition
        sources = np.zeros(product.size, dtype=bool)
        sources[product.src[inside]] = True
        self.reach(sources)
        lo, hi = product.row[self.here], product.row[self.here + 1]
        self._step(int(lo + np.flatnonzero(inside[lo:hi])[0]))
