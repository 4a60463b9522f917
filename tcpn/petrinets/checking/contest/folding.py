"""A formula simplified by what is constant over the reachable markings of its net.

Every state a CTL or LTL formula is evaluated in lies on a path from the initial marking,
so it is reachable. A state formula without path quantifiers that holds in every
reachable marking (or in none) can therefore be replaced by ``true`` (``false``)
wherever it stands, and what is then constant folds: ``F c``, ``G c``, ``A c``, ``E c``
are ``c`` on every path, finite or not; ``a U true`` is true and ``a U false`` false,
``false U b`` is ``b``; ``R`` and ``W`` alike. ``X`` is left alone: ``EX true`` is
false at a dead marking in CTL (maximal paths), true in LTL (a dead marking repeats), so
its meaning there is the checker's, not this module's. Timed operators are left alone.

Which sub-formulas are constant is told by an oracle, ``constant(p) -> bool | None``,
asked about each quantifier-free sub-formula, the largest first: the empty siphon
(:func:`~tcpn.petrinets.checking.contest.siphons.siphon_constant`), the state equation
(:func:`~tcpn.petrinets.checking.contest.unreachable.StateEquation.constant`), or
both (:func:`first_known`). This is TAPAAL's query simplification (Bønneland et al.,
*Simplification of CTL formulae for efficient model checking of Petri nets*, Petri
Nets 2018) restricted to what is sound for any temporal operator.

>>> from tcpn.petrinets.checking.formulas import A, F, G, Or, tokens
>>> fold(A(G(Or((tokens("a") >= 1, tokens("b") <= 2)))),
...      lambda p: True if p == (tokens("b") <= 2) else None)
Bool(value=True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tcpn.petrinets.checking.formulas import (
    QUANTIFIERS,
    TEMPORAL,
    And,
    Bool,
    F,
    Formula,
    G,
    Not,
    Or,
    R,
    U,
    W,
    walk,
)

__all__ = ["Constant", "first_known", "fold"]

#: Whether a quantifier-free state formula holds in every reachable marking (True), in
#: none (False), or neither is known (None).
Constant = Callable[[Formula], "bool | None"]


def first_known(*oracles: Constant) -> Constant:
    """The first of ``oracles`` that knows (they are asked in order: cheap ones first)."""
    def constant(formula: Formula) -> bool | None:
        for oracle in oracles:
            value = oracle(formula)
            if value is not None:
                return value
        return None
    return constant


def fold(formula: Formula, constant: Constant) -> Formula:
    """``formula`` with what ``constant`` settles replaced and folded (see the module);
    a :class:`Bool` when the whole formula is settled."""
    if _quantifier_free(formula) and not isinstance(formula, Bool):
        value = constant(formula)
        if value is not None:
            return Bool(value)
    if isinstance(formula, Not):
        inner = fold(formula.operand, constant)
        return Bool(not inner.value) if isinstance(inner, Bool) else Not(inner)
    if isinstance(formula, And | Or):
        return _junction(formula, [fold(p, constant) for p in formula.operands])
    if isinstance(formula, (*QUANTIFIERS, F, G)):
        inner = fold(formula.children()[0], constant)
        if isinstance(inner, Bool):
            return inner
        return replace(formula, path=inner) if isinstance(formula, QUANTIFIERS) else \
            replace(formula, operand=inner)
    if isinstance(formula, U | R | W):
        return _binary(formula, fold(formula.left, constant), fold(formula.right, constant))
    children = formula.children()
    if not children or isinstance(formula, Bool):
        return formula
    folded = tuple(fold(c, constant) for c in children)  # X, timed operators: kept
    field = next(f for f in ("operand", "path") if hasattr(formula, f))
    return replace(formula, **{field: folded[0]})  # type: ignore[type-var]


def _junction(formula: And | Or, parts: list[Formula]) -> Formula:
    absorbing = isinstance(formula, Or)  # true absorbs a disjunction, false a conjunction
    if any(isinstance(p, Bool) and p.value == absorbing for p in parts):
        return Bool(absorbing)
    kept = tuple(p for p in parts if not isinstance(p, Bool))
    if not kept:
        return Bool(not absorbing)
    return kept[0] if len(kept) == 1 else type(formula)(kept)


def _binary(formula: U | R | W, left: Formula, right: Formula) -> Formula:
    """``left U right`` (``R``, ``W``) with constant operands folded."""
    if isinstance(formula, U):
        if isinstance(right, Bool):
            return right  # true now, or never true: the until can never be met
        if isinstance(left, Bool):
            return F(right) if left.value else right
    elif isinstance(formula, R):  # r holds until and including the first l (or forever)
        if isinstance(right, Bool):
            return right
        if isinstance(left, Bool):
            return right if left.value else G(right)
    else:  # W: l U r, or l forever
        if (isinstance(right, Bool) and right.value) or (isinstance(left, Bool) and left.value):
            return Bool(True)
        if isinstance(right, Bool):
            return G(left)
        if isinstance(left, Bool):
            return right
    return replace(formula, left=left, right=right)


def _quantifier_free(formula: Formula) -> bool:
    """A state formula without path quantifiers or temporal operators."""
    return not any(isinstance(n, QUANTIFIERS + TEMPORAL) for n in walk(formula))
