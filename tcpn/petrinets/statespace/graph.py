"""The graph kernel: every graph algorithm the checkers share, over either explorer's space.

Strongly connected components, the ``EX``/``EU``/``EG`` fixpoints, forward and backward
reachability, shortest paths and lassos as witnesses, quickest and slowest arrivals
(timed durations), and Tarjan's algorithm on the fly (LTL's product, explored as it is
searched). CTL (:mod:`~tcpn.petrinets.checking.ctl`), fairness, LTL, the P/T checks, the
timed durations and the global properties (home markings, terminal components, the
standard report, the contest's liveness) all call these; none keeps a copy. Plain
functions and one array class (:class:`StateGraph`), as NetworkX's algorithms take a
graph: components and searches come from SciPy's sparse-graph routines, so they stay fast
and small for millions of states; NetworkX graphs are built only when asked for.

>>> from tcpn.petrinets.examples import counter
>>> from tcpn.petrinets.statespace.space import explore
>>> space = explore(counter(2))
>>> home_markings(space), scc_graph(space).number_of_nodes()
([2], 3)
>>> g = state_graph(space)
>>> g.forward_path(np.ones(g.n, dtype=bool), np.arange(g.n) == 2)
[0, 1]
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.timevalues import TOLERANCE

if TYPE_CHECKING:
    import networkx as nx
    from scipy.sparse import csr_array

    from tcpn.petrinets.statespace.protocol import ExploredSpace
    from tcpn.petrinets.statespace.space import StateSpace

__all__ = [
    "OnTheFlyComponents",
    "StateGraph",
    "bfs_path",
    "bfs_tree",
    "dead_markings",
    "edge_sources",
    "home_markings",
    "labelled_components",
    "require_complete",
    "scc_graph",
    "state_graph",
    "strongly_connected_components",
    "terminal_components",
    "to_networkx",
    "tree_path",
    "walk_to_edge",
]


# -- components and paths on a sparse matrix ---------------------------------------------------
def labelled_components(matrix: csr_array, mask: np.ndarray,
                        loops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SCC labels of the graph ``matrix`` (-1 outside ``mask``, whose nodes are the only
    ones with edges in it) and, per label, whether its component holds a cycle: more than
    one node, or a self-loop at one of ``loops`` (nodes)."""
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(matrix, directed=True, connection="strong")
    labels = np.where(mask, labels, -1)
    cyclic = np.bincount(labels[mask], minlength=len(labels)) > 1
    cyclic[labels[loops]] = True
    return labels, cyclic


def edge_sources(starts: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The state each of ``edges`` (numbers of stored edges) leaves, edges stored grouped
    by source with state ``s``'s from ``starts[s]``.

    >>> edge_sources(np.array([0, 2, 2, 5]), np.array([0, 1, 2, 4])).tolist()
    [0, 0, 2, 2]
    """
    return np.searchsorted(starts, edges, side="right") - 1


def bfs_tree(matrix: csr_array, start: int) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first search in ``matrix`` from ``start``: the nodes in the order met, and
    each node's parent in the tree of shortest paths (negative: ``start``, or not met)."""
    from scipy.sparse.csgraph import breadth_first_order

    order, parent = breadth_first_order(matrix, start, directed=True,
                                        return_predecessors=True)
    return order, parent


def tree_path(parent: np.ndarray, start: int, node: int) -> list[int]:
    """The nodes from ``start`` to ``node`` along a tree of :func:`bfs_tree` parents."""
    chain = [node]
    while chain[-1] != start:
        chain.append(int(parent[chain[-1]]))
    chain.reverse()
    return chain


def bfs_path(matrix: csr_array, start: int, goal: np.ndarray) -> list[int] | None:
    """The nodes of a shortest path in ``matrix`` from ``start`` to a ``goal`` node (the
    first that breadth-first search meets), ``None`` if it reaches none."""
    order, parent = bfs_tree(matrix, start)
    hits = order[goal[order]]
    return None if not len(hits) else tree_path(parent, start, int(hits[0]))


def _csr(src: np.ndarray, dst: np.ndarray, n: int, size: int | None = None) -> csr_array:
    from scipy.sparse import csr_array

    size = n if size is None else size
    return csr_array((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(size, size))


class StateGraph:
    """The edge arrays every fixpoint and search reads (``start``: state ``s``'s edges
    are ``start[s]:start[s + 1]``; ``src``, ``dst`` per edge; ``dead`` per state): the one
    implementation of ``EX``, ``EU``, ``EG``, of components and of witness paths for every
    checker. :func:`state_graph` makes and keeps one per state space."""

    def __init__(self, indptr: np.ndarray, targets: np.ndarray):
        self.start = np.asarray(indptr, dtype=np.int64)
        self.n = len(self.start) - 1
        # int32 state numbers: edges are the big arrays (a state space keeps < 2**31 states)
        self.dst = np.asarray(targets, dtype=np.int32)
        out_degree = np.diff(self.start)
        self.src = np.repeat(np.arange(self.n, dtype=np.int32), out_degree)
        self.dead = out_degree == 0
        self._reversed: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def of_lists(cls, successors: Sequence[Sequence[int]]) -> StateGraph:
        """The graph whose node ``q`` has the edges ``q -> r`` for ``r`` in ``successors[q]``.

        >>> StateGraph.of_lists([[1], [0], []]).reached(np.array([False, False, True])).tolist()
        [False, False, True]
        """
        indptr = np.concatenate([[0], np.cumsum([len(s) for s in successors])])
        return cls(indptr, np.fromiter((r for s in successors for r in s), dtype=np.int32,
                                       count=int(indptr[-1])))

    def pre_exists(self, target: np.ndarray) -> np.ndarray:
        """States with at least one successor in ``target`` (``EX``;
        :func:`~tcpn.petrinets.statespace.fixpoints.successor_in`)."""
        from tcpn.petrinets.statespace import fixpoints

        return fixpoints.successor_in(self.start, self.dst, np.asarray(target, dtype=bool))

    def backward(self, target: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """States from which a path through ``allowed`` states reaches ``target`` (``E[allowed U
        target]``), by one search over the reversed edges
        (:func:`~tcpn.petrinets.statespace.fixpoints.backward`)."""
        from tcpn.petrinets.statespace import fixpoints

        rstart, rsrc = self.reversed_edges()
        return fixpoints.backward(rstart, rsrc, np.asarray(target, dtype=bool),
                                  np.asarray(allowed, dtype=bool))

    def reversed_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rstart, rsrc)``: state ``s``'s predecessors are ``rsrc[rstart[s]:rstart[s +
        1]]``, made once (4 bytes an edge) for every fixpoint after."""
        if self._reversed is None:
            from tcpn.petrinets.statespace import fixpoints

            self._reversed = fixpoints.reverse(self.start, self.dst)
        return self._reversed

    def reached(self, sources: np.ndarray) -> np.ndarray:
        """States some path from a ``sources`` state reaches (the sources included)."""
        return self._from_seeds(self.src, self.dst, sources)

    def _from_seeds(self, rows: np.ndarray, cols: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """The nodes a breadth-first search along ``rows -> cols`` reaches from the
        ``seeds`` (one search, from a virtual node ``n`` with an edge to each seed)."""
        from scipy.sparse.csgraph import breadth_first_order

        n = self.n
        first = np.flatnonzero(seeds).astype(np.int32)
        rows = np.concatenate([rows, np.full(len(first), n, dtype=np.int32)])
        cols = np.concatenate([cols, first])
        matrix = _csr(rows, cols, n, n + 1)
        del rows, cols
        found = breadth_first_order(matrix, n, directed=True, return_predecessors=False)
        out = np.zeros(n + 1, dtype=bool)
        out[found] = True
        return out[:n]

    def globally(self, hold: np.ndarray) -> np.ndarray:
        """``EG hold`` without fairness: a maximal path through ``hold`` states, ending in a
        dead marking or in a cycle (:func:`~tcpn.petrinets.statespace.fixpoints.globally`:
        the ``hold`` states pruned of those with no successor left)."""
        from tcpn.petrinets.statespace import fixpoints

        rstart, rsrc = self.reversed_edges()
        return fixpoints.globally(self.start, self.dst, rstart, rsrc,
                                  np.asarray(hold, dtype=bool), self.dead)

    def on_cycle(self, mask: np.ndarray) -> np.ndarray:
        """The ``mask`` states on a cycle of the sub-graph ``mask`` induces."""
        labels, cyclic = self.components(mask)
        return mask & (labels >= 0) & cyclic[np.maximum(labels, 0)]

    def components(self, mask: np.ndarray,
                   edges: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """SCC labels of the sub-graph induced by ``mask`` (label -1 outside it; only the
        edges where ``edges`` is true, if given) and, per label, whether the component holds
        a cycle (more than one state, or a self-loop)."""
        keep = mask[self.src] & mask[self.dst]
        if edges is not None:
            keep &= edges
        loops = self.src[keep & (self.src == self.dst)]
        return labelled_components(_csr(self.src[keep], self.dst[keep], self.n), mask, loops)

    def terminal(self, labels: np.ndarray) -> np.ndarray:
        """Per component of ``labels`` (numbered from 0, every state labelled), whether no
        edge leaves it."""
        leaving = np.zeros(int(labels.max()) + 1 if len(labels) else 0, dtype=bool)
        crossing = labels[self.src] != labels[self.dst]
        leaving[labels[self.src[crossing]]] = True
        return ~leaving

    def forward_path(self, allowed: np.ndarray, target: np.ndarray,
                     start: int = 0) -> list[int] | None:
        """The edges of a shortest path from ``start`` to a ``target`` state whose states
        before the last are all ``allowed``; ``None`` if there is none."""
        if target[start]:
            return []
        if not allowed[start]:
            return None
        keep = allowed[self.src] & ~target[self.src]
        chain = bfs_path(_csr(self.src[keep], self.dst[keep], self.n), start, target)
        return None if chain is None else [self.edge(a, b) for a, b in pairwise(chain)]

    def edge(self, source: int, target: int) -> int:
        """The index of the first edge from ``source`` to ``target``."""
        first = int(self.start[source])
        row = self.dst[first:int(self.start[source + 1])]
        return first + int(np.flatnonzero(row == target)[0])

    def maximal_path(self, hold: np.ndarray,
                     state: int) -> tuple[list[int], list[int]] | None:
        """A maximal path from ``state`` with ``hold`` throughout (the witness of ``EG``):
        ``(stem, [])`` ending in a dead marking, or ``(stem, cycle)`` a lasso; ``None`` if
        there is none."""
        labels, cyclic = self.components(hold)
        in_cycle = hold & (labels >= 0) & cyclic[np.maximum(labels, 0)]
        stem = self.forward_path(hold, hold & (self.dead | in_cycle), state)
        if stem is None:
            return None
        end = int(self.dst[stem[-1]]) if stem else state
        if not in_cycle[end]:
            return stem, []
        return stem, self.cycle_through(labels == labels[end], end, [])

    def cycle_through(self, component: np.ndarray, start: int,
                      waypoints: list[int]) -> list[int]:
        """Edges of a cycle from ``start`` back to itself inside ``component`` (strongly
        connected) that takes the given edges (``waypoints``, edge indices inside the
        component) in turn."""
        edges: list[int] = []
        here = start
        for edge in waypoints:
            part = self.forward_path(component, _only(self.n, int(self.src[edge])), here)
            assert part is not None  # the component is strongly connected
            edges += [*part, edge]
            here = int(self.dst[edge])
        if not waypoints:  # leave ``start`` by an edge inside the component first
            first, last = int(self.start[here]), int(self.start[here + 1])
            inside = [e for e in range(first, last) if component[self.dst[e]]]
            edge = next((e for e in inside if self.dst[e] == start), inside[0])
            edges.append(edge)
            here = int(self.dst[edge])
        back = self.forward_path(component, _only(self.n, start), here)
        assert back is not None
        return edges + back

    def quickest(self, goal: np.ndarray, delays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per state, the least sum of ``delays`` (per edge) along a path to a ``goal``
        state (``inf`` if none), and the first edge of such a path (-1 at a goal, or where
        none): among the quickest, one with the fewest edges."""
        from scipy.sparse import csr_array
        from scipy.sparse.csgraph import dijkstra

        n = self.n
        next_edge = np.full(n, -1, dtype=np.int64)
        if not goal.any():
            return np.full(n, np.inf), next_edge
        src, dst = self.src, self.dst
        # of parallel edges keep the quickest (a sparse matrix holds one entry per pair)
        order = np.lexsort((delays, dst, src))
        pair = src[order].astype(np.int64) * n + dst[order]
        keep = order[np.concatenate([[True], pair[1:] != pair[:-1]])]
        # reversed: row = target, column = source; zero delays stay explicit entries (edges)
        by_target = keep[np.lexsort((src[keep], dst[keep]))]
        indptr = np.concatenate([[0], np.cumsum(np.bincount(dst[by_target], minlength=n))])
        reverse = csr_array((delays[by_target], src[by_target].astype(np.int32), indptr),
                            shape=(n, n))
        seeds = np.flatnonzero(goal)
        times = np.asarray(dijkstra(reverse, directed=True, indices=seeds, min_only=True),
                           dtype=float)
        # the edges on quickest paths, and along them the fewest firings to the goal
        finite = np.isfinite(times)
        slack = np.abs(delays + np.where(finite[dst], times[dst], 0.0)
                       - np.where(finite[src], times[src], 0.0))
        tight = finite[src] & finite[dst] & ~goal[src] & (
            slack <= TOLERANCE * np.maximum(1.0, np.where(finite[src], times[src], 0.0)))
        tight_reverse = csr_array((np.ones(int(tight.sum())), (dst[tight], src[tight])),
                                  shape=(n, n))
        hops = dijkstra(tight_reverse, directed=True, indices=seeds, min_only=True,
                        unweighted=True)
        on_path = np.flatnonzero(tight & np.isfinite(hops[src])
                                 & (hops[dst] == hops[src] - 1))
        sources, first = np.unique(src[on_path], return_index=True)
        next_edge[sources] = on_path[first]
        return times, next_edge

    def slowest(self, goal: np.ndarray, delays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per state, the greatest sum of ``delays`` along a maximal path before it first
        meets ``goal`` (``inf`` where a maximal path avoids it for ever), and the first
        edge of such a path (-1 at a goal, a dead marking, or where the time is infinite)."""
        from scipy.sparse import csr_array

        n, src, dst = self.n, self.src, self.dst
        forever = self.globally(~goal)
        finite = ~goal & ~forever  # every maximal path from here meets the goal: a DAG
        times = np.where(forever, np.inf, 0.0)
        next_edge = np.full(n, -1, dtype=np.int64)
        inner = finite[src] & finite[dst]
        # reversed edges among the finite states, counted: who waits on whom
        waits_on = csr_array((np.ones(int(inner.sum())), (dst[inner], src[inner])),
                             shape=(n, n))
        pending = np.bincount(src[inner], minlength=n)
        frontier = np.flatnonzero(finite & (pending == 0))
        while len(frontier):
            counts = (self.start[frontier + 1] - self.start[frontier]).astype(np.int64)
            offsets = np.cumsum(counts) - counts
            edges = (np.repeat(self.start[frontier] - offsets, counts)
                     + np.arange(int(counts.sum())))
            reached = delays[edges] + times[dst[edges]]
            best = np.maximum.reduceat(reached, offsets)
            times[frontier] = best
            position = np.where(reached >= np.repeat(best, counts), np.arange(len(edges)),
                                len(edges))
            next_edge[frontier] = edges[np.minimum.reduceat(position, offsets)]
            released = waits_on[frontier].tocoo()
            pending -= np.bincount(released.col, weights=released.data,
                                   minlength=n).astype(pending.dtype)
            frontier = np.unique(released.col)
            frontier = frontier[pending[frontier] == 0]
        return times, next_edge


def _only(n: int, state: int) -> np.ndarray:
    out = np.zeros(n, dtype=bool)
    out[state] = True
    return out


#: The graphs of the state spaces checked lately (either explorer's).
_GRAPHS: weakref.WeakKeyDictionary[Any, StateGraph] = weakref.WeakKeyDictionary()


def state_graph(space: ExploredSpace,
                before_build: Callable[[int], None] | None = None) -> StateGraph:
    """The (cached) :class:`StateGraph` of ``space``. ``before_build`` is called with the
    number of edges before the arrays are made (a memory budget's check may raise)."""
    found = _GRAPHS.get(space)
    if found is None:
        indptr, targets = space.adjacency()
        if before_build is not None:
            before_build(len(targets))
        found = _GRAPHS[space] = StateGraph(indptr, targets)
    return found


# -- Tarjan's algorithm on the fly -------------------------------------------------------------
Node = TypeVar("Node", bound=Hashable)
Label = TypeVar("Label")


class OnTheFlyComponents(Generic[Node, Label]):
    """Tarjan's algorithm over a graph given by its labelled successors (``successors(node)``
    -> ``[(target, label), ...]``), exploring only what it reaches from the roots.

    :meth:`components` yields each strongly connected component as it closes (sinks
    first), so a search stops at the first it wants; meanwhile :attr:`parent` holds the
    depth-first tree (``node -> (parent, label)``: the path from a root to any node
    found), :attr:`looping` the nodes with a self-loop, :attr:`count` the nodes found.
    ``before_new(count)`` runs before each node an edge discovers, ``pulse()`` every
    4,096 steps (edges followed or nodes closed): budgets raise from there.

    >>> edges = {0: [(1, "a")], 1: [(0, "b"), (2, "c")], 2: []}
    >>> search = OnTheFlyComponents(lambda n: edges[n])
    >>> [sorted(c) for c in search.components([0])], search.parent[2]
    ([[2], [0, 1]], (1, 'c'))
    """

    def __init__(self, successors: Callable[[Node], Sequence[tuple[Node, Label]]],
                 before_new: Callable[[int], None] | None = None,
                 pulse: Callable[[], None] | None = None):
        self.successors = successors
        self.before_new = before_new
        self.pulse = pulse
        self.parent: dict[Node, tuple[Node, Label]] = {}
        self.looping: set[Node] = set()
        self.count = 0

    def components(self, roots: Iterable[Node]) -> Iterator[list[Node]]:
        """The components reached from ``roots``, each as its nodes with its depth-first
        root last."""
        index: dict[Node, int] = {}
        low: dict[Node, int] = {}
        on_stack: set[Node] = set()
        stack: list[Node] = []
        steps = 0
        for root in roots:
            if root in index:
                continue
            index[root] = low[root] = self.count
            self.count += 1
            stack.append(root)
            on_stack.add(root)
            call: list[tuple[Node, Sequence[tuple[Node, Label]], int]] = [
                (root, self.successors(root), 0)]
            while call:
                steps += 1
                if steps & 4095 == 0 and self.pulse is not None:
                    self.pulse()
                node, succ, i = call[-1]
                if i < len(succ):
                    call[-1] = (node, succ, i + 1)
                    target, label = succ[i]
                    if target == node:
                        self.looping.add(node)
                    if target not in index:
                        if self.before_new is not None:
                            self.before_new(self.count)
                        index[target] = low[target] = self.count
                        self.count += 1
                        self.parent[target] = (node, label)
                        stack.append(target)
                        on_stack.add(target)
                        call.append((target, self.successors(target), 0))
                    elif target in on_stack:
                        low[node] = min(low[node], index[target])
                    continue
                call.pop()
                if call:
                    up = call[-1][0]
                    low[up] = min(low[up], low[node])
                if low[node] != index[node]:
                    continue
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                yield component


def walk_to_edge(successors: Callable[[Node], Sequence[tuple[Node, Label]]], start: Node,
                 goal: Callable[[Node, Label, Node], bool]) -> list[tuple[Node, Label]]:
    """The steps ``(node, label into it)`` of a shortest walk from ``start`` that ends by
    an edge ``(u, label, v)`` meeting ``goal`` (breadth-first; the edge must be reachable).

    >>> edges = {0: [(1, "a")], 1: [(0, "b"), (2, "c")], 2: []}
    >>> walk_to_edge(lambda n: edges[n], 0, lambda u, lab, v: lab == "c")
    [(1, 'a'), (2, 'c')]
    """
    came: dict[Node, tuple[Node, Label]] = {}
    frontier, seen = [start], {start}
    hit: tuple[Node, Label, Node] | None = None
    while frontier and hit is None:
        following = []
        for u in frontier:
            for v, lab in successors(u):
                if goal(u, lab, v):
                    hit = (u, lab, v)
                    break
                if v not in seen:
                    seen.add(v)
                    came[v] = (u, lab)
                    following.append(v)
            if hit is not None:
                break
        frontier = following
    assert hit is not None, "the goal's edge is reachable"
    u, lab, v = hit
    leg = [(v, lab)]
    while u != start:
        prev, plab = came[u]
        leg.append((u, plab))
        u = prev
    leg.reverse()
    return leg


# -- global properties of a whole space --------------------------------------------------------
def strongly_connected_components(space: ExploredSpace) -> np.ndarray:
    """The component number of every state (``labels[s]``), components of mutual reachability,
    numbered by their first state so that the initial one is 0.

    >>> from tcpn.petrinets.examples import counter
    >>> from tcpn.petrinets.statespace.space import explore
    >>> strongly_connected_components(explore(counter(2))).tolist()
    [0, 1, 2]
    """
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(space.matrix(), directed=True, connection="strong")
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[labels]


def terminal_components(space: StateSpace) -> list[int]:
    """The components no edge leaves (sorted), by :func:`strongly_connected_components` number."""
    require_complete(space, "terminal components need")
    return np.flatnonzero(state_graph(space).terminal(
        strongly_connected_components(space))).tolist()


def scc_graph(space: ExploredSpace) -> nx.DiGraph:
    """The component graph: one node per SCC (attributes ``members``, ``size``), edges between.

    >>> from tcpn.petrinets.examples import counter
    >>> from tcpn.petrinets.statespace.space import explore
    >>> sorted(scc_graph(explore(counter(2))).edges)
    [(0, 1), (1, 2)]
    """
    import networkx as nx

    labels = strongly_connected_components(space)
    graph = nx.DiGraph()
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    for number, members in enumerate(np.split(order, bounds)):
        graph.add_node(number, members=members.tolist(), size=len(members))
    g = state_graph(space)
    src, dst = labels[g.src], labels[g.dst]
    cross = src != dst
    pairs = np.unique(np.stack([src[cross], dst[cross]], axis=1), axis=0)
    graph.add_edges_from(map(tuple, pairs.tolist()))
    return graph


def home_markings(space: StateSpace) -> list[int]:
    """The states reachable from every reachable state (empty when there are none).

    They exist exactly when one component is terminal; its members are the home markings.
    The space must be complete.
    """
    require_complete(space, "home markings need")
    terminal = terminal_components(space)
    if len(terminal) != 1:
        return []
    return np.flatnonzero(strongly_connected_components(space) == terminal[0]).tolist()


def dead_markings(space: ExploredSpace) -> list[int]:
    """Expanded states without successors (same as ``space.dead_markings()``)."""
    return space.dead_markings()


def to_networkx(space: StateSpace, labels: bool = False) -> nx.DiGraph:
    """The state space as a NetworkX ``DiGraph`` with nodes ``0 .. n-1``.

    With ``labels=True`` each edge carries ``labels``: the list of ``(transition,
    binding)`` of the firings it stands for (recomputed, one expansion per state), and
    ``elapsed``, the model time they wait.

    >>> from tcpn.petrinets.examples import counter
    >>> from tcpn.petrinets.statespace.space import explore
    >>> g = to_networkx(explore(counter(2)), labels=True)
    >>> g.edges[0, 1]["labels"]
    [('increment', {'x': 0})]
    """
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(range(space.n_states))
    if not labels:
        g = state_graph(space)
        graph.add_edges_from(zip(g.src.tolist(), g.dst.tolist(), strict=True))
        return graph
    for s in range(space.n_expanded):
        for edge in space.edges(s):
            if graph.has_edge(s, edge.target):
                graph.edges[s, edge.target]["labels"].append((edge.transition, edge.binding))
            else:
                graph.add_edge(s, edge.target, labels=[(edge.transition, edge.binding)],
                               elapsed=edge.elapsed)
    return graph


def require_complete(space: StateSpace, needs: str) -> None:
    """Raise :class:`InputError` unless ``space`` was explored whole: a global algorithm
    (terminal components, home markings, CTL, fairness, the standard report) on part of a
    space would answer wrongly. ``needs``: who needs it, with the verb ("home markings
    need")."""
    if not space.complete:
        raise InputError(
            f"{needs} the whole state space, but exploration stopped by "
            f"{space.stop_reason} after {space.n_states} states"
        )
