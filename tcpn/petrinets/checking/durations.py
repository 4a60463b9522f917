"""Model time along the paths of a timed state space: earliest and latest arrival at a goal.

Every edge of a timed state space carries ``elapsed``, the model time its firing waited
(:class:`~tcpn.petrinets.statespace.space.Edge`), and a path's duration is their sum, in
relative time as in absolute time. Questions about *when* are therefore answered on the
relative space, which is finite for cyclic timed nets (a sender with a retransmission
timer) where the absolute one never closes:

* :func:`earliest_arrival`: per state, the least duration of a path to a goal state
  (SciPy's Dijkstra on the reversed graph, from every goal state at once; delays are
  never negative);
* :func:`latest_arrival`: per state, the greatest duration of a path before it first meets
  the goal, over the maximal paths (infinite, or finite and ending in a dead marking).
  Infinite where some maximal path avoids the goal for ever (``EG not goal``: a cycle or a
  dead marking outside the goal, reached outside it), else the longest path through the
  goal-avoiding states, which then form an acyclic graph (taken in reverse topological
  order, one generation of states at a time).

Both answer an :class:`Arrival`: the times, and per state the first edge of a path that
shows its time; :meth:`Arrival.path` follows them. A cycle of zero duration outside the
goal (a run that never lets time pass) counts as avoiding it: the goal is never reached.

>>> from tcpn.petrinets import explore
>>> from tcpn.petrinets.examples import stop_and_wait
>>> from tcpn.petrinets.checking.atoms import truth
>>> from tcpn.petrinets.checking.formulas import tokens
>>> space = explore(stop_and_wait(delay_s=1.0, timeout_s=3.0, losses=1))
>>> goal = truth(space, tokens("delivered") >= 2)
>>> float(earliest_arrival(space, goal).times[0]), float(latest_arrival(space, goal).times[0])
(3.0, 6.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.checking.atoms import columns
from tcpn.petrinets.checking.ctl import StateGraph, cycle_through, graph
from tcpn.petrinets.checking.formulas import (
    TIME_BOUNDED,
    A,
    E,
    Formula,
    FWithin,
    is_ctl,
    walk,
)
from tcpn.petrinets.timevalues import TOLERANCE

if TYPE_CHECKING:
    from tcpn.petrinets.checking.fairness import Fairness
    from tcpn.petrinets.net import PetriNet
    from tcpn.petrinets.statespace.space import StateSpace

__all__ = ["Arrival", "avoiding_run", "bounded_operators", "check_time_bounds",
           "earliest_arrival", "edge_delays", "latest_arrival", "within"]


@dataclass(frozen=True)
class Arrival:
    """Per state, a time to the goal (``math.inf``: never) and the first edge of a path
    that takes it (-1 at a goal state, and where the time is infinite)."""

    times: np.ndarray
    next_edge: np.ndarray
    goal: np.ndarray

    def path(self, g: StateGraph, state: int = 0) -> list[int]:
        """The edges of the path from ``state`` that takes its time, up to a goal state."""
        edges: list[int] = []
        while not self.goal[state] and self.next_edge[state] >= 0:
            edge = int(self.next_edge[state])
            edges.append(edge)
            state = int(g.dst[edge])
        return edges


def edge_delays(space: StateSpace) -> np.ndarray:
    """The model time each edge's firing waits, in the order of ``space.edge_dst`` (cached;
    computed by expanding each state once more, as :meth:`StateSpace.edges` does)."""

    cols = columns(space)
    found: np.ndarray | None = getattr(cols, "edge_delays", None)
    if found is None:
        g = graph(space)
        found = np.zeros(len(g.dst))
        if space.net.is_timed:
            for state in range(space.n_expanded):
                first = int(g.start[state])
                for i, edge in enumerate(space.edges(state)):
                    found[first + i] = edge.elapsed
        cols.edge_delays = found  # type: ignore[attr-defined]
    return found


def earliest_arrival(space: StateSpace, goal: np.ndarray) -> Arrival:
    """Per state, the least duration of a path to a ``goal`` state (``inf`` if none)."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import dijkstra


    g, delays = graph(space), edge_delays(space)
    n = g.n
    next_edge = np.full(n, -1, dtype=np.int64)
    if not goal.any():
        return Arrival(np.full(n, math.inf), next_edge, goal)
    # of parallel edges keep the quickest (a sparse matrix holds one entry per pair)
    order = np.lexsort((delays, g.dst, g.src))
    pair = g.src[order].astype(np.int64) * n + g.dst[order]
    keep = order[np.concatenate([[True], pair[1:] != pair[:-1]])]
    pairs = pair[np.concatenate([[True], pair[1:] != pair[:-1]])]
    # reversed: row = target, column = source; zero delays stay explicit entries (edges)
    by_target = keep[np.lexsort((g.src[keep], g.dst[keep]))]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(g.dst[by_target], minlength=n))])
    reverse = csr_array((delays[by_target], g.src[by_target].astype(np.int32), indptr),
                        shape=(n, n))
    times, towards, _ = dijkstra(reverse, directed=True, indices=np.flatnonzero(goal),
                                 min_only=True, return_predecessors=True)
    moving = np.flatnonzero((towards >= 0) & ~goal)
    wanted = moving.astype(np.int64) * n + towards[moving]
    next_edge[moving] = keep[np.searchsorted(pairs, wanted)]
    return Arrival(np.asarray(times, dtype=float), next_edge, goal)


def latest_arrival(space: StateSpace, goal: np.ndarray) -> Arrival:
    """Per state, the greatest duration of a maximal path before it first meets ``goal``
    (``inf`` where a maximal path avoids it for ever)."""
    from scipy.sparse import csr_array


    g, delays = graph(space), edge_delays(space)
    n = g.n
    forever = g.globally(~goal)
    finite = ~goal & ~forever  # every maximal path from here meets the goal: a DAG
    times = np.where(forever, math.inf, 0.0)
    next_edge = np.full(n, -1, dtype=np.int64)
    inner = finite[g.src] & finite[g.dst]
    # reversed edges among the finite states, counted: who waits on whom
    waits_on = csr_array((np.ones(int(inner.sum())), (g.dst[inner], g.src[inner])),
                         shape=(n, n))
    pending = np.bincount(g.src[inner], minlength=n)
    frontier = np.flatnonzero(finite & (pending == 0))
    while len(frontier):
        counts = (g.start[frontier + 1] - g.start[frontier]).astype(np.int64)
        offsets = np.cumsum(counts) - counts
        edges = np.repeat(g.start[frontier] - offsets, counts) + np.arange(int(counts.sum()))
        reached = delays[edges] + times[g.dst[edges]]
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
    return Arrival(times, next_edge, goal)


def avoiding_run(space: StateSpace, goal: np.ndarray,
                 state: int = 0) -> tuple[list[int], list[int]] | None:
    """A maximal path from ``state`` that never meets ``goal``: ``(stem, [])`` ending in a
    dead marking, or ``(stem, cycle)`` a lasso; ``None`` if every maximal path meets it."""

    g = graph(space)
    avoid = ~goal
    labels, cyclic = g.components(avoid)
    in_cycle = avoid & (labels >= 0) & cyclic[np.maximum(labels, 0)]
    stem = g.forward_path(avoid, avoid & (g.dead | in_cycle), state)
    if stem is None:
        return None
    end = int(g.dst[stem[-1]]) if stem else state
    if not in_cycle[end]:
        return stem, []
    return stem, cycle_through(g, labels == labels[end], end, [])


def within(times: np.ndarray, bound_s: float) -> np.ndarray:
    """``times <= bound_s``, up to the float noise of summed delays (relative and absolute
    :data:`~tcpn.petrinets.timevalues.TOLERANCE`)."""
    return times <= bound_s + TOLERANCE * max(1.0, abs(bound_s))


def bounded_operators(formula: Formula) -> list[str]:
    """The time-bounded operators of ``formula`` as text (``"AF<=5"``), parents first."""
    found = []
    for node in walk(formula):
        if isinstance(node, A | E) and isinstance(node.path, TIME_BOUNDED):
            letter = "F" if isinstance(node.path, FWithin) else "G"
            found.append(f"{type(node).__name__}{letter}<={node.path.bound_s!r}")
    return found


def check_time_bounds(formula: Formula, net: PetriNet, fairness: Fairness | None) -> None:
    """Refuse time-bounded operators where they mean nothing: on an untimed net, anywhere
    but directly under ``A`` or ``E`` (timed CTL), or under a fairness assumption (the
    path computations range over all maximal paths)."""
    if not any(isinstance(node, TIME_BOUNDED) for node in walk(formula)):
        return
    operators = bounded_operators(formula)
    if not net.is_timed:
        raise InputError(f"{', '.join(operators) or 'F<=/G<='}: net {net.name} is untimed: "
                         "its firings take no time, so a time bound means nothing")
    quantified = {id(node.path) for node in walk(formula) if isinstance(node, A | E)}
    loose = [node for node in walk(formula)
             if isinstance(node, TIME_BOUNDED) and id(node) not in quantified]
    if loose:
        letter = "F" if isinstance(loose[0], FWithin) else "G"
        raise InputError(f"{letter}<={loose[0].bound_s!r} must stand directly under A or E "
                         "(timed CTL: AF<=T, EF<=T, AG<=T, EG<=T)")
    if not is_ctl(formula):
        raise InputError(f"{', '.join(operators)}: time-bounded operators are timed CTL; "
                         "their operands must be state formulas (no path operator without "
                         "its A or E)")
    if fairness is not None and fairness.transitions:
        raise InputError(f"{', '.join(operators)}: time-bounded operators range over all "
                         "maximal paths; they are not checked under fairness")
