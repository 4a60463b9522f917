"""Multiset terms of symmetric nets as trees, and the exact count each value gets.

A symmetric net's multiset term (an arc inscription, an initial marking, the operand of
``cardinality`` or ``contains``) is a tree of ``add``, ``subtract``, ``numberof`` /
``scalarproduct`` over single terms. Flattened to ``(coefficient, term)`` pairs it is exact
only while every subtraction lies on the tree's left spine (``(a + b) - c - d``): a
multiset difference is truncated at zero, so ``a + (b - a)`` is ``a + b``, not ``b``, and
``a - (b - a)`` is ``a - b``, not ``2'a - b``. :func:`is_flat` says when the pairs are
exact; otherwise :func:`counted` gives each distinct term of the tree the count of its
value as an expression (``max(0, ...)`` where a subtraction truncates), the whole count to
the first term of that value. :func:`evaluate` gives a closed tree's multiset exactly.

>>> a, b = ast.Constant("a"), ast.Constant("b")
>>> tree = Multiset.add([Multiset.leaf(a), Multiset.subtract([Multiset.leaf(b),
...                                                          Multiset.leaf(a)])])
>>> is_flat(tree)
False
>>> sorted(evaluate(tree, lambda term: term.value).items())
[('a', 1), ('b', 1)]
>>> [(ast.unparse(term), count) for term, count in counted(tree)]
[("'a'", 1), ("'b'", 1)]
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Count", "Multiset", "cardinality", "count_of", "counted", "equal", "evaluate",
           "is_flat", "pairs"]

#: how many of a value: an int when it does not depend on the binding, else an expression
Count = int | ast.expr


@dataclass(frozen=True)
class Multiset:
    """One node: ``term`` (a single term, once), ``add``, ``subtract`` (the first part
    less the others) or ``scale`` (``factor`` times its one part)."""

    kind: str
    term: ast.expr | None = None
    parts: tuple[Multiset, ...] = ()
    factor: int = 1

    @staticmethod
    def leaf(term: ast.expr) -> Multiset:
        return Multiset("term", term=term)

    @staticmethod
    def add(parts: list[Multiset]) -> Multiset:
        return Multiset("add", parts=tuple(parts))

    @staticmethod
    def subtract(parts: list[Multiset]) -> Multiset:
        return Multiset("subtract", parts=tuple(parts))

    @staticmethod
    def scale(factor: int, part: Multiset) -> Multiset:
        return Multiset("scale", parts=(part,), factor=factor)


def _subtracts(tree: Multiset) -> bool:
    return tree.kind == "subtract" or any(_subtracts(p) for p in tree.parts)


def is_flat(tree: Multiset) -> bool:
    """Whether :func:`pairs` is exact: every subtraction on the left spine of the tree."""
    if tree.kind == "term":
        return True
    if tree.kind == "scale":
        return is_flat(tree.parts[0])
    if tree.kind == "subtract":
        return is_flat(tree.parts[0]) and not any(_subtracts(p) for p in tree.parts[1:])
    return not any(_subtracts(p) for p in tree.parts)


def pairs(tree: Multiset) -> list[tuple[int, ast.expr]]:
    """The tree as ``(coefficient, term)`` pairs, subtracted terms negative (exact when
    :func:`is_flat`)."""
    if tree.kind == "term":
        assert tree.term is not None
        return [(1, tree.term)]
    if tree.kind == "scale":
        return [(tree.factor * n, t) for n, t in pairs(tree.parts[0])]
    if tree.kind == "subtract":
        return pairs(tree.parts[0]) + [(-n, t) for part in tree.parts[1:]
                                       for n, t in pairs(part)]
    return [pair for part in tree.parts for pair in pairs(part)]


def evaluate(tree: Multiset, value_of: Callable[[ast.expr], Any]) -> Counter[Any]:
    """The multiset a closed tree denotes, ``value_of`` giving each term's value."""
    if tree.kind == "term":
        assert tree.term is not None
        return Counter({value_of(tree.term): 1})
    if tree.kind == "scale":
        inner = evaluate(tree.parts[0], value_of)
        return Counter({v: tree.factor * n for v, n in inner.items() if tree.factor * n > 0})
    if tree.kind == "subtract":
        total = evaluate(tree.parts[0], value_of)
        for part in tree.parts[1:]:
            total = total - evaluate(part, value_of)  # Counter's difference truncates at 0
        return total
    out: Counter[Any] = Counter()
    for part in tree.parts:
        out.update(evaluate(part, value_of))
    return out


def count_of(tree: Multiset, value: ast.expr) -> Count:
    """How many times the value of the term ``value`` is in the tree (binding-dependent
    equalities become ``1 if ... else 0``)."""
    if tree.kind == "term":
        assert tree.term is not None
        same = equal(tree.term, value)
        return int(same) if isinstance(same, bool) else ast.IfExp(same, ast.Constant(1),
                                                                  ast.Constant(0))
    counts = [count_of(part, value) for part in tree.parts]
    if tree.kind == "scale":
        return _times(tree.factor, counts[0])
    if tree.kind == "subtract":
        return _at_least_zero(_minus(counts[0], _sum(counts[1:])))
    return _sum(counts)


def _positive_terms(tree: Multiset) -> list[ast.expr]:
    """The terms a value of the tree may come from (none of a subtrahend's)."""
    if tree.kind == "term":
        assert tree.term is not None
        return [tree.term]
    if tree.kind == "subtract":
        return _positive_terms(tree.parts[0])
    return [t for part in tree.parts for t in _positive_terms(part)]


def counted(tree: Multiset) -> list[tuple[ast.expr, Count]]:
    """``(term, count)`` for each distinct term a value of the tree may come from: the
    count of its value in the tree, given to the first term of that value only (0 to a
    later term equal to an earlier one). Terms that cannot occur are left out."""
    distinct: dict[str, ast.expr] = {}
    for term in _positive_terms(tree):
        distinct.setdefault(ast.dump(term), term)
    terms = list(distinct.values())
    out: list[tuple[ast.expr, Count]] = []
    for i, term in enumerate(terms):
        count = count_of(tree, term)
        earlier = [equal(t, term) for t in terms[:i]]
        if any(e is True for e in earlier) or count == 0:
            continue
        tests = [e for e in earlier if not isinstance(e, bool)]
        if tests:
            seen = tests[0] if len(tests) == 1 else ast.BoolOp(ast.Or(), tests)
            count = ast.IfExp(seen, ast.Constant(0), _expr(count))
        out.append((term, count))
    return out


def cardinality(tree: Multiset) -> Count:
    """How many values (with repetition) the tree holds."""
    return _sum([count for _term, count in counted(tree)])


def equal(a: ast.expr, b: ast.expr) -> bool | ast.expr:
    """Whether two terms are equal: True, False, or the test when it depends on the binding."""
    if ast.dump(a) == ast.dump(b):
        return True
    if isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
        return bool(a.value == b.value)
    if isinstance(a, ast.Tuple) and isinstance(b, ast.Tuple):
        if len(a.elts) != len(b.elts):
            return False
        tests = []
        for x, y in zip(a.elts, b.elts, strict=True):
            same = equal(x, y)
            if same is False:
                return False
            if same is not True:
                tests.append(same)
        return True if not tests else (tests[0] if len(tests) == 1 else
                                       ast.BoolOp(ast.And(), tests))
    if isinstance(a, ast.Tuple | ast.Constant) and isinstance(b, ast.Tuple | ast.Constant):
        return False
    return ast.Compare(a, [ast.Eq()], [b])


# -- counts, folded where they are constant ---------------------------------------------------
def _expr(count: Count) -> ast.expr:
    return ast.Constant(count) if isinstance(count, int) else count


def _sum(counts: list[Count]) -> Count:
    constant = sum(c for c in counts if isinstance(c, int))
    parts = [c for c in counts if not isinstance(c, int)]
    if not parts:
        return constant
    total = parts[0]
    for part in parts[1:] + ([ast.Constant(constant)] if constant else []):
        total = ast.BinOp(total, ast.Add(), part)
    return total


def _minus(left: Count, right: Count) -> Count:
    if isinstance(left, int) and isinstance(right, int):
        return left - right
    if right == 0:
        return left
    return ast.BinOp(_expr(left), ast.Sub(), _expr(right))


def _times(factor: int, count: Count) -> Count:
    if isinstance(count, int):
        return factor * count
    return count if factor == 1 else ast.BinOp(ast.Constant(factor), ast.Mult(), count)


def _at_least_zero(count: Count) -> Count:
    if isinstance(count, int):
        return max(0, count)
    return ast.Call(ast.Name("max", ast.Load()), [ast.Constant(0), count], [])
