"""Proving that no reachable marking of a P/T net satisfies a state formula, without its
state space: the state equation over the formula's linear constraints.

Every reachable marking ``M`` satisfies ``M = M0 + C x`` with ``C`` the incidence matrix
(post - pre), ``x >= 0`` the firing counts of some sequence, and ``M >= 0``
(:mod:`~tcpn.petrinets.checking.contest.state_equation`). A quantifier-free state formula
over token counts and fireability is a disjunction of conjunctions of linear constraints
on ``M`` (:func:`linear_cases`); when no case has a real solution together with the
state equation (a linear program per case, SciPy's HiGHS on the sparse matrices), no
reachable marking satisfies the formula: ``EF p`` is FALSE, ``AG not p`` TRUE, and an
atom that can never hold (or never fail) is a constant in every formula over reachable
states. A solution proves nothing: the equation also has solutions no firing sequence
reaches. This is the contest tools' STATE_EQUATION technique (e.g. LoLA, TAPAAL's query
simplification; Murata, *Petri nets: properties, analysis and applications*, Proc. IEEE
77(4), 1989, section VI-B).

The translation is exact over the integers: token counts are integers, so ``a < b`` is
``a <= b - 1`` when every coefficient and constant is an integer (else it is relaxed to
``a <= b``, which proves less but nothing false); ``a != b`` is two cases. ``t`` fireable
is one conjunction (its input and read arcs' weights, its inhibitor arcs' thresholds);
``t`` not fireable one case per arc. Read and inhibitor arcs only take behaviour away, so
the equation holds with them; a reset arc empties a place whatever ``C`` says, so a net
with one gets no answer here. A formula whose cases pass :data:`MAX_CASES` (a negated
fireability over many arcs, a deadlock) gets none either.

>>> from tcpn.petrinets.examples import token_ring
>>> from tcpn.petrinets.statespace.ptspace import pt_net
>>> from tcpn.petrinets.checking.formulas import tokens
>>> equation = StateEquation(pt_net(token_ring(3)))
>>> equation.unreachable(tokens("p0", "p1", "p2") >= 2)  # one token circulates
True
>>> equation.unreachable(tokens("p1") >= 1) is None  # reachable, or not proved
True
"""

from __future__ import annotations

import math
import time as wallclock
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcpn.petrinets.checking.contest.walks import StateFormulas
from tcpn.petrinets.checking.formulas import (
    And,
    Bool,
    Compare,
    Const,
    Fireable,
    Formula,
    Not,
    Numeric,
    Or,
    Sum,
    Tokens,
)
from tcpn.petrinets.statespace.ptspace import PTNet

__all__ = ["MAX_CASES", "Linear", "StateEquation", "linear_cases"]

#: Cases (conjunctions of constraints) a formula may expand to before it is given up.
MAX_CASES = 64
#: The negation of each comparison.
NEGATED = {"<=": ">", "<": ">=", ">=": "<", ">": "<=", "==": "!=", "!=": "=="}


@dataclass(frozen=True)
class Linear:
    """``sum(weight * M[place]) <= bound`` over place indices."""

    places: tuple[int, ...]
    weights: tuple[float, ...]
    bound: float


#: A disjunction of conjunctions of constraints; ``[()]`` is true, ``[]`` false.
Cases = list[tuple[Linear, ...]]


def linear_cases(formula: Formula, net: PTNet, negated: bool = False) -> Cases | None:
    """``formula`` (or its negation) as cases of linear constraints on a marking of ``net``
    (see the module), or None when it is not linear (the clock, a coloured count, a
    predicate, a deadlock) or passes :data:`MAX_CASES`."""
    place = {p: i for i, p in enumerate(net.places)}
    transition = {t: i for i, t in enumerate(net.transitions)}
    return _cases(formula, negated, net, place, transition)


def _cases(formula: Formula, negated: bool, net: PTNet, place: dict[str, int],
           transition: dict[str, int]) -> Cases | None:
    if isinstance(formula, Bool):
        return [()] if formula.value != negated else []
    if isinstance(formula, Not):
        return _cases(formula.operand, not negated, net, place, transition)
    if isinstance(formula, And | Or):
        parts = [_cases(o, negated, net, place, transition) for o in formula.operands]
        if any(p is None for p in parts):
            return None
        conjunction = isinstance(formula, And) != negated
        return _product(parts) if conjunction else _union(parts)  # type: ignore[arg-type]
    if isinstance(formula, Compare):
        return _compare(NEGATED[formula.op] if negated else formula.op, formula.left,
                        formula.right, place)
    if isinstance(formula, Fireable):
        rows = [_fireable(transition[t], net) for t in formula.transitions]
        if negated:  # no transition of the list fireable: each one disabled
            return _product([_disabled(row) for row in rows])
        return _union([[tuple(row)] for row in rows])
    return None


def _union(parts: Iterable[Cases]) -> Cases | None:
    found = [case for part in parts for case in part]
    return found if len(found) <= MAX_CASES else None


def _product(parts: Sequence[Cases]) -> Cases | None:
    found: Cases = [()]
    for part in parts:
        found = [left + right for left in found for right in part]
        if len(found) > MAX_CASES:
            return None
    return found


def _fireable(t: int, net: PTNet) -> list[Linear]:
    """Transition ``t`` enabled: ``M[p] >= need`` per input or read arc, ``M[p] <=
    threshold - 1`` per inhibitor arc."""
    need = net.pre.maximum(net.test)
    row = slice(need.indptr[t], need.indptr[t + 1])
    found = [Linear((int(p),), (-1.0,), -float(w))
             for p, w in zip(need.indices[row], need.data[row], strict=True)]
    row = slice(net.inhibit.indptr[t], net.inhibit.indptr[t + 1])
    found += [Linear((int(p),), (1.0,), float(w) - 1.0)
              for p, w in zip(net.inhibit.indices[row], net.inhibit.data[row], strict=True)]
    return found


def _disabled(enabling: list[Linear]) -> Cases:
    """One case per constraint of ``enabling`` violated (integer counts)."""
    return [(Linear(c.places, tuple(-w for w in c.weights), -c.bound - 1.0),)
            for c in enabling]


def _compare(op: str, left: Numeric, right: Numeric, place: dict[str, int]
             ) -> Cases | None:
    terms, subtracted = _affine(left, place, 1.0), _affine(right, place, -1.0)
    if terms is None or subtracted is None:
        return None
    coefficients: dict[int, float] = {}
    constant = 0.0  # left - right = sum(coefficients * M) + constant
    for index, weight in (*terms, *subtracted):
        if index is None:
            constant += weight
        else:
            coefficients[index] = coefficients.get(index, 0.0) + weight
    places = tuple(p for p, w in coefficients.items() if w)
    weights = tuple(coefficients[p] for p in places)
    integral = all(float(w).is_integer() for w in (*weights, constant))
    strict = 1.0 if integral else 0.0

    def at_most(sign: float, gap: float) -> Linear:
        # sign * (left - right) <= -gap, i.e. sign * sum(w M) <= -sign * constant - gap
        bound = -sign * constant - gap
        return Linear(places, tuple(sign * w for w in weights),
                      math.floor(bound) if integral else bound)

    if op == "<=":
        return [(at_most(1.0, 0.0),)]
    if op == "<":
        return [(at_most(1.0, strict),)]
    if op == ">=":
        return [(at_most(-1.0, 0.0),)]
    if op == ">":
        return [(at_most(-1.0, strict),)]
    if op == "==":
        return [(at_most(1.0, 0.0), at_most(-1.0, 0.0))]
    return [(at_most(1.0, strict),), (at_most(-1.0, strict),)]  # "!="


def _affine(expression: Numeric, place: dict[str, int], sign: float
            ) -> list[tuple[int | None, float]] | None:
    """``sign * expression`` as (place index or None for the constant, weight) terms."""
    if isinstance(expression, Const):
        return [(None, sign * float(expression.value))]
    if isinstance(expression, Tokens):
        if expression.value not in (None, ()):
            return None
        return [(place[p], sign) for p in expression.places]
    if isinstance(expression, Sum):
        found: list[tuple[int | None, float]] = []
        for term in expression.terms:
            part = _affine(term, place, sign)
            if part is None:
                return None
            found += part
        return found
    return None


class StateEquation:
    """The state equation of a P/T net, set up once for many questions (see the module).

    ``deadline`` (a :func:`time.perf_counter` value, or None) bounds every program it
    solves; a program cut short proves nothing. Verdicts are kept per formula, except
    those a deadline cut (asked again with a later deadline, they are solved again);
    ``cut`` counts the programs a deadline cut or skipped."""

    def __init__(self, net: PTNet, deadline: float | None = None):
        self.net = net
        self.deadline = deadline
        self.usable = not net.reset.nnz
        self.incidence = (net.post - net.pre).T.astype(float).tocsr()  # places x transitions
        self.initial = np.asarray(net.initial, dtype=float)
        self._verdicts: dict[tuple[Formula, bool], bool | None] = {}
        self.cut = 0
        self._formulas: StateFormulas | None = None  # made at the first constant asked

    def unreachable(self, formula: Formula, negated: bool = False) -> bool | None:
        """True when no reachable marking satisfies ``formula`` (``negated``: its
        negation), None when that is not proved (within the deadline)."""
        key = (formula, negated)
        if key in self._verdicts:
            return self._verdicts[key]
        cases = linear_cases(formula, self.net, negated) if self.usable else None
        verdict, final = cases is not None, True
        for case in cases or ():
            infeasible = self._infeasible(case)
            if not infeasible:  # a solution (nothing proved), or cut (nothing known)
                verdict, final = False, infeasible is not None
                break
        if final:  # not cut by a deadline: the same with more time
            self._verdicts[key] = True if verdict else None
        return True if verdict else None

    def constant(self, formula: Formula) -> bool | None:
        """The oracle of :func:`~tcpn.petrinets.checking.contest.folding.fold`: the value
        ``formula`` has in every reachable marking when the state equation proves it
        cannot have the other (the initial marking's value is the only candidate)."""
        initially = self.initially(formula)
        if initially is None:
            return None
        return initially if self.unreachable(formula, negated=initially) else None

    def initially(self, formula: Formula) -> bool | None:
        """``formula``'s value in the initial marking (None: not evaluable there,
        :meth:`StateFormulas.initially <tcpn.petrinets.checking.contest.walks.
        StateFormulas.initially>`), on one evaluator made at the first question."""
        if self._formulas is None:
            self._formulas = StateFormulas(self.net)
        return self._formulas.initially(formula)

    def _infeasible(self, case: tuple[Linear, ...]) -> bool | None:
        """Whether the state equation with ``case``'s constraints has no real solution
        (None: the deadline cut the program, or came before it)."""
        left = None if self.deadline is None else self.deadline - wallclock.perf_counter()
        if left is not None and left <= 0:
            self.cut += 1
            return None
        from scipy.optimize import linprog  # here: ~75 modules a complete search never needs
        from scipy.sparse import csr_array, vstack

        n_places = len(self.initial)
        rows = csr_array((
            [w for c in case for w in c.weights],
            ([i for i, c in enumerate(case) for _ in c.places],
             [p for c in case for p in c.places])), shape=(len(case), n_places))
        # M = M0 + C x: M >= 0 is -C x <= M0; a . M <= b is (a C) x <= b - a . M0
        bounds = np.array([c.bound for c in case]) - rows @ self.initial
        matrix = vstack([-self.incidence, rows @ self.incidence]).tocsr()
        options: dict[str, Any] = {} if left is None else {"time_limit": max(0.1, left)}
        found = linprog(np.zeros(self.incidence.shape[1]), A_ub=matrix,
                        b_ub=np.concatenate([self.initial, bounds]), bounds=(0, None),
                        method="highs", options=options)
        if found.status == 1:  # a time or iteration limit: nothing known
            self.cut += 1
            return None
        return bool(found.status == 2)  # 2: infeasible; 0 solved, 3 unbounded
