"""Temporal-logic formulas over a net's markings, as plain immutable Python objects.

One syntax tree serves CTL, LTL and their boolean combinations, in the shape of CTL*:
a *state formula* is an atom, a boolean combination, or a path quantifier (:class:`A`,
:class:`E`) over a *path formula*; a path formula is a state formula or a temporal
operator (:class:`X`, :class:`F`, :class:`G`, :class:`U`, :class:`R`, :class:`W`) over
path formulas, or a time-bounded one (:class:`FWithin`, :class:`GWithin`: ``F<=T``,
``G<=T``, over the model time the firings wait; timed CTL, checked by
:mod:`~tcpn.petrinets.checking.durations`). A formula is CTL when every temporal operator
stands directly under a quantifier (``AG(p)`` is ``A(G(p))``); it is LTL when it is one
quantifier over a path formula without quantifiers inside (``A(G(F(p)))``). The checkers
decide which algorithm a formula needs from this shape; readers (the text grammar, the
Model Checking Contest's XML, CPN Tools' ASK-CTL) all build these objects.

Atoms read a state: token counts of places and sums of places (:func:`tokens`),
fireability of transitions (:func:`fireable`), the clock of a timed state (:func:`clock`)
and any Python predicate on the marking (:class:`Predicate`).

>>> p = tokens("queue") <= 80
>>> p
Compare(op='<=', left=Tokens(places=('queue',), value=None), right=Const(value=80))
>>> AG(fireable("drop"))
A(path=G(operand=Fireable(transitions=('drop',))))
>>> is_ctl(AG(p)), is_ltl(A(G(F(p)))), is_ltl(AG(EF(p)))
(True, True, False)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from tcpn.errors import InputError

CompareOp = Literal["<=", "<", ">=", ">", "==", "!="]


class Formula:
    """Base of every formula node: ``&``, ``|``, ``~`` and :meth:`implies` build booleans."""

    def __and__(self, other: Formula) -> Formula:
        return And((self, other))

    def __or__(self, other: Formula) -> Formula:
        return Or((self, other))

    def __invert__(self) -> Formula:
        return Not(self)

    def implies(self, other: Formula) -> Formula:
        """``self -> other``, as ``~self | other``."""
        return Or((Not(self), other))

    def children(self) -> tuple[Formula, ...]:
        """The direct sub-formulas (numeric expressions are not formulas)."""
        return tuple(value for f in fields(self)  # type: ignore[arg-type]
                     for value in _flatten(getattr(self, f.name))
                     if isinstance(value, Formula))


def _flatten(value: Any) -> Iterator[Any]:
    if isinstance(value, tuple):
        yield from value
    else:
        yield value


class Numeric:
    """A numeric expression over a state: comparisons build :class:`Compare` atoms."""

    def _compare(self, op: CompareOp, other: Numeric | int | float) -> Compare:
        return Compare(op, self, other if isinstance(other, Numeric) else Const(other))

    def __le__(self, other: Numeric | int | float) -> Compare:
        return self._compare("<=", other)

    def __lt__(self, other: Numeric | int | float) -> Compare:
        return self._compare("<", other)

    def __ge__(self, other: Numeric | int | float) -> Compare:
        return self._compare(">=", other)

    def __gt__(self, other: Numeric | int | float) -> Compare:
        return self._compare(">", other)

    def equals(self, other: Numeric | int | float) -> Compare:
        """``self == other`` as an atom (``==`` itself keeps Python's equality)."""
        return self._compare("==", other)

    def differs(self, other: Numeric | int | float) -> Compare:
        """``self != other`` as an atom."""
        return self._compare("!=", other)

    def __add__(self, other: Numeric | int | float) -> Numeric:
        return Sum((self, other if isinstance(other, Numeric) else Const(other)))


@dataclass(frozen=True)
class Const(Numeric):
    """A constant (an integer for token counts, a float for the clock)."""

    value: int | float


@dataclass(frozen=True)
class Tokens(Numeric):
    """The number of tokens on the named places, summed; only those equal to ``value``
    (a colour) when it is given."""

    places: tuple[str, ...]
    value: Any = None


@dataclass(frozen=True)
class Clock(Numeric):
    """The model time of a state (timed state spaces only)."""


@dataclass(frozen=True)
class Sum(Numeric):
    """The sum of numeric expressions."""

    terms: tuple[Numeric, ...]


@dataclass(frozen=True)
class Bool(Formula):
    """The constant ``true`` or ``false``."""

    value: bool


@dataclass(frozen=True)
class Compare(Formula):
    """An atom comparing two numeric expressions."""

    op: CompareOp
    left: Numeric
    right: Numeric


#: What each comparison of a :class:`Compare` computes, on numbers and on NumPy arrays of
#: them alike (element by element): the one table every checker reads.
COMPARISONS: Mapping[str, Callable[[Any, Any], Any]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt,
    "==": operator.eq, "!=": operator.ne,
}


@dataclass(frozen=True)
class Fireable(Formula):
    """An atom: at least one of the named transitions has an enabled binding."""

    transitions: tuple[str, ...]


@dataclass(frozen=True)
class Deadlock(Formula):
    """An atom: no transition is enabled (a dead marking)."""


@dataclass(frozen=True)
class Predicate(Formula):
    """An atom given by Python: ``function(marking, clock) -> bool``, where ``marking``
    maps each place name to its tokens (as :meth:`StateSpace.marking` returns them)."""

    name: str
    function: Callable[[Mapping[str, Any], float], bool]


@dataclass(frozen=True)
class Not(Formula):
    """Negation."""

    operand: Formula


@dataclass(frozen=True)
class And(Formula):
    """Conjunction of two or more formulas."""

    operands: tuple[Formula, ...]


@dataclass(frozen=True)
class Or(Formula):
    """Disjunction of two or more formulas."""

    operands: tuple[Formula, ...]


@dataclass(frozen=True)
class A(Formula):
    """Path quantifier: the path formula holds on every path from the state."""

    path: Formula


@dataclass(frozen=True)
class E(Formula):
    """Path quantifier: the path formula holds on some path from the state."""

    path: Formula


@dataclass(frozen=True)
class X(Formula):
    """Next: the operand holds in the second state of the path."""

    operand: Formula


@dataclass(frozen=True)
class F(Formula):
    """Finally (eventually): the operand holds somewhere on the path."""

    operand: Formula


@dataclass(frozen=True)
class G(Formula):
    """Globally (always): the operand holds everywhere on the path."""

    operand: Formula


@dataclass(frozen=True)
class U(Formula):
    """Until: ``right`` holds somewhere, and ``left`` holds at every state before it."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class R(Formula):
    """Release: ``right`` holds up to and including the first state where ``left`` holds,
    or forever if there is none (the dual of :class:`U`)."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class W(Formula):
    """Weak until: ``left U right``, or ``left`` forever."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class FWithin(Formula):
    """Finally within ``bound_s``: the operand holds at a state of the path reached after
    at most ``bound_s`` of model time (``F<=T``; timed nets only)."""

    operand: Formula
    bound_s: float

    def __post_init__(self) -> None:
        check_bound("F", self.bound_s)


@dataclass(frozen=True)
class GWithin(Formula):
    """Globally within ``bound_s``: the operand holds at every state of the path reached
    after at most ``bound_s`` of model time (``G<=T``; timed nets only)."""

    operand: Formula
    bound_s: float

    def __post_init__(self) -> None:
        check_bound("G", self.bound_s)


TIME_BOUNDED = (FWithin, GWithin)
TEMPORAL = (X, F, G, U, R, W, *TIME_BOUNDED)
QUANTIFIERS = (A, E)


def check_bound(operator: str, bound_s: Any) -> None:
    """Refuse a time bound that is not a finite number >= 0, naming the operator."""
    if isinstance(bound_s, bool) or not isinstance(bound_s, int | float) or \
            not math.isfinite(bound_s) or bound_s < 0:
        raise InputError(f"{operator}<={bound_s!r}: the time bound must be a finite number "
                         "of seconds >= 0")


def tokens(*places: str, value: Any = None) -> Tokens:
    """The token count of one place, or the sum over several: ``tokens("q") <= 80``."""
    return Tokens(tuple(places), value)


def fireable(*transitions: str) -> Fireable:
    """True where at least one of the named transitions is enabled."""
    return Fireable(tuple(transitions))


def clock() -> Clock:
    """The model time of a state: ``clock() <= 2.5`` (timed state spaces only)."""
    return Clock()


def EX(p: Formula) -> Formula:
    """Some successor satisfies ``p``."""
    return E(X(p))


def AX(p: Formula) -> Formula:
    """Every successor satisfies ``p``."""
    return A(X(p))


def EF(p: Formula, within_s: float | None = None) -> Formula:
    """A state satisfying ``p`` is reachable; with ``within_s``, within that much model time
    (``EF<=T``, :class:`FWithin`)."""
    return E(F(p) if within_s is None else FWithin(p, within_s))


def AF(p: Formula, within_s: float | None = None) -> Formula:
    """Every path reaches a state satisfying ``p``; with ``within_s``, within that much model time
    (``AF<=T``, :class:`FWithin`)."""
    return A(F(p) if within_s is None else FWithin(p, within_s))


def EG(p: Formula, within_s: float | None = None) -> Formula:
    """Some path satisfies ``p`` forever; with ``within_s``, within that much model time
    (``EG<=T``, :class:`GWithin`)."""
    return E(G(p) if within_s is None else GWithin(p, within_s))


def AG(p: Formula, within_s: float | None = None) -> Formula:
    """Every reachable state satisfies ``p``; with ``within_s``, within that much model time
    (``AG<=T``, :class:`GWithin`)."""
    return A(G(p) if within_s is None else GWithin(p, within_s))


def EU(p: Formula, q: Formula) -> Formula:
    """Some path satisfies ``p`` until ``q``."""
    return E(U(p, q))


def AU(p: Formula, q: Formula) -> Formula:
    """Every path satisfies ``p`` until ``q``."""
    return A(U(p, q))


def is_state_formula(formula: Formula) -> bool:
    """No temporal operator outside a quantifier."""
    if isinstance(formula, TEMPORAL):
        return False
    if isinstance(formula, QUANTIFIERS):
        return True
    return all(is_state_formula(child) for child in formula.children())


def is_ctl(formula: Formula) -> bool:
    """Every temporal operator stands directly under a quantifier, and its operands are
    CTL state formulas."""
    if isinstance(formula, QUANTIFIERS):
        path = formula.path
        return isinstance(path, TEMPORAL) and all(is_ctl(c) for c in path.children())
    if isinstance(formula, TEMPORAL):
        return False
    return all(is_ctl(child) for child in formula.children())


def _quantifier_free(formula: Formula) -> bool:
    return not isinstance(formula, QUANTIFIERS) and all(
        _quantifier_free(child) for child in formula.children())


def is_ltl(formula: Formula) -> bool:
    """One quantifier over a path formula with no quantifier inside."""
    return isinstance(formula, QUANTIFIERS) and _quantifier_free(formula.path)


def places_of(formula: Formula) -> set[str]:
    """The place names the formula's atoms read."""
    found: set[str] = set()
    for node in walk(formula):
        if isinstance(node, Compare):
            for side in (node.left, node.right):
                found.update(_numeric_places(side))
    return found


def transitions_of(formula: Formula) -> set[str]:
    """The transition names the formula's fireability atoms read."""
    return {name for node in walk(formula) if isinstance(node, Fireable)
            for name in node.transitions}


def _numeric_places(expression: Numeric) -> Iterator[str]:
    if isinstance(expression, Tokens):
        yield from expression.places
    elif isinstance(expression, Sum):
        for term in expression.terms:
            yield from _numeric_places(term)


def walk(formula: Formula) -> Iterator[Formula]:
    """The formula and all its sub-formulas, parents before children."""
    yield formula
    for child in formula.children():
        yield from walk(child)
