"""The places of a P/T net that stay empty forever, and the transitions that never fire.

A siphon is a set ``S`` of places such that every transition putting tokens into ``S``
needs a token from ``S`` (an input or read arc on a place of ``S``). A siphon empty in the
initial marking stays empty: no transition able to fill it can fire while it is empty.
:func:`empty_siphon` finds the largest such siphon among the initially empty places (a
fixpoint from the empty places, dropping each place some transition can fill without
needing ``S``), in time linear in the arcs: no state space, no dense matrix. Inhibitor
arcs only disable and reset arcs only empty, so neither can fill ``S``.

What follows without the state space, when a budget stops the search on a wide net:

* every place of the siphon holds 0 tokens in every reachable marking: StableMarking is
  TRUE, its place bounds are 0 (UpperBounds), and the state equation need not bound it;
* every transition needing a token from it is dead: QuasiLiveness and Liveness are FALSE;
* a formula whose atoms these settle may be settled (:func:`decided_by_siphon`).

>>> from tcpn.petrinets.statespace.ptspace import PTNet
>>> net = PTNet(("a", "b", "c"), ("t", "u"), pre=[[1, 0, 0], [0, 1, 0]],
...             post=[[0, 1, 0], [0, 0, 1]], test=[[0, 0, 0], [0, 0, 0]],
...             inhibit=[[0, 0, 0], [0, 0, 0]], reset=[[0, 0, 0], [0, 0, 0]],
...             initial=np.array([0, 0, 1]))
>>> empty = empty_siphon(net)
>>> [net.places[p] for p in np.flatnonzero(empty.places)]
['a', 'b']
>>> [net.transitions[t] for t in np.flatnonzero(empty.dead)]
['t', 'u']
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from tcpn.petrinets.checking.contest.folding import Constant, fold
from tcpn.petrinets.checking.formulas import (
    COMPARISONS,
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

__all__ = ["EmptySiphon", "decided_by_siphon", "empty_siphon", "siphon_constant"]


@dataclass(frozen=True)
class EmptySiphon:
    """``places``: a mask of the places empty in every reachable marking; ``dead``: a mask
    of the transitions that need a token from one of them (never enabled)."""

    places: np.ndarray
    dead: np.ndarray


def empty_siphon(net: PTNet) -> EmptySiphon:
    """The largest siphon of ``net`` that is empty in its initial marking (see the module)."""
    needs = (net.pre.maximum(net.test)).tocsr()  # transitions x places: a token needed
    needs_by_place = needs.tocsc()
    fills = net.post.tocsr()
    inside = np.asarray(net.initial) == 0
    # how many places of the current set each transition needs a token from
    waiting = np.asarray((needs > 0).astype(np.int64) @ inside.astype(np.int64),
                         dtype=np.int64)
    able = deque(np.flatnonzero(waiting == 0).tolist())
    while able:
        t = able.popleft()
        for p in fills.indices[fills.indptr[t]:fills.indptr[t + 1]].tolist():
            if not inside[p]:
                continue
            inside[p] = False  # t fills p without needing the set: p leaves it
            users = needs_by_place.indices[
                needs_by_place.indptr[p]:needs_by_place.indptr[p + 1]]
            waiting[users] -= 1
            able.extend(users[waiting[users] == 0].tolist())
    return EmptySiphon(inside, waiting > 0)


def decided_by_siphon(formula: Formula, net: PTNet, empty: EmptySiphon) -> bool | None:
    """The truth of ``formula`` in the initial state when the siphon alone settles it, else
    None: token counts of its places are 0, its dead transitions are never fireable, and
    what is then constant folds (:func:`~tcpn.petrinets.checking.contest.folding.fold`).

    >>> from tcpn.petrinets.checking.formulas import Compare, Const, E, F, Tokens
    >>> net = PTNet(("a", "b"), ("t",), pre=[[1, 0]], post=[[0, 1]], test=[[0, 0]],
    ...             inhibit=[[0, 0]], reset=[[0, 0]], initial=np.array([0, 0]))
    >>> decided_by_siphon(E(F(Compare(">=", Tokens(("b",)), Const(1)))), net,
    ...                   empty_siphon(net))
    False
    """
    folded = fold(formula, siphon_constant(net, empty))
    return folded.value if isinstance(folded, Bool) else None


def siphon_constant(net: PTNet, empty: EmptySiphon) -> Constant:
    """The oracle of :func:`~tcpn.petrinets.checking.contest.folding.fold` the siphon
    gives: a quantifier-free formula is constant when its value, with the siphon's token
    counts 0 and its dead transitions never fireable, does not depend on anything else."""
    places = {p for p, inside in zip(net.places, empty.places, strict=True) if inside}
    dead = {t for t, never in zip(net.transitions, empty.dead, strict=True) if never}

    def constant(formula: Formula) -> bool | None:
        return _settle(formula, places, dead)

    return constant


def _number(term: Numeric, places: set[str]) -> Numeric:
    if isinstance(term, Tokens) and term.value is None and set(term.places) <= places:
        return Const(0)
    if isinstance(term, Sum):
        parts = [_number(t, places) for t in term.terms]
        if all(isinstance(p, Const) for p in parts):
            return Const(sum(p.value for p in parts if isinstance(p, Const)))
    return term


def _settle(formula: Formula, places: set[str], dead: set[str]) -> bool | None:
    """The value of a quantifier-free formula the siphon settles, or None."""
    if isinstance(formula, Bool):
        return formula.value
    if isinstance(formula, Fireable):
        return False if set(formula.transitions) <= dead else None
    if isinstance(formula, Compare):
        left, right = _number(formula.left, places), _number(formula.right, places)
        if isinstance(left, Const) and isinstance(right, Const):
            return bool(COMPARISONS[formula.op](left.value, right.value))
        return None
    if isinstance(formula, Not):
        inner = _settle(formula.operand, places, dead)
        return None if inner is None else not inner
    if isinstance(formula, And | Or):
        parts = [_settle(p, places, dead) for p in formula.operands]
        absorbing = isinstance(formula, Or)
        if absorbing in parts:
            return absorbing
        return (not absorbing) if None not in parts else None
    return None
