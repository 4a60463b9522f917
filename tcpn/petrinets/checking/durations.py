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

**Time intervals** (``@+[a,b]``, :class:`~tcpn.petrinets.distributions.Interval`): a state
space covers a delay interval by its points (:mod:`~tcpn.petrinets.statespace.intervals`).
:func:`delay_points_for` picks them for the timed questions:

* ``"INTEGER_POINTS"``, exact: when every random delay is a closed interval with integer
  bounds, every other delay a whole number, every transition of one priority and no
  token value a time (colour set ``CLOCK``), every integer of every interval. The
  integer-point argument (the digitization of Henzinger, Manna and Pnueli, "What good are
  digital clocks?", ICALP 1992, applied to urgent firing): rounding every event time of a
  run by the same rule (down if its fraction is at most some ``e`` in ``[0, 1)``, else up)
  keeps the order of events (ties may appear: bindings enabled together may fire in either
  order) and keeps every integer bound on the difference of two times, so it is a run with
  integer delays firing the same sequence (hence the conditions: a priority would order
  the firings a rounding makes simultaneous, and a time held in a token value could be
  compared with a constant); reaching the goal at time ``t`` gives integer
  runs reaching it at ``floor(t)`` and at ``ceil(t)``. The earliest and latest times, and
  the answers of the time-bounded operators, are therefore those of the integer runs.
  (Tested against half-integer points in ``tests/test_timed_relative.py``.)
* ``"DELAY_POINTS"``, the points only: any other random delay (real bounds, a ``Uniform``,
  a delay given by an expression) is explored at the ``delay_points`` the caller gives;
  the runs between the points are not covered, so an earliest time is an upper bound and
  a latest time a lower bound of the real ones.

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

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.checking.atoms import columns
from tcpn.petrinets.checking.formulas import (
    TIME_BOUNDED,
    A,
    E,
    Formula,
    FWithin,
    is_ctl,
    walk,
)
from tcpn.petrinets.distributions import Distribution, Interval
from tcpn.petrinets.statespace.graph import StateGraph, state_graph
from tcpn.petrinets.statespace.space import TIME_DECIMALS
from tcpn.petrinets.timevalues import TOLERANCE, ClockValues

if TYPE_CHECKING:
    from tcpn.petrinets.checking.fairness import Fairness
    from tcpn.petrinets.net import PetriNet
    from tcpn.petrinets.statespace.space import StateSpace

__all__ = ["Arrival", "avoiding_run", "bounded_operators", "check_time_bounds",
           "delay_points_for", "earliest_arrival", "edge_delays", "integer_points",
           "latest_arrival", "within"]


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
        g = state_graph(space)
        found = np.zeros(len(g.dst))
        if space.net.is_timed:
            for state in range(space.n_expanded):
                first = int(g.start[state])
                for i, edge in enumerate(space.edges(state)):
                    found[first + i] = edge.elapsed
        cols.edge_delays = found  # type: ignore[attr-defined]
    return found


def earliest_arrival(space: StateSpace, goal: np.ndarray) -> Arrival:
    """Per state, the least duration of a path to a ``goal`` state (``inf`` if none); the
    path each state's edge starts is, among the quickest, one with the fewest firings."""
    return Arrival(*state_graph(space).quickest(goal, edge_delays(space)), goal)


def latest_arrival(space: StateSpace, goal: np.ndarray) -> Arrival:
    """Per state, the greatest duration of a maximal path before it first meets ``goal``
    (``inf`` where a maximal path avoids it for ever)."""
    return Arrival(*state_graph(space).slowest(goal, edge_delays(space)), goal)


def avoiding_run(space: StateSpace, goal: np.ndarray,
                 state: int = 0) -> tuple[list[int], list[int]] | None:
    """A maximal path from ``state`` that never meets ``goal``: ``(stem, [])`` ending in a
    dead marking, or ``(stem, cycle)`` a lasso; ``None`` if every maximal path meets it."""
    return state_graph(space).maximal_path(~goal, state)


def within(times: np.ndarray, bound_s: float) -> np.ndarray:
    """``times <= bound_s``, up to the float noise of summed delays (relative and absolute
    :data:`~tcpn.petrinets.timevalues.TOLERANCE`)."""
    return times <= bound_s + TOLERANCE * max(1.0, abs(bound_s))


def bounded_operators(formula: Formula) -> list[str]:
    """The time-bounded operators of ``formula`` as text, parents first.

    >>> from tcpn.petrinets.checking.text import parse
    >>> bounded_operators(parse("AG (tokens(b) >= 1 -> AF<=5 tokens(c) >= 1)"))
    ['AF<=5.0']
    """
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


def integer_points(net: PetriNet) -> int | None:
    """The delay points that take every integer of every random delay of ``net`` when the
    integer-point argument makes them exact (every random delay an :class:`Interval` with
    integer bounds, every other delay a whole number, one priority for every transition,
    no token value holding a time); ``None`` otherwise, or when no delay is random.

    >>> from tcpn.petrinets import Interval, Uniform
    >>> from tcpn.petrinets.examples import stop_and_wait
    >>> integer_points(stop_and_wait(delay_s=Interval(1, 3))), integer_points(
    ...     stop_and_wait(delay_s=Uniform(1, 3)))
    (3, None)
    """
    if len({transition.priority for transition in net.transitions.values()}) > 1 or \
            ClockValues(net, list(net.places), TIME_DECIMALS):
        return None
    spans = []
    for name, transition in net.transitions.items():
        delays = [transition.delay] + [arc.delay for arc in net.arcs_of(name)]
        for delay in delays:
            if delay is None:
                continue
            if isinstance(delay, Interval) and delay.integer:
                spans.append(int(delay.high - delay.low))
            elif isinstance(delay, bool) or not isinstance(delay, int | float) or \
                    not float(delay).is_integer():
                return None
    return max(2, max(spans) + 1) if spans else None


def delay_points_for(net: PetriNet, delay_points: int | None) -> tuple[int | None, str | None]:
    """``(delay_points, technique)`` for exploring ``net`` to answer a timed question:
    ``"INTEGER_POINTS"`` (exact, every integer of every interval), ``"DELAY_POINTS"`` (the
    points given only), or no technique when no delay of the net is random (see the
    module docstring)."""
    random = any(isinstance(delay, Distribution)
                 for name, transition in net.transitions.items()
                 for delay in [transition.delay] + [a.delay for a in net.arcs_of(name)])
    if not random:
        return delay_points, None
    needed = integer_points(net)
    if needed is not None and (delay_points is None or delay_points >= needed):
        return delay_points or needed, "INTEGER_POINTS"
    return delay_points, "DELAY_POINTS"
