"""The product of a Büchi automaton with a whole explored state space, built and searched
with NumPy and SciPy: the LTL checker's path for large spaces.

:func:`product_lasso` evaluates every atom once per marking (NumPy boolean vectors), folds
the markings into classes of equal atom values, and reads an automaton state's label once
per class. The product's reachable part is built breadth-first, a whole layer at a time:
the layer's markings' edges (a dead marking's repetition included) times the automaton's
edges, kept where the target marking satisfies the target automaton state's label. Its
strongly connected components come from :func:`scipy.sparse.csgraph.connected_components`;
a component is accepting when it has a cycle and meets every acceptance set, and fair when
it passes the Emerson-Lei test of :mod:`tcpn.petrinets.fairness` (refined, as there, by
removing the states that enable a strongly fair transition the component never takes).
Only then is a lasso built: the breadth-first tree gives a shortest stem, and a cycle
through the component's acceptance states (and its fair transitions) comes from
breadth-first searches inside it (:func:`scipy.sparse.csgraph.breadth_first_order`).

The answers are those of the on-the-fly search in :mod:`tcpn.petrinets.ltl` (tested);
what differs is the cost: a product state costs a few array operations instead of a
Python loop turn.
"""

from __future__ import annotations

import time as wallclock
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import breadth_first_order, connected_components

from tcpn.petrinets.fairness import component_fairness
from tcpn.petrinets.formulas import Formula, Not

if TYPE_CHECKING:
    from tcpn.petrinets.ltl import BuchiAutomaton

__all__ = ["ProductTooLarge", "product_lasso"]

#: Product states (markings x automaton states) beyond which the dense index is refused.
MAX_DENSE_PRODUCT = 100_000_000
#: Product edges kept at most (12 bytes each, about as much again while the components are
#: found): beyond it the check answers ``unknown`` naming this budget instead of letting
#: memory grow without bound (Dekker-PT-015's LTL products reached 15.6 GB).
MAX_PRODUCT_EDGES = 150_000_000
#: Product states expanded per slice of a breadth-first layer (bounds the memory).
SLICE_STATES = 1 << 16


class ProductTooLarge(Exception):
    """A budget was reached (the message names it)."""


@dataclass
class StateGraph:
    """A state space as arrays: edges ``indptr[s]:indptr[s + 1]`` go to ``targets`` with
    transition ``labels`` (indexing ``names``); a dead marking gets one extra edge to
    itself, labelled -1 (its repetition)."""

    indptr: np.ndarray
    targets: np.ndarray
    edge: np.ndarray
    labels: np.ndarray

    @classmethod
    def of(cls, indptr: np.ndarray, targets: np.ndarray, labels: np.ndarray) -> StateGraph:
        """The graph with each dead marking's repetition added."""
        n = len(indptr) - 1
        degree = np.diff(indptr)
        dead = np.flatnonzero(degree == 0)
        if not len(dead):
            return cls(indptr.astype(np.int64), targets.astype(np.int64),
                       np.arange(len(targets), dtype=np.int64), labels.astype(np.int64))
        src = np.concatenate([np.repeat(np.arange(n), degree), dead])
        dst = np.concatenate([targets.astype(np.int64), dead])
        edge = np.concatenate([np.arange(len(targets)), np.full(len(dead), -1)])
        order = np.argsort(src, kind="stable")
        ext = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=ext[1:])
        lab = np.concatenate([labels.astype(np.int64), np.full(len(dead), -1)])
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
    """The reachable product, as arrays in discovery (breadth-first) order."""

    def __init__(self, automaton: BuchiAutomaton, graph: StateGraph, klass: np.ndarray,
                 readable: np.ndarray, max_states: int | None, deadline: float | None):
        n_q = len(automaton)
        n = len(graph.indptr) - 1
        if n * n_q > MAX_DENSE_PRODUCT:
            raise ProductTooLarge(f"product of {n} markings and {n_q} automaton states "
                                  f"exceeds {MAX_DENSE_PRODUCT} array entries")
        a_indptr = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum([len(s) for s in automaton.successors], out=a_indptr[1:])
        a_targets = np.array([t for s in automaton.successors for t in s], dtype=np.int64)
        index = np.full(n * n_q, -1, dtype=np.int32)  # MAX_DENSE_PRODUCT < 2**31
        roots = np.array([q for q in automaton.initial if readable[q, klass[0]]],
                         dtype=np.int64)
        index[roots] = np.arange(len(roots))
        nodes = [roots]
        parents = [np.full(len(roots), -1, dtype=np.int64)]
        parent_edges = [np.full(len(roots), -1, dtype=np.int64)]
        src_parts: list[np.ndarray] = []
        dst_parts: list[np.ndarray] = []
        edge_parts: list[np.ndarray] = []
        count = len(roots)
        edges = 0
        frontier, first = roots, 0
        while len(frontier):
            if deadline is not None and wallclock.perf_counter() > deadline:
                raise ProductTooLarge("time budget reached")
            following = []
            for lo in range(0, len(frontier), SLICE_STATES):
                ids = frontier[lo:lo + SLICE_STATES]
                state, q = np.divmod(ids, n_q)
                which, e = _expand(graph.indptr, state)
                which2, a = _expand(a_indptr, q[which])
                pair = which[which2]
                e = e[which2]
                target_state = graph.targets[e]
                target_q = a_targets[a]
                keep = readable[target_q, klass[target_state]]
                pair, e = pair[keep], e[keep]
                target = target_state[keep] * n_q + target_q[keep]
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
                    index[new] = np.arange(count, count + len(new))
                    count += len(new)
                    if max_states is not None and count > max_states:
                        raise ProductTooLarge(f"product budget reached: {max_states} states")
                    nodes.append(new)
                    parents.append(first + lo + pair[into])
                    parent_edges.append(graph.edge[e[into]])
                    following.append(new)
                edges += len(pair)
                if edges > MAX_PRODUCT_EDGES:
                    raise ProductTooLarge(f"product budget reached: more than "
                                          f"{MAX_PRODUCT_EDGES} product edges")
                src_parts.append((first + lo + pair).astype(np.int32))
                dst_parts.append(index[target].astype(np.int32))
                edge_parts.append(e.astype(np.int32))
            first += len(frontier)
            frontier = np.concatenate(following) if following else np.zeros(0, np.int64)
        self.n_q = n_q
        self.nodes = np.concatenate(nodes)
        self.state = self.nodes // n_q
        self.q = self.nodes % n_q
        self.parent = np.concatenate(parents)
        self.parent_edge = np.concatenate(parent_edges)
        # sources come in discovery order: the edges are already compressed rows
        self.src = np.concatenate(src_parts) if src_parts else np.zeros(0, np.int32)
        self.dst = np.concatenate(dst_parts) if dst_parts else np.zeros(0, np.int32)
        self.state_edge = np.concatenate(edge_parts) if edge_parts else np.zeros(0, np.int32)
        self.graph = graph
        self.size = count
        self.row = np.zeros(count + 1, dtype=np.int64)  # product edges of u: row[u]:row[u+1]
        np.cumsum(np.bincount(self.src, minlength=count), out=self.row[1:])

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
        _, labels = connected_components(matrix, directed=True, connection="strong")
        labels = np.where(mask, labels, -1)
        k = int(labels.max()) + 1 if len(labels) else 0
        sizes = np.bincount(labels[mask], minlength=k)
        cyclic = sizes > 1
        loops = self.src[self.src == self.dst]
        loops = loops[mask[loops]]
        cyclic[labels[loops]] = True
        return labels, cyclic, matrix


def product_lasso(automaton: BuchiAutomaton, indptr: np.ndarray, targets: np.ndarray,
                  labels: np.ndarray, names: Sequence[str],
                  mask: Callable[[Formula], np.ndarray],
                  fair: tuple[frozenset[str], frozenset[str]],
                  max_product_states: int | None = None, deadline: float | None = None
                  ) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int] | None:
    """An accepted (and fair) lasso of the product, or None if there is none.

    Returns ``(stem, cycle, product_states)``; stem and cycle are lists of ``(state,
    edge)``, ``edge`` the state space's edge index leading into ``state`` (-1: the
    repetition of a dead marking). Raises :class:`ProductTooLarge` naming a budget.
    """
    graph = StateGraph.of(indptr, targets, labels)
    n = len(indptr) - 1
    klass, readable = _classes(automaton, n, mask)
    product = _Product(automaton, graph, klass, readable, max_product_states, deadline)
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
                              graph: StateGraph, names: Sequence[str],
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
        order, predecessors = breadth_first_order(self.matrix, self.here, directed=True,
                                                  return_predecessors=True)
        hits = order[goal[order]]
        assert len(hits), "a strongly connected component reaches all its nodes"
        path = [int(hits[0])]
        while path[-1] != self.here:
            path.append(int(predecessors[path[-1]]))
        for u, v in zip(path[::-1], path[-2::-1], strict=False):
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
