"""CTL and state formulas on a whole state space at once, as NumPy boolean arrays.

On an explored state space (:class:`~tcpn.petrinets.statespace.ptspace.PTStateSpace`), an
atom is one vector operation over the marking matrix (:func:`state_mask`), and every CTL
operator a fixpoint over arrays (:func:`ctl_mask`), the same ones
:mod:`tcpn.petrinets.checking.ctl` uses (the graph kernel,
:class:`~tcpn.petrinets.statespace.graph.StateGraph`): ``EX`` gathers successors, ``EU`` is
one search backwards from the goal, ``EG`` the states where its operand holds pruned of
those with no successor left (:mod:`~tcpn.petrinets.statespace.fixpoints`); the ``A``
forms are their duals.

Dead markings (the Model Checking Contest's convention for CTL, which its oracle answers
confirm): paths are *maximal*, so a path may end in a dead marking. ``EX p`` needs a
firing and is false at a dead marking (``AX p`` true there); ``EG p`` holds at a dead
marking where ``p`` does (the path that stops there satisfies ``G p``), and ``U``, ``F``
read the finite path as it is. (LTL, :mod:`tcpn.petrinets.checking.ltl`, reads a dead marking as
repeating forever, so there ``X p`` means ``p``: the contest's LTL answers follow that.)

Other state spaces (:class:`~tcpn.petrinets.statespace.space.StateSpace`) get the same answers,
their atoms evaluated state by state.

>>> from tcpn.petrinets.examples import dining_philosophers
>>> from tcpn.petrinets.statespace.ptspace import explore_pt, pt_net
>>> from tcpn.petrinets.checking.formulas import AG, EF, fireable, Deadlock
>>> space = explore_pt(pt_net(dining_philosophers(3)))
>>> bool(ctl_mask(EF(Deadlock()), space)[0]), bool(ctl_mask(AG(~Deadlock()), space)[0])
(False, True)
"""

from __future__ import annotations

import time as wallclock

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.checking.ctl import negate_path
from tcpn.petrinets.checking.formulas import (
    COMPARISONS,
    A,
    And,
    Bool,
    Compare,
    Const,
    Deadlock,
    E,
    F,
    Fireable,
    Formula,
    G,
    Not,
    Numeric,
    Or,
    R,
    Sum,
    Tokens,
    U,
    W,
    X,
)
from tcpn.petrinets.statespace.graph import StateGraph, state_graph
from tcpn.petrinets.statespace.memory import MemoryBudget
from tcpn.petrinets.statespace.protocol import AnyStateSpace
from tcpn.petrinets.statespace.ptspace import PTStateSpace

__all__ = ["BudgetReached", "ctl_mask", "edge_arrays", "graph_of", "numeric_values", "on_time",
           "state_mask"]

#: Bytes per edge the CTL edge arrays hold (source, target, reversed source: int32) with
#: room for what a fixpoint makes while it runs (a component search's arrays), checked
#: against the memory budget before building.
EDGE_ARRAY_BYTES = 24


class BudgetReached(Exception):
    """A CTL fixpoint passed its deadline, or its edge arrays would pass the memory
    budget (the answer is unknown; the message names the budget)."""


def on_time(deadline: float | None) -> None:
    """:class:`BudgetReached` once ``deadline`` (a :func:`time.perf_counter` value) is
    past."""
    if deadline is not None and wallclock.perf_counter() > deadline:
        raise BudgetReached("time budget reached")



def numeric_values(expression: Numeric, space: AnyStateSpace) -> np.ndarray:
    """The value of a numeric expression in every state."""
    if isinstance(expression, Const):
        return np.full(len(space), expression.value)
    if isinstance(expression, Sum):
        return np.sum([numeric_values(t, space) for t in expression.terms], axis=0)
    if isinstance(expression, Tokens) and isinstance(space, PTStateSpace):
        if expression.value not in (None, ()):
            raise InputError(f"{expression!r}: a P/T net's tokens have no colour")
        return space.tokens(expression.places)
    if isinstance(space, PTStateSpace):  # the clock: a P/T space has none
        raise InputError(f"{expression!r}: a P/T net's states have no clock")
    from tcpn.petrinets.checking.atoms import numeric
    return numeric(space, expression)


def edge_arrays(space: AnyStateSpace) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """The edges of a state space as arrays: ``(indptr, targets, labels, names)``, state
    ``s``'s edges being ``indptr[s]:indptr[s + 1]``, ``labels`` indexing ``names``."""
    if isinstance(space, PTStateSpace):
        return space.indptr, space.targets, space.labels, space.net.transitions
    from tcpn.petrinets.checking.atoms import edge_transitions
    names = tuple(t.name for t in space.compiled.transitions)
    return (np.asarray(space.edge_start, dtype=np.int64),
            np.asarray(space.edge_dst, dtype=np.int64), edge_transitions(space), names)


def state_mask(formula: Formula, space: AnyStateSpace,
               deadline: float | None = None) -> np.ndarray:
    """Where a temporal-free state formula holds, one boolean per state;
    :class:`BudgetReached` once ``deadline`` (a :func:`time.perf_counter` value) is past,
    read before each sub-formula (an atom over millions of states takes a while)."""
    on_time(deadline)
    n = len(space)
    if isinstance(formula, Bool):
        return np.full(n, formula.value)
    if isinstance(formula, Not):
        return ~state_mask(formula.operand, space, deadline)
    if isinstance(formula, And):
        return np.logical_and.reduce([state_mask(o, space, deadline)
                                      for o in formula.operands])
    if isinstance(formula, Or):
        return np.logical_or.reduce([state_mask(o, space, deadline)
                                     for o in formula.operands])
    if isinstance(formula, A | E):
        return ctl_mask(formula, space)
    if not isinstance(space, PTStateSpace):
        from tcpn.petrinets.checking.atoms import truth
        return truth(space, formula)
    if isinstance(formula, Compare):
        return np.asarray(COMPARISONS[formula.op](numeric_values(formula.left, space),
                                               numeric_values(formula.right, space)))
    if isinstance(formula, Fireable):
        return space.enabled(formula.transitions)
    if isinstance(formula, Deadlock):
        dead = space.out_degree() == 0
        if space.n_expanded < len(space):  # a budget's frontier: no edges known there
            dead[space.n_expanded:] = ~space.enabled(space.net.transitions)[space.n_expanded:]
        return dead
    raise InputError(f"{type(formula).__name__} is not a state formula")


def graph_of(space: AnyStateSpace, budget: MemoryBudget) -> StateGraph:
    """The (cached) :class:`~tcpn.petrinets.statespace.graph.StateGraph` of any state space;
    for a P/T space, :class:`BudgetReached` first if its edge arrays would pass ``budget``."""
    if not isinstance(space, PTStateSpace):
        return state_graph(space)

    def fits(n_edges: int) -> None:
        if budget.exceeded(EDGE_ARRAY_BYTES * n_edges):
            raise BudgetReached(budget.reason() + f" (the edge arrays of {n_edges} "
                                "edges would not fit)")

    return state_graph(space, fits)


def ctl_mask(formula: Formula, space: AnyStateSpace, deadline: float | None = None,
             max_memory_bytes: int | None = None) -> np.ndarray:
    """Where a CTL state formula holds, one boolean per state of a complete space.

    Raises :class:`~tcpn.errors.InputError` for a formula outside CTL (a quantifier over
    anything but one temporal operator over state formulas), and
    :class:`BudgetReached` when a fixpoint's step starts after ``deadline`` (a
    :func:`time.perf_counter` reading) or the edge arrays would pass ``max_memory_bytes``
    of resident memory (None: :meth:`~tcpn.petrinets.statespace.memory.MemoryBudget.default`).
    """
    if not getattr(space, "complete", True):
        raise InputError("CTL needs the complete state space: " +
                         (getattr(space, "reason", "") or "budget reached"))
    return _Checker(space, deadline, MemoryBudget.of(max_memory_bytes)).mask(formula)


class _Checker:
    def __init__(self, space: AnyStateSpace, deadline: float | None, budget: MemoryBudget):
        self.space = space
        self.graph = graph_of(space, budget)
        self.cache: dict[Formula, np.ndarray] = {}
        self.deadline = deadline

    def mask(self, formula: Formula) -> np.ndarray:
        if formula in self.cache:
            return self.cache[formula]
        if isinstance(formula, A | E):
            result = self.quantified(formula)
        elif isinstance(formula, Not):
            result = ~self.mask(formula.operand)
        elif isinstance(formula, And):
            result = np.logical_and.reduce([self.mask(o) for o in formula.operands])
        elif isinstance(formula, Or):
            result = np.logical_or.reduce([self.mask(o) for o in formula.operands])
        else:
            result = state_mask(formula, self.space)
        self.cache[formula] = result
        return result

    def quantified(self, formula: A | E) -> np.ndarray:
        path = formula.path
        if isinstance(formula, A):
            return ~self.exists(negate_path(path))
        return self.exists(path)

    def exists(self, path: Formula) -> np.ndarray:
        """Where some path satisfies ``path`` (one temporal operator over state formulas,
        or a negated one)."""
        g = self.graph
        if isinstance(path, Not):
            return self.exists(negate_path(path.operand))
        if isinstance(path, X):
            return g.pre_exists(self.mask(path.operand))
        # each fixpoint below is one pass over the edges (a breadth-first search, the
        # strongly connected components): the deadline is read before each
        if isinstance(path, F):
            operand = self.mask(path.operand)
            on_time(self.deadline)
            return g.backward(operand, np.ones(g.n, dtype=bool))
        if isinstance(path, G):
            operand = self.mask(path.operand)
            on_time(self.deadline)
            return g.globally(operand)
        if not isinstance(path, U | W | R):
            raise InputError(f"not CTL: a path quantifier over {type(path).__name__}")
        left, right = self.mask(path.left), self.mask(path.right)
        on_time(self.deadline)
        if isinstance(path, U):
            return g.backward(right, left)
        if isinstance(path, W):
            return g.backward(right, left) | g.globally(left)
        # E(a R b) == E(b U (a & b)) | EG b
        return g.backward(left & right, right) | g.globally(right)
