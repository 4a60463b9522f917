"""One symmetric-net transition's arcs and guard in tcpn's net language.

tcpn binds variables by matching *patterns* on input arcs (a variable, a constant, a
tuple of them); PNML terms are more general. :class:`TransitionArcs` takes a
transition's guard and its arcs' multisets (from
:class:`~tcpn.petrinets.exchange.pnml.symmetric.SymmetricTerms`) and returns tcpn arcs
with the same bindings, hence the same state space:

* equal terms of one arc are added up, a term and its subtraction cancel;
* a term that remains subtracted gives computed counts (``max(0, ...)``, 0 when taken
  away), decided at read time where the equality holds or fails whatever the binding;
* an input term such as ``(x--1, y)`` that must bind ``y`` becomes a pattern with a fresh
  variable, ``(pred_x, y)``, and the guard checks ``pred_x == _pred_S[x]``;
* pattern arcs come first, so every other arc reads bound variables;
* a variable no input arc binds is a free variable of the transition.

>>> import ast
>>> sorted(_names(ast.parse("(_pred_P[x], y)", mode="eval").body))
['_pred_P', 'x', 'y']
>>> terms = [(1, ast.Constant("a")), (1, ast.Constant("b")), (-1, ast.Name("s"))]
>>> for term, count in _counted(terms):  # all - s, with all = a + b
...     print(ast.unparse(term), ast.unparse(count))
'a' max(0, 1 - max(0, 1 if s == 'a' else 0))
'b' max(0, 1 - max(0, 1 if s == 'b' else 0))
"""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from typing import Any

from tcpn.petrinets.colours import ColourSet
from tcpn.petrinets.exchange.pnml.multiset import Count, Multiset, counted, equal, is_flat, pairs
from tcpn.petrinets.exchange.pnml.symmetric import SymmetricTerms, Terms
from tcpn.petrinets.inscriptions import is_pattern_tree
from tcpn.petrinets.net import Arc, ArcKind

__all__ = ["TransitionArcs"]


class TransitionArcs:
    """The arcs and guard of one symmetric-net transition in tcpn's net language.

    tcpn binds variables by matching *patterns* (a variable, a constant, a tuple of them)
    on input arcs. A PNML input term such as ``(i--1, y)`` is not a pattern; when it must
    bind ``y``, its expression part becomes a fresh variable checked by the guard
    (``(pred_i, y)`` and ``pred_i == _pred_P[i]``): the same bindings, so the same state
    space. Terms subtracted from an arc (``all - x``) become computed counts, 0 when the
    term is taken away. Variables no input arc binds are the transition's free variables
    (one binding per member of their sort).
    """

    def __init__(self, terms: SymmetricTerms, guard: ast.expr | None):
        self.terms = terms
        self.conjuncts: list[ast.expr] = [] if guard is None else [guard]
        self.arcs_in: list[tuple[ET.Element, str, ArcKind, list[tuple[ast.expr, Count]]]] = []
        self.guard: str | None = None  # set by arcs(), which may add conjuncts
        self.free: dict[str, ColourSet] = {}  # set by arcs(): variables no input arc binds

    def add(self, element: ET.Element, place: str, kind: ArcKind, terms: Multiset) -> None:
        """An arc's multiset: as pairs where they are exact, else each value counted where
        its differences are (:func:`~tcpn.petrinets.exchange.pnml.multiset.counted`)."""
        counts = _counted(_merged(pairs(terms))) if is_flat(terms) else counted(terms)
        self.arcs_in.append((element, place, kind, counts))

    def arcs(self, transition: str, fail: Any, element: ET.Element
             ) -> list[tuple[ET.Element, Arc]]:
        pending: list[list[Any]] = []  # [element, place, kind, term, count]
        for arc_element, place, kind, terms in self.arcs_in:
            for term, count in terms:
                pending.append([arc_element, place, kind, term, count])
        candidates = [i for i in pending if i[2] is not ArcKind.OUTPUT and isinstance(i[4], int)]
        bound: set[str] = set()
        binders: list[list[Any]] = []
        while True:
            # patterns bind first; an expression inside a tuple becomes a fresh variable
            # only when nothing else binds the tuple's variables
            fresh = [i for i in candidates if i not in binders and is_pattern_tree(i[3])
                     and _names(i[3]) - bound]
            if not fresh:
                fresh = [i for i in candidates if i not in binders
                         and isinstance(i[3], ast.Tuple) and _pattern_names(i[3]) - bound][:1]
                for item in fresh:
                    item[3] = self._patternize(item[3])
            if not fresh:
                break
            item = fresh[0]
            binders.append(item)
            bound |= _names(item[3])
        guard = ast.BoolOp(ast.And(), self.conjuncts) if len(self.conjuncts) > 1 else (
            self.conjuncts[0] if self.conjuncts else None)
        used = set().union(*(_names(i[3]) for i in pending)) | (_names(guard) if guard else
                                                                set())
        for item in pending:
            if isinstance(item[4], ast.expr):
                used |= _names(item[4])
        sorts = {name: sort for name, sort in self.terms.variables.values()}
        for name in sorted(used - bound - set(self.terms.declarations)):
            if name not in sorts:
                raise fail(element, f"transition {transition}: {name!r} is no variable")
            self.free[name] = sorts[name]
        self.guard = None if guard is None else ast.unparse(guard)
        ordered = binders + [i for i in pending if i not in binders]
        out = []
        for arc_element, place, kind, term, count in ordered:
            count_value = count if isinstance(count, int) else ast.unparse(count)
            out.append((arc_element, Arc(kind, place, transition, ast.unparse(term),
                                         count_value)))
        return out

    def _patternize(self, tree: ast.expr) -> ast.expr:
        """``tree`` with every non-pattern part replaced by a fresh variable the guard checks."""
        if is_pattern_tree(tree):
            return tree
        if isinstance(tree, ast.Tuple):
            return ast.Tuple([self._patternize(e) for e in tree.elts], ast.Load())
        hint = "_".join(n.id.lstrip("_") for n in ast.walk(tree) if isinstance(n, ast.Name))
        fresh = self.terms.fresh_variable(hint)
        self.conjuncts.append(ast.Compare(ast.Name(fresh, ast.Load()), [ast.Eq()], [tree]))
        return ast.Name(fresh, ast.Load())


def _merged(terms: Terms) -> Terms:
    """Equal terms added up (a term and its subtraction cancel); zero coefficients dropped."""
    total: dict[str, list[Any]] = {}
    for n, tree in terms:
        key = ast.dump(tree)
        if key in total:
            total[key][0] += n
        else:
            total[key] = [n, tree]
    return [(n, tree) for n, tree in total.values() if n]


def _counted(terms: Terms) -> list[tuple[ast.expr, int | ast.expr]]:
    """``(term, count)`` for each positive term: an int, or with subtracted terms an expression.

    A multiset difference keeps, for a value ``v``, ``max(0, added(v) - subtracted(v))``.
    Term ``i`` is given what is left of it once earlier equal terms took their share of
    the subtraction: ``max(0, c_i - max(0, D_i - A_i))``, with ``D_i`` the subtracted
    coefficients of the terms equal to it and ``A_i`` those of the earlier equal added
    terms. Equalities that hold or fail whatever the binding are decided here.
    """
    added = [(n, t) for n, t in terms if n > 0]
    taken = [(-n, t) for n, t in terms if n < 0]
    out: list[tuple[ast.expr, int | ast.expr]] = []
    for i, (count, term) in enumerate(added):
        subtracted = _weighted([(d, equal(u, term)) for d, u in taken])
        if subtracted is None:
            out.append((term, count))
            continue
        before = _weighted([(c, equal(t, term)) for c, t in added[:i]])
        if isinstance(subtracted, int) and not isinstance(before, ast.expr):
            left_over = count - max(0, subtracted - (before or 0))
            if left_over > 0:
                out.append((term, left_over))
            continue
        subtracted_expr = _as_expr(subtracted)
        if before is not None:
            subtracted_expr = ast.BinOp(subtracted_expr, ast.Sub(), _as_expr(before))
        left = ast.Call(ast.Name("max", ast.Load()), [ast.Constant(0), subtracted_expr], [])
        out.append((term, ast.Call(ast.Name("max", ast.Load()), [
            ast.Constant(0), ast.BinOp(ast.Constant(count), ast.Sub(), left)], [])))
    return out


def _as_expr(value: int | ast.expr) -> ast.expr:
    return ast.Constant(value) if isinstance(value, int) else value


def _weighted(items: list[tuple[int, bool | ast.expr]]) -> int | ast.expr | None:
    """``sum(n if condition)``: None when every condition is false, an int when all hold."""
    constant, parts = 0, []
    for n, condition in items:
        if condition is True:
            constant += n
        elif condition is not False:
            parts.append(ast.IfExp(condition, ast.Constant(n), ast.Constant(0)))
    if not parts:
        return constant if constant or any(c is True for _, c in items) else None
    total: ast.expr = parts[0]
    for part in parts[1:] + ([ast.Constant(constant)] if constant else []):
        total = ast.BinOp(total, ast.Add(), part)
    return total


def _names(tree: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - {"max"}


def _pattern_names(tree: ast.expr) -> set[str]:
    """The variables in pattern positions of a tuple (not inside expressions)."""
    if isinstance(tree, ast.Name):
        return {tree.id}
    if isinstance(tree, ast.Tuple):
        return set().union(*(_pattern_names(e) for e in tree.elts))
    return set()
