"""Properties over model time on deterministic timed state spaces (absolute time).

In an absolute-time state space (``explore(net, clock="absolute")``) every state carries
the global clock at which it is reached, so questions about time become questions about
states:

* :func:`earliest` — the earliest model time at which some run reaches a marking
  satisfying ``p`` (the minimum clock over reachable ``p``-states), with the run;
* :func:`latest` — the latest time at which ``p`` is *first* reached, over all runs ("the
  latest time at which the last segment can be acknowledged"); ``"false"`` with a path
  when some run never reaches ``p`` at all (the latest time is then unbounded);
* :func:`reachable_within` — time-bounded reachability: can ``p`` hold at a time
  ``<= deadline_s`` (``EF (p & clock() <= deadline)``, checked on the fly).

Formulas may also use ``clock()`` directly (``AG (tokens(done) >= 1 -> clock() <= 9)``),
see :mod:`~tcpn.petrinets.checking.check`. An untimed net, or a relative-time space, is an
:class:`InputError`: its states carry no clock.

>>> from tcpn.petrinets.examples import counter
>>> from tcpn.petrinets.checking.formulas import tokens
>>> net = counter(3, timed=True, delay=1.5)   # fires at 0, 1.5, 3.0
>>> earliest(net, tokens("count", value=3).equals(1)).value
3.0
>>> reachable_within(net, tokens("count", value=3).equals(1), 2.9).answer
'false'
"""

from __future__ import annotations

import time as wallclock

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.checking.atoms import columns, truth
from tcpn.petrinets.checking.check import budget_reason, check
from tcpn.petrinets.checking.ctl import StateGraph, graph, path_steps
from tcpn.petrinets.checking.formulas import And, Clock, Compare, Const, E, F, Formula
from tcpn.petrinets.checking.text import to_text
from tcpn.petrinets.checking.verdicts import Evidence, Verdict
from tcpn.petrinets.engine.compiler import CompiledNet
from tcpn.petrinets.net import PetriNet
from tcpn.petrinets.statespace.space import DEFAULT_MAX_STATES, StateSpace, explore

__all__ = ["earliest", "latest", "reachable_within"]

Target = PetriNet | CompiledNet | StateSpace


def _space(target: Target, max_states: int | None,
           time_limit_s: float | None) -> StateSpace:
    if isinstance(target, StateSpace):
        space = target
    else:
        net = target.net if isinstance(target, CompiledNet) else target
        if not net.is_timed:
            raise InputError(f"net {net.name} is untimed: its states have no clock, so there "
                             "is no time to reach anything")
        space = explore(target, max_states=max_states, time_budget_s=time_limit_s,
                        clock="absolute")
    if space.clock_mode != "absolute":
        raise InputError("time properties need an absolute-time state space: "
                         "explore(net, clock='absolute')")
    return space


def _text(formula: Formula) -> str:
    try:
        return to_text(formula)
    except InputError:
        return repr(formula)


def earliest(target: Target, formula: Formula, *, max_states: int | None = DEFAULT_MAX_STATES,
             time_limit_s: float | None = None) -> Verdict:
    """The earliest time a marking satisfying ``formula`` (propositional) is reached.

    ``"true"`` with the time in ``value`` and the run as evidence; ``"false"`` when no
    reachable marking satisfies it; ``"unknown"`` when a budget stopped the exploration.
    """
    started = wallclock.perf_counter()
    space = _space(target, max_states, time_limit_s)
    name = f"earliest time of {_text(formula)}"
    if not space.complete:
        return Verdict("unknown", name, states=space.n_states, reason=budget_reason(space),
                       seconds=wallclock.perf_counter() - started, technique=("EXPLICIT",))
    hits = truth(space, formula)
    if not hits.any():
        return Verdict("false", name, states=space.n_states, technique=("EXPLICIT",),
                       seconds=wallclock.perf_counter() - started)
    clocks = columns(space).clock()
    best = float(clocks[hits].min())
    target_states = hits & (clocks == best)
    stem = graph(space).forward_path(np.ones(space.n_states, dtype=bool), target_states)
    assert stem is not None
    return Verdict("true", name, evidence=Evidence(path_steps(space, stem)), value=best,
                   states=space.n_states, seconds=wallclock.perf_counter() - started,
                   technique=("EXPLICIT", "TIMED"))


def latest(target: Target, formula: Formula, *, max_states: int | None = DEFAULT_MAX_STATES,
           time_limit_s: float | None = None) -> Verdict:
    """The latest time at which ``formula`` (propositional) first holds, over all runs.

    ``"true"`` with the time in ``value`` and the run that reaches it last; ``"false"``
    with a run (a lasso, or a path to a dead marking) that never reaches it.
    """
    from tcpn.petrinets.checking.ctl import evidence
    from tcpn.petrinets.checking.formulas import AF

    started = wallclock.perf_counter()
    space = _space(target, max_states, time_limit_s)
    name = f"latest time of {_text(formula)}"
    if not space.complete:
        return Verdict("unknown", name, states=space.n_states, reason=budget_reason(space),
                       seconds=wallclock.perf_counter() - started, technique=("EXPLICIT",))
    g = graph(space)
    hits = truth(space, formula)
    escapes = evidence(space, AF(formula))
    if escapes is not None:  # a run that never reaches the goal
        return Verdict("false", name, evidence=escapes, states=space.n_states,
                       seconds=wallclock.perf_counter() - started,
                       technique=("EXPLICIT", "TIMED"))
    clocks = columns(space).clock()
    if hits[0]:
        return Verdict("true", name, evidence=Evidence([]), value=float(clocks[0]),
                       states=space.n_states, seconds=wallclock.perf_counter() - started,
                       technique=("EXPLICIT", "TIMED"))
    # first arrivals: goal states entered by an edge from a state reached outside the goal
    before = ~hits & _reachable_within(g, ~hits)
    first = np.zeros(g.n, dtype=bool)
    first[g.dst[before[g.src] & hits[g.dst]]] = True
    worst = float(clocks[first].max())
    stem = g.forward_path(before, first & (clocks == worst))
    assert stem is not None
    return Verdict("true", name, evidence=Evidence(path_steps(space, stem)), value=worst,
                   states=space.n_states, seconds=wallclock.perf_counter() - started,
                   technique=("EXPLICIT", "TIMED"))


def _reachable_within(g: StateGraph, allowed: np.ndarray) -> np.ndarray:
    """States reachable from the initial one by edges leaving ``allowed`` states only."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import breadth_first_order

    keep = allowed[g.src]
    sub = csr_array((np.ones(int(keep.sum()), dtype=np.int8), (g.src[keep], g.dst[keep])),
                    shape=(g.n, g.n))
    out = np.zeros(g.n, dtype=bool)
    out[breadth_first_order(sub, 0, directed=True, return_predecessors=False)] = True
    return out


def reachable_within(target: Target, formula: Formula, deadline_s: float, *,
                     max_states: int | None = DEFAULT_MAX_STATES,
                     time_limit_s: float | None = None) -> Verdict:
    """Can a marking satisfying ``formula`` be reached at a time ``<= deadline_s``?"""
    bounded = E(F(And((formula, Compare("<=", Clock(), Const(deadline_s))))))
    if isinstance(target, StateSpace):
        _space(target, max_states, time_limit_s)
    return check(target, bounded, max_states=max_states, time_limit_s=time_limit_s,
                 clock="absolute")
