"""The Model Checking Contest's global properties, each a function returning a Verdict.

========================  ==================================================  ===========
function                  question                                            explores
========================  ==================================================  ===========
:func:`reachability_deadlock`  is a dead marking reachable                    on the fly
:func:`quasi_liveness`    can every transition fire at least once             on the fly
:func:`liveness`          from every reachable marking, can every transition  whole space
                          fire again
:func:`one_safe`          does no place ever hold more than one token         on the fly
:func:`stable_marking`    does some place keep its token count in every       on the fly
                          reachable marking
:func:`upper_bounds`      the most tokens a set of places holds together     whole space
                          (``Verdict.value``)
:func:`state_space_statistics`  states, edges, most tokens in one place and    whole space
                          in one marking (a dict)
========================  ==================================================  ===========

"On the fly": the net is explored in growing breadth-first rounds (as
:func:`~tcpn.petrinets.checking.check.check` does) and the answer is given as soon as one round
settles it (a dead marking, every transition seen firing, a place with two tokens, every
place seen with two counts). Budgets (``max_states``, ``time_limit_s``) give ``"unknown"``
naming the budget, never a guess.

>>> from tcpn.petrinets.examples import dining_philosophers
>>> net = dining_philosophers(5)
>>> [v.answer for v in (reachability_deadlock(net), quasi_liveness(net), liveness(net),
...                     one_safe(net), stable_marking(net))]
['false', 'true', 'true', 'true', 'false']
>>> upper_bounds(net, ["eat0", "eat1", "eat2", "eat3", "eat4"]).value
2
>>> state_space_statistics(net)
{'states': 11, 'edges': 30, 'max_tokens_in_place': 1, 'max_tokens_in_marking': 10}
"""

from __future__ import annotations

import time as wallclock
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.checking.atoms import columns
from tcpn.petrinets.checking.check import FIRST_ROUND_STATES, ROUND_GROWTH, budget_reason, check
from tcpn.petrinets.checking.formulas import Deadlock, E, F
from tcpn.petrinets.checking.verdicts import Verdict
from tcpn.petrinets.engine.compiler import CompiledNet
from tcpn.petrinets.net import PetriNet
from tcpn.petrinets.statespace.space import DEFAULT_MAX_STATES, StateSpace, explore

if TYPE_CHECKING:
    from tcpn.petrinets.checking.atoms import StateColumns

__all__ = ["liveness", "one_safe", "quasi_liveness", "reachability_deadlock",
           "stable_marking", "state_space_statistics", "upper_bounds"]

Target = PetriNet | CompiledNet | StateSpace


def reachability_deadlock(target: Target, *, max_states: int | None = DEFAULT_MAX_STATES,
                          time_limit_s: float | None = None) -> Verdict:
    """Is a dead marking reachable (``EF deadlock``)? The witness path leads to one."""
    return check(target, E(F(Deadlock())), max_states=max_states, time_limit_s=time_limit_s)


def _rounds(target: Target, name: str, decide: Callable[[StateColumns], bool | None],
            max_states: int | None, time_limit_s: float | None) -> Verdict:
    """Explore in growing rounds; ``decide(columns)`` answers from a partial space, or
    ``None`` when it cannot yet (then a complete space decides with ``final``)."""
    started = wallclock.perf_counter()

    def spaces(cap: int | None, budget: float | None) -> StateSpace:
        if isinstance(target, StateSpace):
            return target
        return explore(target, max_states=cap, time_budget_s=budget)

    limit = FIRST_ROUND_STATES
    while True:
        cap = limit if max_states is None else min(limit, max_states)
        budget = None if time_limit_s is None else max(
            0.0, time_limit_s - (wallclock.perf_counter() - started))
        space = spaces(cap, budget)
        answer = decide(columns(space))
        seconds = wallclock.perf_counter() - started
        if answer is not None:
            return Verdict("true" if answer else "false", name, states=space.n_states,
                           seconds=seconds, technique=("EXPLICIT", "ON_THE_FLY"))
        if space.complete:
            raise AssertionError(f"{name}: a complete space must decide")  # pragma: no cover
        if isinstance(target, StateSpace) or space.stop_reason != "max_states" \
                or cap == max_states:
            return Verdict("unknown", name, states=space.n_states, seconds=seconds,
                           technique=("EXPLICIT",), reason=budget_reason(space))
        limit *= ROUND_GROWTH


def quasi_liveness(target: Target, *, max_states: int | None = DEFAULT_MAX_STATES,
                   time_limit_s: float | None = None) -> Verdict:
    """Can every transition fire at least once?"""
    def decide(cols: StateColumns) -> bool | None:
        seen = all(cols.fireable(t.name).any() for t in cols.compiled.transitions)
        return True if seen else (False if cols.space.complete else None)

    return _rounds(target, "QuasiLiveness", decide, max_states, time_limit_s)


def one_safe(target: Target, *, max_states: int | None = DEFAULT_MAX_STATES,
             time_limit_s: float | None = None) -> Verdict:
    """Does no place ever hold more than one token?"""
    def decide(cols: StateColumns) -> bool | None:
        if any((cols.tokens(p) > 1).any() for p in cols.compiled.place_names):
            return False
        return True if cols.space.complete else None

    return _rounds(target, "OneSafe", decide, max_states, time_limit_s)


def stable_marking(target: Target, *, max_states: int | None = DEFAULT_MAX_STATES,
                   time_limit_s: float | None = None) -> Verdict:
    """Does some place hold the same number of tokens in every reachable marking?"""
    def decide(cols: StateColumns) -> bool | None:
        stable = any(np.all(cols.tokens(p) == cols.tokens(p)[0])
                     for p in cols.compiled.place_names)
        if not stable:
            return False
        return True if cols.space.complete else None

    return _rounds(target, "StableMarking", decide, max_states, time_limit_s)


def _complete(target: Target, name: str, max_states: int | None,
              time_limit_s: float | None) -> StateSpace | Verdict:
    started = wallclock.perf_counter()
    space = target if isinstance(target, StateSpace) else explore(
        target, max_states=max_states, time_budget_s=time_limit_s)
    if space.complete:
        return space
    return Verdict("unknown", name, states=space.n_states,
                   seconds=wallclock.perf_counter() - started, technique=("EXPLICIT",),
                   reason=budget_reason(space))


def liveness(target: Target, *, max_states: int | None = DEFAULT_MAX_STATES,
             time_limit_s: float | None = None) -> Verdict:
    """Is every transition live: from every reachable marking, it can fire again?

    A transition is live when it can fire in every terminal strongly connected component.
    """
    from tcpn.petrinets.statespace.graph import (
        strongly_connected_components,
        terminal_components,
    )

    started = wallclock.perf_counter()
    space = _complete(target, "Liveness", max_states, time_limit_s)
    if isinstance(space, Verdict):
        return space
    labels = strongly_connected_components(space)
    terminal = set(terminal_components(space))
    cols = columns(space)
    live = all(terminal <= set(np.unique(labels[cols.fireable(t.name)]).tolist())
               for t in space.compiled.transitions)
    return Verdict("true" if live else "false", "Liveness", states=space.n_states,
                   seconds=wallclock.perf_counter() - started,
                   technique=("EXPLICIT", "TOPOLOGICAL"))


def upper_bounds(target: Target, places: Sequence[str], *,
                 max_states: int | None = DEFAULT_MAX_STATES,
                 time_limit_s: float | None = None) -> Verdict:
    """The most tokens the named places hold together in one reachable marking
    (``Verdict.value``)."""
    if not places:
        raise InputError("upper_bounds needs at least one place")
    started = wallclock.perf_counter()
    name = f"UpperBounds({', '.join(places)})"
    space = _complete(target, name, max_states, time_limit_s)
    if isinstance(space, Verdict):
        return space
    cols = columns(space)
    total = sum((cols.tokens(p) for p in places), np.zeros(space.n_states, dtype=np.int64))
    return Verdict("true", name, states=space.n_states, value=int(total.max()),
                   seconds=wallclock.perf_counter() - started, technique=("EXPLICIT",))


def state_space_statistics(target: Target, *, max_states: int | None = DEFAULT_MAX_STATES,
                           time_limit_s: float | None = None) -> dict[str, Any]:
    """States, edges, the most tokens in one place and in one marking (the contest's
    StateSpace examination); when a budget stops the exploration every figure is ``None``
    and ``"reason"`` names the budget."""
    space = _complete(target, "StateSpace", max_states, time_limit_s)
    if isinstance(space, Verdict):
        return {"states": None, "edges": None, "max_tokens_in_place": None,
                "max_tokens_in_marking": None, "reason": space.reason}
    cols = columns(space)
    counts = [cols.tokens(p) for p in space.compiled.place_names]
    per_marking = sum(counts, np.zeros(space.n_states, dtype=np.int64))
    return {"states": space.n_states, "edges": space.n_edges,
            "max_tokens_in_place": int(max((c.max() for c in counts), default=0)),
            "max_tokens_in_marking": int(per_marking.max())}

