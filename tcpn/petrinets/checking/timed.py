"""Properties over model time: earliest and latest arrival, time-bounded reachability.

Each edge of a timed state space says how long its firing waited, so the time a run takes
is the sum along its path (:mod:`~tcpn.petrinets.checking.durations`). The questions below
are therefore answered on the *relative-time* state space by default, which is finite for
cyclic timed nets (a sender with a retransmission timer) where the absolute-time space
never closes; an absolute-time space given explicitly answers the same:

* :func:`earliest`: the earliest model time at which some run reaches a marking satisfying
  ``p`` (shortest path over the edge delays, Dijkstra), with that run;
* :func:`latest`: the latest time at which ``p`` is *first* reached, over all maximal runs
  ("the latest time at which the last segment can be acknowledged"): the longest path
  through the states outside ``p``. ``"false"`` with ``value`` infinite when some run never
  reaches ``p``: a cycle outside ``p`` (its lasso as evidence; a cycle that lets no time
  pass counts too) or a dead marking outside ``p`` (the path to it);
* :func:`reachable_within`: time-bounded reachability, ``EF<=T p``.

Random delays drawn from time intervals (``@+[a,b]``) are explored at their integer points
when that is exact (every interval closed with integer bounds, every other delay whole),
else at the ``delay_points`` given, which covers those points only; the verdict's
technique says which (``"INTEGER_POINTS"``, ``"DELAY_POINTS"``; see
:mod:`~tcpn.petrinets.checking.durations`).

The time-bounded operators ``AF<=T``, ``EF<=T``, ``AG<=T``, ``EG<=T`` of the formula language
(:mod:`~tcpn.petrinets.checking.formulas`) are decided by the same computations inside
:func:`~tcpn.petrinets.checking.check.check`. Formulas may also read ``clock()``, on
absolute-time spaces only (``AG (tokens(done) >= 1 -> clock() <= 9)``). An untimed net is
an :class:`InputError`: its firings take no time.

>>> from tcpn.petrinets.examples import counter, stop_and_wait
>>> from tcpn.petrinets.checking.formulas import tokens
>>> net = counter(3, timed=True, delay=1.5)   # fires at 0, 1.5, 3.0
>>> earliest(net, tokens("count", value=3).equals(1)).value
3.0
>>> reachable_within(net, tokens("count", value=3).equals(1), 2.9).answer
'false'
>>> lossy = stop_and_wait(delay_s=1.0, timeout_s=3.0)   # any number of losses
>>> never = latest(lossy, tokens("delivered") >= 2)
>>> never.answer, never.value, [step.transition for step in never.evidence.cycle]
('false', inf, ['send', 'lose_data', 'timeout'])
"""

from __future__ import annotations

import math
import time as wallclock

from tcpn.errors import InputError
from tcpn.petrinets.checking.atoms import truth
from tcpn.petrinets.checking.check import budget_reason, check
from tcpn.petrinets.checking.ctl import path_steps
from tcpn.petrinets.checking.durations import (
    avoiding_run,
    delay_points_for,
    earliest_arrival,
    edge_delays,
    latest_arrival,
)
from tcpn.petrinets.checking.formulas import EF, Formula
from tcpn.petrinets.checking.text import to_text
from tcpn.petrinets.checking.verdicts import Evidence, Verdict
from tcpn.petrinets.engine.compiler import CompiledNet
from tcpn.petrinets.net import PetriNet
from tcpn.petrinets.statespace.graph import state_graph
from tcpn.petrinets.statespace.space import DEFAULT_MAX_STATES, StateSpace, explore

__all__ = ["earliest", "latest", "reachable_within"]

Target = PetriNet | CompiledNet | StateSpace


def _space(target: Target, max_states: int | None, time_limit_s: float | None,
           delay_points: int | None) -> tuple[StateSpace, tuple[str, ...]]:
    """The space to answer on, and how its random delays were covered (a technique)."""
    net = target.net if isinstance(target, StateSpace | CompiledNet) else target
    if not net.is_timed:
        raise InputError(f"net {net.name} is untimed: its firings take no time, so there "
                         "is no time to reach anything")
    if isinstance(target, StateSpace):
        return target, ()
    points, how = delay_points_for(net, delay_points)
    space = explore(target, max_states=max_states, time_budget_s=time_limit_s,
                    clock="relative", delay_points=points)
    return space, (how,) if how else ()


def _text(formula: Formula) -> str:
    try:
        return to_text(formula)
    except InputError:
        return repr(formula)


def earliest(target: Target, formula: Formula, *, max_states: int | None = DEFAULT_MAX_STATES,
             time_limit_s: float | None = None,
             delay_points: int | None = None) -> Verdict:
    """The earliest time a marking satisfying ``formula`` (propositional) is reached.

    ``"true"`` with the time in ``value`` and the run as evidence; ``"false"`` when no
    reachable marking satisfies it; ``"unknown"`` when a budget stopped the exploration.
    """
    started = wallclock.perf_counter()
    space, timing = _space(target, max_states, time_limit_s, delay_points)
    name = f"earliest time of {_text(formula)}"
    if not space.complete:
        return Verdict("unknown", name, states=space.n_states, reason=budget_reason(space),
                       seconds=wallclock.perf_counter() - started, technique=("EXPLICIT",))
    arrival = earliest_arrival(space, truth(space, formula))
    best = float(arrival.times[0])
    if best == math.inf:
        return Verdict("false", name, states=space.n_states,
                       technique=("EXPLICIT", "TIMED", *timing),
                       seconds=wallclock.perf_counter() - started)
    stem = arrival.path(state_graph(space))
    return Verdict("true", name, evidence=Evidence(path_steps(space, stem)), value=best,
                   states=space.n_states, seconds=wallclock.perf_counter() - started,
                   technique=("EXPLICIT", "TIMED", *timing))


def latest(target: Target, formula: Formula, *, max_states: int | None = DEFAULT_MAX_STATES,
           time_limit_s: float | None = None,
           delay_points: int | None = None) -> Verdict:
    """The latest time at which ``formula`` (propositional) first holds, over all runs.

    ``"true"`` with the time in ``value`` and the run that reaches it last; ``"false"``
    with ``value`` infinite and a run that never reaches it: a lasso (its cycle avoids the
    goal) or a path to a dead marking.
    """
    started = wallclock.perf_counter()
    space, timing = _space(target, max_states, time_limit_s, delay_points)
    name = f"latest time of {_text(formula)}"
    if not space.complete:
        return Verdict("unknown", name, states=space.n_states, reason=budget_reason(space),
                       seconds=wallclock.perf_counter() - started, technique=("EXPLICIT",))
    goal = truth(space, formula)
    arrival = latest_arrival(space, goal)
    worst = float(arrival.times[0])
    if worst == math.inf:
        run = avoiding_run(space, goal)
        assert run is not None  # an infinite latest time is a run avoiding the goal
        steps = path_steps(space, run[0])
        cycle = path_steps(space, run[1], steps[-1].clock if steps else None)
        why = (f"a cycle of {float(edge_delays(space)[run[1]].sum()):g} s never reaches it"
               if cycle else "a run ends in a dead marking before it")
        return Verdict("false", name, evidence=Evidence(steps, cycle), value=math.inf,
                       states=space.n_states, seconds=wallclock.perf_counter() - started,
                       technique=("EXPLICIT", "TIMED", *timing), reason=why)
    stem = arrival.path(state_graph(space))
    return Verdict("true", name, evidence=Evidence(path_steps(space, stem)), value=worst,
                   states=space.n_states, seconds=wallclock.perf_counter() - started,
                   technique=("EXPLICIT", "TIMED", *timing))


def reachable_within(target: Target, formula: Formula, deadline_s: float, *,
                     max_states: int | None = DEFAULT_MAX_STATES,
                     time_limit_s: float | None = None,
                     delay_points: int | None = None) -> Verdict:
    """Can a marking satisfying ``formula`` be reached at a time ``<= deadline_s``
    (``EF<=deadline_s formula``)?"""
    if isinstance(target, StateSpace):
        _space(target, max_states, time_limit_s, delay_points)  # refuses an untimed net
    return check(target, EF(formula, within_s=deadline_s), max_states=max_states,
                 time_limit_s=time_limit_s, delay_points=delay_points)
