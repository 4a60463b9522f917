"""Graph algorithms over a state space: SCCs, home and dead markings, NetworkX views.

Plain functions that take a :class:`~tcpn.petrinets.statespace.space.StateSpace`, as NetworkX's
algorithms take a graph. Components come from SciPy's sparse-graph routines on the
space's adjacency matrix, so they stay fast and small for millions of states; NetworkX
graphs are built only when asked for.

>>> from tcpn.petrinets.examples import counter
>>> from tcpn.petrinets.statespace.space import explore
>>> space = explore(counter(2))
>>> home_markings(space), scc_graph(space).number_of_nodes()
([2], 3)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from tcpn.errors import InputError

if TYPE_CHECKING:
    from tcpn.petrinets.statespace.space import StateSpace

__all__ = [
    "dead_markings",
    "home_markings",
    "require_complete",
    "scc_graph",
    "strongly_connected_components",
    "terminal_components",
    "to_networkx",
]


def _sources(space: StateSpace) -> np.ndarray:
    """The source state of every edge, aligned with ``space.edge_dst``."""
    out_degree = np.diff(space.edge_start.astype(np.int64)).astype(np.int64)
    return np.repeat(np.arange(space.n_states), out_degree)


def strongly_connected_components(space: StateSpace) -> np.ndarray:
    """The component number of every state (``labels[s]``), components of mutual reachability.

    >>> from tcpn.petrinets.examples import counter
    >>> from tcpn.petrinets.statespace.space import explore
    >>> strongly_connected_components(explore(counter(2))).tolist()
    [0, 1, 2]
    """
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(space.matrix(), directed=True, connection="strong")
    # number components by their first state so that the initial one is 0
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[labels]


def terminal_components(space: StateSpace) -> list[int]:
    """The components no edge leaves (sorted), by :func:`strongly_connected_components` number."""
    require_complete(space, "terminal components need")
    labels = strongly_connected_components(space)
    src = labels[_sources(space)]
    dst = labels[space.edge_dst.astype(np.int64)]
    left = np.unique(src[src != dst])
    return np.setdiff1d(np.unique(labels), left).tolist()


def scc_graph(space: StateSpace) -> nx.DiGraph:
    """The component graph: one node per SCC (attributes ``members``, ``size``), edges between.

    >>> from tcpn.petrinets.examples import counter
    >>> from tcpn.petrinets.statespace.space import explore
    >>> sorted(scc_graph(explore(counter(2))).edges)
    [(0, 1), (1, 2)]
    """
    labels = strongly_connected_components(space)
    graph = nx.DiGraph()
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    for number, members in enumerate(np.split(order, bounds)):
        graph.add_node(number, members=members.tolist(), size=len(members))
    src = labels[_sources(space)]
    dst = labels[space.edge_dst.astype(np.int64)]
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


def dead_markings(space: StateSpace) -> list[int]:
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
    graph = nx.DiGraph()
    graph.add_nodes_from(range(space.n_states))
    if not labels:
        graph.add_edges_from(zip(_sources(space).tolist(), space.edge_dst.tolist(), strict=True))
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
