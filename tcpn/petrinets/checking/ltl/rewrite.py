"""LTL rewriting: standard rules that shrink a formula in negation normal form before it is
translated to a Büchi automaton.

The rules are those of Etessami and Holzmann ("Optimizing Büchi automata", CONCUR 2000)
and Somenzi and Bloem ("Efficient Büchi automata from LTL formulae", CAV 2000), as Spot
applies them in its basic reductions; each preserves the set of infinite paths a formula
accepts (every path is infinite here: a dead marking repeats). The input is in negation
normal form over ``X``, ``U`` and ``R`` (``F a`` is ``true U a``, ``G a`` is
``false R a``), temporal-free sub-formulas being propositions (:func:`ltl._nnf` makes it).

*Eventual* formulas ("pure eventualities", kept true when a prefix is added: ``F a``,
``G F a``) and *universal* ones (kept true on every suffix: ``G a``, ``F G a``) are
recognised syntactically; then ``F e = e``, ``a U e = e``, ``G u = u``, ``a R u = u``, and
``X s = s`` for a formula both eventual and universal.

>>> from tcpn.petrinets.checking.formulas import Bool, R, U, X, tokens
>>> p, q = tokens("p") >= 1, tokens("q") >= 1
>>> simplify(U(Bool(True), U(p, q))) == U(Bool(True), q)           # F(p U q) = F q
True
>>> G, F = (lambda a: R(Bool(False), a)), (lambda a: U(Bool(True), a))
>>> simplify(G(X(G(F(p))))) == G(F(p))                               # G X G F p = G F p
True
"""

from __future__ import annotations

from tcpn.petrinets.checking.formulas import And, Bool, Formula, Not, Or, R, U, X

__all__ = ["eventual", "simplify", "universal"]

TRUE, FALSE = Bool(True), Bool(False)


def _is_f(formula: Formula) -> bool:
    return isinstance(formula, U) and formula.left == TRUE


def _is_g(formula: Formula) -> bool:
    return isinstance(formula, R) and formula.left == FALSE


def eventual(formula: Formula) -> bool:
    """A pure eventuality: a path satisfies it iff the path with any prefix added does."""
    if isinstance(formula, Bool) or _is_f(formula):
        return True
    if isinstance(formula, U | R):
        return eventual(formula.left) and eventual(formula.right)
    if isinstance(formula, X):
        return eventual(formula.operand)
    if isinstance(formula, And | Or):
        return all(eventual(o) for o in formula.operands)
    return False


def universal(formula: Formula) -> bool:
    """Purely universal: a path satisfies it only if every suffix of the path does."""
    if isinstance(formula, Bool) or _is_g(formula):
        return True
    if isinstance(formula, U | R):
        return universal(formula.left) and universal(formula.right)
    if isinstance(formula, X):
        return universal(formula.operand)
    if isinstance(formula, And | Or):
        return all(universal(o) for o in formula.operands)
    return False


def _temporal(formula: Formula) -> bool:
    return isinstance(formula, U | R | X) or any(_temporal(c) for c in formula.children())


def _complement(literal: Formula) -> Formula:
    return literal.operand if isinstance(literal, Not) else Not(literal)


def simplify(formula: Formula) -> Formula:
    """The formula rewritten bottom-up until no rule applies (see the module docstring)."""
    if not _temporal(formula):
        return formula
    while True:
        rewritten = _rewrite(formula)
        if rewritten == formula:
            return formula
        formula = rewritten


def _rewrite(formula: Formula) -> Formula:
    if not _temporal(formula):
        return formula
    if isinstance(formula, X):
        return _next(simplify(formula.operand))
    if isinstance(formula, U):
        return _until(simplify(formula.left), simplify(formula.right))
    if isinstance(formula, R):
        return _release(simplify(formula.left), simplify(formula.right))
    if isinstance(formula, And | Or):
        return _junction(type(formula), [simplify(o) for o in formula.operands])
    return formula


def _next(operand: Formula) -> Formula:
    if isinstance(operand, Bool) or (eventual(operand) and universal(operand)):
        return operand
    return X(operand)


def _until(left: Formula, right: Formula) -> Formula:
    if isinstance(right, Bool) or left in (FALSE, right) or eventual(right):
        return right                                    # a U e = e, false U b = b
    if left == TRUE:
        if isinstance(right, U):                        # F(a U b) = F b
            return _until(TRUE, right.right)
        if isinstance(right, X):                        # F X a = X F a
            return _next(_until(TRUE, right.operand))
    if isinstance(left, X) and isinstance(right, X):    # X a U X b = X(a U b)
        return _next(_until(left.operand, right.operand))
    return U(left, right)


def _release(left: Formula, right: Formula) -> Formula:
    if isinstance(right, Bool) or left in (TRUE, right) or universal(right):
        return right                                    # a R u = u, true R b = b
    if left == FALSE:
        if isinstance(right, R):                        # G(a R b) = G b
            return _release(FALSE, right.right)
        if isinstance(right, X):                        # G X a = X G a
            return _next(_release(FALSE, right.operand))
    if isinstance(left, X) and isinstance(right, X):    # X a R X b = X(a R b)
        return _next(_release(left.operand, right.operand))
    return R(left, right)


def _junction(kind: type[And] | type[Or], operands: list[Formula]) -> Formula:
    """A conjunction or disjunction flattened, deduplicated, with constants folded and
    operands sharing an operator merged: ``X a & X b = X(a & b)``, ``G a & G b =
    G(a & b)``, ``(a U c) & (b U c) = (a & b) U c``, ``(a R b) & (a R c) = a R (b & c)``
    (and the duals for ``|``)."""
    unit, zero = (TRUE, FALSE) if kind is And else (FALSE, TRUE)
    flat: list[Formula] = []
    for operand in operands:
        for part in (operand.operands if isinstance(operand, kind) else (operand,)):
            if part == zero:
                return zero
            if part != unit and part not in flat:
                flat.append(part)
    if any(_complement(p) in flat for p in flat if not _temporal(p)):
        return zero
    groups: dict[tuple[str, Formula | None], list[Formula]] = {}
    order: list[Formula | tuple[str, Formula | None]] = []
    for part in flat:
        key = _merge_key(kind, part)
        if key is None:
            order.append(part)
        else:
            if key not in groups:
                order.append(key)
            groups.setdefault(key, []).append(part)
    if all(len(group) == 1 for group in groups.values()):
        return flat[0] if len(flat) == 1 else kind(tuple(flat))
    out = [_merge(kind, item, groups[item]) if isinstance(item, tuple) else item
           for item in order]
    return simplify(out[0] if len(out) == 1 else kind(tuple(out)))


def _merge_key(kind: type[And] | type[Or], part: Formula) -> tuple[str, Formula | None] | None:
    """Which operands of a ``kind`` junction merge with ``part`` (None: no rule)."""
    if isinstance(part, X):
        return ("X", None)
    if kind is And:
        if isinstance(part, U):
            return ("U", part.right)        # (a U c) & (b U c) = (a & b) U c
        if isinstance(part, R):
            return ("R", part.left)         # (a R b) & (a R c) = a R (b & c)
    else:
        if isinstance(part, U):
            return ("U", part.left)         # (a U b) | (a U c) = a U (b | c)
        if isinstance(part, R):
            return ("R", part.right)        # (a R c) | (b R c) = (a | b) R c
    return None


def _merge(kind: type[And] | type[Or], key: tuple[str, Formula | None],
           parts: list[Formula]) -> Formula:
    if len(parts) == 1:
        return parts[0]
    if key[0] == "X":
        return X(kind(tuple(p.operand for p in parts)))  # type: ignore[attr-defined]
    shared = key[1]
    assert shared is not None
    binary = [p for p in parts if isinstance(p, U | R)]
    others = kind(tuple(p.left if (key[0] == "U") == (kind is And) else p.right
                        for p in binary))
    if key[0] == "U":
        return U(others, shared) if kind is And else U(shared, others)
    return R(shared, others) if kind is And else R(others, shared)
