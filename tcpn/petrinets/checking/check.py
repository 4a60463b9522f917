"""The model checker's front door: :func:`check` a formula on a net or a state space.

:func:`check` takes a formula (an object of :mod:`~tcpn.petrinets.checking.formulas` or its text,
see :mod:`~tcpn.petrinets.checking.text`) and a net or an explored state space, and returns
a :class:`~tcpn.petrinets.checking.verdicts.Verdict`: ``"true"``, ``"false"``, or ``"unknown"``
when a budget (``max_states``, ``time_limit_s``) stopped the exploration before the answer
was known (``reason`` names the budget). Never a guess.

How it decides:

* **On the fly** for reachability and safety, ``EF p`` and ``AG p`` with ``p`` free of
  temporal operators (and their negations): the net is explored breadth-first in rounds
  of growing size (4,096 states, then 8 times more each round) and the check stops at the
  first round that holds a state satisfying ``p`` (resp. violating it). The answer then
  comes with a shortest path; a ``"true"`` of ``AG p`` says how many states it visited.
  With ``reduction="stubborn"`` the rounds explore a stubborn-set reduced space
  (:mod:`~tcpn.petrinets.checking.reduction`), which preserves reachability of dead markings and
  of the formula's atoms.
* **Globally** for every other CTL formula: the whole state space, then the fixpoints of
  :mod:`~tcpn.petrinets.checking.ctl` (dead markings: finite maximal paths, see there), evidence
  by :func:`~tcpn.petrinets.checking.ctl.evidence`.
* **Time-bounded** operators (``AF<=T``, ``EF<=T``, ``AG<=T``, ``EG<=T``, timed nets only)
  within CTL formulas: globally, by the earliest and latest arrival times of
  :mod:`~tcpn.petrinets.checking.durations` (shortest and longest paths over the edges'
  delays) on the relative-time space.
* **LTL** formulas that are not CTL (``A(G(F(p)))``) go to
  :func:`tcpn.petrinets.checking.ltl.check_ltl` (a Büchi automaton of the negated formula,
  searched in its product with the state space).

>>> from tcpn.petrinets.examples import dining_philosophers
>>> verdict = check(dining_philosophers(5), "AG !deadlock")
>>> verdict.answer, verdict.states, verdict.technique
('true', 11, ('EXPLICIT', 'ON_THE_FLY'))
>>> both = check(dining_philosophers(5), "EF (tokens(eat0) >= 1 & tokens(eat2) >= 1)")
>>> both.answer, [step.transition for step in both.evidence.stem]
('true', ['take0', 'take2'])
"""

from __future__ import annotations

import time as wallclock
from collections.abc import Callable, Mapping

import numpy as np

from tcpn.errors import InputError, TcpnError
from tcpn.petrinets.checking.atoms import truth
from tcpn.petrinets.checking.ctl import (
    NextAtDeadlock,
    evidence,
    is_quantified,
    path_steps,
    satisfying,
)
from tcpn.petrinets.checking.durations import (
    bounded_operators,
    check_time_bounds,
    delay_points_for,
)
from tcpn.petrinets.checking.fairness import Fairness
from tcpn.petrinets.checking.formulas import (
    QUANTIFIERS,
    TEMPORAL,
    A,
    Clock,
    Compare,
    E,
    F,
    Formula,
    G,
    Not,
    is_ctl,
    is_ltl,
    walk,
)
from tcpn.petrinets.checking.ltl import check_ltl
from tcpn.petrinets.checking.text import parse, to_text
from tcpn.petrinets.checking.verdicts import Evidence, Verdict
from tcpn.petrinets.engine.compiler import CompiledNet
from tcpn.petrinets.net import PetriNet
from tcpn.petrinets.statespace.graph import state_graph
from tcpn.petrinets.statespace.memory import out_of_memory_reason
from tcpn.petrinets.statespace.space import DEFAULT_MAX_STATES, StateSpace, explore

__all__ = ["FIRST_ROUND_STATES", "ROUND_GROWTH", "UnsupportedFormula", "check"]

#: On-the-fly checking explores this many states first, then ROUND_GROWTH times more
#: each round (the re-exploration costs at most 1/(ROUND_GROWTH - 1) extra).
FIRST_ROUND_STATES = 4096
ROUND_GROWTH = 8


class UnsupportedFormula(TcpnError):
    """A formula tcpn cannot check yet (an LTL formula before the LTL checker is in)."""


def check(target: PetriNet | CompiledNet | StateSpace, formula: Formula | str, *,
          max_states: int | None = DEFAULT_MAX_STATES, time_limit_s: float | None = None,
          fairness: Fairness | None = None, next_at_deadlock: NextAtDeadlock = "successors",
          clock: str | None = None, reduction: str | None = None,
          delay_points: int | None = None,
          predicates: Mapping[str, Callable[..., bool]] | None = None,
          progress: Callable[[int, int, float], None] | bool | None = None,
          whole_space: Callable[[], StateSpace] | None = None) -> Verdict:
    """Check ``formula`` at the initial marking of ``target``; see the module docstring.

    ``clock`` picks the timed state space (default: ``"absolute"`` when the formula reads
    ``clock()``, else ``"relative"``); ``fairness`` restricts the paths to fair ones;
    ``predicates`` names the Python predicates a text formula's ``pred(name)`` uses;
    ``delay_points`` explores random delays at that many points of their intervals
    (``explore``'s; a formula with time-bounded operators on a net whose random delays
    are all integer intervals takes every integer of them, an exact answer:
    :func:`~tcpn.petrinets.checking.durations.delay_points_for`). ``whole_space`` gives
    the net's whole relative-time state space, explored once for several formulas (``tcpn
    check``'s): a formula that needs the whole space reads it rather than exploring
    again, one checked on the fly or on another space (``clock()``, points of random
    delays, a reduction) does not.

    The verdict's truth value is its answer; an ``"unknown"`` one (a budget reached) has
    none and raises :class:`ValueError`, so test ``verdict.holds`` where it may be unknown:

    >>> from tcpn.petrinets import check
    >>> from tcpn.petrinets.examples import counter, left_first_philosophers
    >>> "deadlock-free" if check(left_first_philosophers(3), "AG !deadlock") else "deadlock"
    'deadlock'
    >>> check(counter(10**9), "AF deadlock", max_states=100).holds is None
    True
    """
    started = wallclock.perf_counter()
    net = target.net if isinstance(target, StateSpace | CompiledNet) else target
    if not isinstance(net, PetriNet):
        raise InputError(f"check() needs a PetriNet or a StateSpace, got {type(target).__name__}")
    if isinstance(formula, str):
        formula = parse(formula, net, predicates)
    _check_names(net, formula, fairness)
    check_time_bounds(formula, net, fairness)
    timing: tuple[str, ...] = ()
    if bounded_operators(formula) and not isinstance(target, StateSpace):
        delay_points, how = delay_points_for(net, delay_points)
        timing = (how,) if how else ()
    text = _describe(formula)
    if reduction not in (None, "stubborn"):
        raise InputError(f"reduction must be None or 'stubborn', got {reduction!r}")
    reads_clock = uses_clock(formula)
    if clock is None:
        clock = "absolute" if reads_clock else "relative"
    if reads_clock and not net.is_timed:
        raise InputError(f"formula {text}: clock() reads model time, but net {net.name} is "
                         "untimed")

    def explore_net(limit: int | None, budget_s: float | None,
                    stubborn: tuple[Formula, ...] = ()) -> StateSpace:
        if stubborn:
            from tcpn.petrinets.checking.reduction import explore_stubborn

            return explore_stubborn(target if isinstance(target, CompiledNet) else net,
                                    stubborn, max_states=limit, time_budget_s=budget_s)
        return explore(target if isinstance(target, CompiledNet) else net, max_states=limit,
                       time_budget_s=budget_s, clock=clock, progress=progress,
                       delay_points=delay_points)

    try:
        on_the_fly = as_reachability(formula)
        if on_the_fly is not None and not isinstance(target, StateSpace) and fairness is None:
            return _on_the_fly(formula, on_the_fly, explore_net, text, max_states, time_limit_s,
                               started, reduction == "stubborn")
        if isinstance(target, StateSpace):
            space = target
        else:
            if reduction is not None:
                raise InputError("reduction='stubborn' preserves reachability and deadlock only: "
                                 f"{text} needs the full state space")
            shared = whole_space is not None and clock == "relative" and delay_points is None
            space = whole_space() if whole_space is not None and shared else explore_net(
                max_states, time_limit_s)
        if not space.complete:
            return Verdict("unknown", text, states=space.n_states,
                           seconds=wallclock.perf_counter() - started,
                           technique=("EXPLICIT",), reason=budget_reason(space))
        if not is_quantified(formula):
            holds = bool(truth(space, formula)[0])
            return Verdict("true" if holds else "false", text, states=space.n_states,
                           seconds=wallclock.perf_counter() - started, technique=("EXPLICIT",))
        if is_ctl(formula):
            holds = bool(satisfying(space, formula, fairness=fairness,
                                    next_at_deadlock=next_at_deadlock)[0])
            found = evidence(space, formula, fairness=fairness, next_at_deadlock=next_at_deadlock)
            technique = ("EXPLICIT", "GLOBAL_FIXPOINT") + (("FAIRNESS",) if fairness else ()) \
                + (("TIMED",) if bounded_operators(formula) else ()) + timing
            return Verdict("true" if holds else "false", text, evidence=found,
                           states=space.n_states, seconds=wallclock.perf_counter() - started,
                           technique=technique)
        if is_ltl(formula):
            seconds_left = None if time_limit_s is None else max(
                0.0, time_limit_s - (wallclock.perf_counter() - started))
            verdict: Verdict = check_ltl(
                formula, space, weak_fair=fairness.weak if fairness else (),
                strong_fair=fairness.strong if fairness else (), time_limit_s=seconds_left)
            return verdict
        raise UnsupportedFormula(f"formula {text} is neither CTL nor LTL (CTL* nesting): "
                                 "not supported")
    except MemoryError:  # a limit refused an allocation before the budget was read
        return Verdict("unknown", text, seconds=wallclock.perf_counter() - started,
                       technique=("EXPLICIT",), reason=out_of_memory_reason())


def uses_clock(formula: Formula) -> bool:
    """Whether the formula reads ``clock()`` (it then needs an absolute-time space)."""
    return any(isinstance(side, Clock) for node in walk(formula)
               if isinstance(node, Compare) for side in (node.left, node.right))


def _check_names(net: PetriNet, formula: Formula, fairness: Fairness | None) -> None:
    from tcpn.petrinets.checking.formulas import places_of, transitions_of

    for place in sorted(places_of(formula)):
        if place not in net.places:
            raise InputError(f"formula: no place named {place!r} in net {net.name}")
    named = transitions_of(formula) | set(fairness.transitions if fairness else ())
    for transition in sorted(named):
        if transition not in net.transitions:
            raise InputError(f"formula: no transition named {transition!r} in net {net.name}")


def _describe(formula: Formula) -> str:
    try:
        return to_text(formula)
    except InputError:
        return repr(formula)


def as_reachability(formula: Formula) -> tuple[Formula, bool] | None:
    """``(p, want)`` when the formula is ``EF p`` (want: a p-state exists) or ``AG p``
    (want: a not-p state exists, refuting it), under negations; ``None`` otherwise."""
    negated = False
    while isinstance(formula, Not):
        formula, negated = formula.operand, not negated
    if isinstance(formula, E) and isinstance(formula.path, F) \
            and _propositional(formula.path.operand):
        return formula.path.operand, not negated
    if isinstance(formula, A) and isinstance(formula.path, G) \
            and _propositional(formula.path.operand):
        return Not(formula.path.operand), negated
    return None


def _propositional(formula: Formula) -> bool:
    """No temporal operator and no quantifier: :func:`truth` evaluates it."""
    return not any(isinstance(node, TEMPORAL + QUANTIFIERS) for node in walk(formula))


def _on_the_fly(formula: Formula, goal: tuple[Formula, bool],
                explore_net: Callable[..., StateSpace], text: str, max_states: int | None,
                time_limit_s: float | None, started: float, stubborn: bool) -> Verdict:
    """Explore in growing rounds until a state satisfying the goal is found or all is seen.

    ``goal = (p, found_means_true)``: finding a p-state makes the formula true when
    ``found_means_true``, false otherwise.
    """
    target, found_means_true = goal
    technique = ("EXPLICIT", "ON_THE_FLY") + (("STUBBORN_SETS",) if stubborn else ())
    limit = FIRST_ROUND_STATES
    while True:
        cap = limit if max_states is None else min(limit, max_states)
        budget = None if time_limit_s is None else max(
            0.0, time_limit_s - (wallclock.perf_counter() - started))
        space = explore_net(cap, budget, (target,) if stubborn else ())
        hits = truth(space, target)
        if hits.any():
            g = state_graph(space)
            everywhere = np.ones(space.n_states, dtype=bool)
            stem = g.forward_path(everywhere, hits)
            assert stem is not None  # every state of a breadth-first space is reachable
            return Verdict("true" if found_means_true else "false", text,
                           evidence=Evidence(path_steps(space, stem)), states=space.n_states,
                           seconds=wallclock.perf_counter() - started, technique=technique)
        if space.complete:
            return Verdict("false" if found_means_true else "true", text,
                           states=space.n_states, seconds=wallclock.perf_counter() - started,
                           technique=technique)
        if space.stop_reason != "max_states" or cap == max_states:
            return Verdict("unknown", text, states=space.n_states,
                           seconds=wallclock.perf_counter() - started, technique=technique,
                           reason=budget_reason(space))
        limit *= ROUND_GROWTH


def budget_reason(space: StateSpace) -> str:
    """Why an incomplete ``space`` stopped (which budget, and after how many states), as
    the verdicts of every checker that needs the whole space say it."""
    what = {"max_states": "state budget", "time_budget": "time limit",
            "max_depth": "depth limit", "memory_budget": "memory budget"
            }.get(space.stop_reason, space.stop_reason)
    return (f"{what} reached ({space.limit}) after {space.n_states} states, before the "
            "answer was known")

