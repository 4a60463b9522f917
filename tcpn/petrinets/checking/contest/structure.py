"""What a P/T net's structure proves when a budget stopped its search, for the contest's
examinations: its empty siphon (:mod:`~tcpn.petrinets.checking.contest.siphons`), its
state equation (:mod:`~tcpn.petrinets.checking.contest.unreachable`,
:mod:`~tcpn.petrinets.checking.contest.state_equation`) and the formulas they simplify
(:mod:`~tcpn.petrinets.checking.contest.folding`), each computed once per model and
shared by its examinations (:mod:`~tcpn.petrinets.checking.contest.examinations`).
"""

from __future__ import annotations

import time as wallclock
from typing import Any

from tcpn.petrinets.checking.contest.clock import Clock
from tcpn.petrinets.checking.contest.folding import fold
from tcpn.petrinets.checking.contest.siphons import empty_siphon, siphon_constant
from tcpn.petrinets.checking.contest.state_equation import state_equation_bound
from tcpn.petrinets.checking.contest.unreachable import StateEquation
from tcpn.petrinets.checking.formulas import (
    TEMPORAL,
    A,
    And,
    Bool,
    Compare,
    Const,
    E,
    F,
    Fireable,
    Formula,
    Not,
    Or,
    Tokens,
    walk,
)
from tcpn.petrinets.checking.ptcheck import numeric_values
from tcpn.petrinets.statespace.ptspace import PTNet

__all__ = ["STRUCTURE_S", "Structure"]

#: Seconds a structural answer (the state equation's linear programs) may take at most,
#: when a budget has stopped the search (the answers left are few and cheap then).
STRUCTURE_S = 30.0


def _now(formula: Formula) -> Formula | None:
    """``formula`` without its path quantifiers when no temporal operator is left in it
    (``E p``, ``A p`` are ``p``), else None."""
    if isinstance(formula, A | E):
        return _now(formula.path)
    if isinstance(formula, Not):
        inner = _now(formula.operand)
        return None if inner is None else Not(inner)
    if isinstance(formula, And | Or):
        parts = [_now(p) for p in formula.operands]
        return None if any(p is None for p in parts) else type(formula)(
            tuple(p for p in parts if p is not None))
    return None if any(isinstance(n, TEMPORAL) for n in walk(formula)) else formula


class Structure:
    """What a P/T net's structure proves when a budget stopped its search: its empty
    siphon (:mod:`~tcpn.petrinets.checking.contest.siphons`) and its state equation
    (:mod:`~tcpn.petrinets.checking.contest.unreachable`), each formula simplified once
    by both (:func:`~tcpn.petrinets.checking.contest.folding.fold`). The state
    equation's programs run until :data:`STRUCTURE_S` after :meth:`start` (called at each
    examination's start), or the time left on ``clock`` (or on the examination's own
    clock given to :meth:`start`), whichever comes first. What a deadline cut is not
    kept: asked again after a later :meth:`start`, it is computed again."""

    def __init__(self, net: PTNet, clock: Clock):
        self.net, self.clock = net, clock
        self.siphon = empty_siphon(net)
        self._siphon_constant = siphon_constant(net, self.siphon)
        self.equation = StateEquation(net)
        self._simplified: dict[Formula, tuple[Formula, str]] = {}
        self._bounds: dict[Tokens, tuple[int, int | None]] = {}
        self._seen: dict[Tokens, int] = {}
        #: a random walk met a dead marking (set by the global examinations)
        self.walked_to_deadlock = False

    def start(self, clock: Clock | None = None) -> None:
        left = (clock or self.clock).left()
        self.equation.deadline = wallclock.perf_counter() + (
            STRUCTURE_S if left is None else min(left, STRUCTURE_S))

    def simplified(self, formula: Formula) -> tuple[Formula, str]:
        """``formula`` folded by the siphon, then by the state equation, with the technique
        of the last step that changed it (TOPOLOGICAL, STATE_EQUATION; "" for none)."""
        if formula not in self._simplified:
            cut = self.equation.cut
            by_siphon = fold(formula, self._siphon_constant)
            by_equation = fold(by_siphon, self.equation.constant)
            technique = "STATE_EQUATION" if by_equation != by_siphon else (
                "TOPOLOGICAL" if by_siphon != formula else "")
            now = _now(by_equation)  # no temporal operator left: its value at the start
            if now is not None and technique:
                value = self.equation.initially(now)
                by_equation = by_equation if value is None else Bool(value)
            if self.equation.cut != cut:  # a program cut: more time may fold more
                return by_equation, technique
            self._simplified[formula] = (by_equation, technique)
        return self._simplified[formula]

    def bounds(self, bound: Tokens, space: Any) -> tuple[int, int | None]:
        """The most tokens seen on ``bound``'s places (the initial marking, the states
        found) and the state equation's upper bound of them (None: none found within
        the deadline), each computed once."""
        if bound in self._bounds:
            return self._bounds[bound]
        if bound not in self._seen:
            index = {p: i for i, p in enumerate(self.net.places)}
            seen = int(sum(int(self.net.initial[index[p]]) for p in bound.places))
            if len(space):
                seen = max(seen, int(numeric_values(bound, space).max()))
            self._seen[bound] = seen
        seen, deadline = self._seen[bound], self.equation.deadline
        most = state_equation_bound(
            self.net, bound.places,
            None if deadline is None else max(0.0, deadline - wallclock.perf_counter()))
        if most is None and deadline is not None and wallclock.perf_counter() >= deadline:
            return seen, None  # perhaps cut by the deadline: not kept
        self._bounds[bound] = (seen, most)
        return self._bounds[bound]

    def bound_goal(self, bound: Tokens, space: Any) -> Formula | None:
        """``EF(sum >= most)`` for a bound whose states found stay below the state
        equation's ``most``: a walk meeting it proves the bound is ``most``."""
        seen, most = self.bounds(bound, space)
        if most is None or seen >= most:
            return None
        return E(F(Compare(">=", bound, Const(most))))

    def dead(self, transition: int) -> bool:
        """Whether ``transition`` is proved never enabled (the siphon, the equation)."""
        return bool(self.siphon.dead[transition]) or bool(self.equation.unreachable(
            Fireable((self.net.transitions[transition],))))
