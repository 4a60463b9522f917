"""CTL and state formulas on a whole state space at once, as NumPy boolean arrays.

On an explored state space (:class:`~tcpn.petrinets.ptspace.PTStateSpace`), an atom is one
vector operation over the marking matrix (:func:`state_mask`), and every CTL operator a
fixpoint over arrays (:func:`ctl_mask`): ``EX`` gathers successors, ``EU`` grows the
satisfying set backwards breadth-first from the goal, ``EG`` removes states whose
successors all left the set (counting them), the ``A`` forms are their duals.

Dead markings (the Model Checking Contest's convention for CTL, which its oracle answers
confirm): paths are *maximal*, so a path may end in a dead marking. ``EX p`` needs a
firing and is false at a dead marking (``AX p`` true there); ``EG p`` holds at a dead
marking where ``p`` does (the path that stops there satisfies ``G p``), and ``U``, ``F``
read the finite path as it is. (LTL, :mod:`tcpn.petrinets.ltl`, reads a dead marking as
repeating forever, so there ``X p`` means ``p``: the contest's LTL answers follow that.)

Other state spaces (:class:`~tcpn.petrinets.statespace.StateSpace`) get the same answers,
their atoms evaluated state by state.

>>> from tcpn.petrinets.examples import dining_philosophers
>>> from tcpn.petrinets.ptspace import explore_pt, pt_net
>>> from tcpn.petrinets.formulas import AG, EF, fireable, Deadlock
>>> space = explore_pt(pt_net(dining_philosophers(3)))
>>> bool(ctl_mask(EF(Deadlock()), space)[0]), bool(ctl_mask(AG(~Deadlock()), space)[0])
(False, True)
"""

from __future__ import annotations

import time as wallclock
import weakref
from typing import Any

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.formulas import (
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
from tcpn.petrinets.memory import MemoryBudget
from tcpn.petrinets.ptspace import PTStateSpace

__all__ = ["BudgetReached", "ctl_mask", "edge_arrays", "numeric_values", "state_mask"]

#: Bytes per edge the CTL edge arrays hold (source, target, reversed source: int32) with
#: the sort that orders them (int64), checked against the memory budget before building.
EDGE_ARRAY_BYTES = 24


class BudgetReached(Exception):
    """A CTL fixpoint passed its deadline, or its edge arrays would pass the memory
    budget (the answer is unknown; the message names the budget)."""


def _on_time(deadline: float | None) -> None:
    if deadline is not None and wallclock.perf_counter() > deadline:
        raise BudgetReached("time budget reached")

_COMPARE = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater,
            "==": np.equal, "!=": np.not_equal}


def numeric_values(expression: Numeric, space: Any) -> np.ndarray:
    """The value of a numeric expression in every state."""
    if isinstance(expression, Const):
        return np.full(len(space), expression.value)
    if isinstance(expression, Sum):
        return np.sum([numeric_values(t, space) for t in expression.terms], axis=0)
    if isinstance(expression, Tokens) and isinstance(space, PTStateSpace):
        if expression.value not in (None, ()):
            raise InputError(f"{expression!r}: a P/T net's tokens have no colour")
        return space.tokens(expression.places)
    from tcpn.petrinets.atoms import numeric
    return numeric(space, expression)


def edge_arrays(space: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """The edges of a state space as arrays: ``(indptr, targets, labels, names)``, state
    ``s``'s edges being ``indptr[s]:indptr[s + 1]``, ``labels`` indexing ``names``."""
    if isinstance(space, PTStateSpace):
        return space.indptr, space.targets, space.labels, space.net.transitions
    from tcpn.petrinets.atoms import edge_transitions
    names = tuple(t.name for t in space.compiled.transitions)
    return (np.asarray(space.edge_start, dtype=np.int64),
            np.asarray(space.edge_dst, dtype=np.int64), edge_transitions(space), names)


def state_mask(formula: Formula, space: Any) -> np.ndarray:
    """Where a temporal-free state formula holds, one boolean per state."""
    n = len(space)
    if isinstance(formula, Bool):
        return np.full(n, formula.value)
    if isinstance(formula, Not):
        return ~state_mask(formula.operand, space)
    if isinstance(formula, And):
        return np.logical_and.reduce([state_mask(o, space) for o in formula.operands])
    if isinstance(formula, Or):
        return np.logical_or.reduce([state_mask(o, space) for o in formula.operands])
    if isinstance(formula, A | E):
        return ctl_mask(formula, space)
    if not isinstance(space, PTStateSpace):
        from tcpn.petrinets.atoms import truth
        return truth(space, formula)
    if isinstance(formula, Compare):
        return np.asarray(_COMPARE[formula.op](numeric_values(formula.left, space),
                                               numeric_values(formula.right, space)))
    if isinstance(formula, Fireable):
        return space.enabled(formula.transitions)
    if isinstance(formula, Deadlock):
        return space.out_degree() == 0
    raise InputError(f"{type(formula).__name__} is not a state formula")


class _Edges:
    """The state graph as edge arrays, a dead marking's self-loop included (state numbers
    as int32 below 2**31 states: 8 bytes an edge forwards, 8 backwards)."""

    def __init__(self, space: Any, budget: MemoryBudget):
        n = len(space)
        index = np.int32 if n < 2**31 else np.int64
        indptr, targets, _, _ = edge_arrays(space)
        if budget.exceeded(EDGE_ARRAY_BYTES * len(targets)):
            raise BudgetReached(budget.reason() + f" (the edge arrays of {len(targets)} "
                                "edges would not fit)")
        degree = np.diff(indptr)
        targets = targets.astype(index, copy=False)
        sources = np.repeat(np.arange(n, dtype=index), degree)
        self.firing_src, self.firing_dst = sources, targets
        dead = np.flatnonzero(degree == 0).astype(index)
        self.src = np.concatenate([sources, dead])
        self.dst = np.concatenate([targets, dead])
        self.rev_src = self.src[np.argsort(self.dst, kind="stable")]
        self.rev_indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.dst, minlength=n), out=self.rev_indptr[1:])
        self.n = n
        self._stamp = np.zeros(n, dtype=np.int64)  # scratch of :meth:`_distinct`

    def predecessors(self, states: np.ndarray) -> np.ndarray:
        """The sources of every edge into ``states`` (with repeats)."""
        starts = self.rev_indptr[states]
        lengths = self.rev_indptr[states + 1] - starts
        total = int(lengths.sum())
        if total == 0:
            return np.zeros(0, dtype=self.rev_src.dtype)
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        return self.rev_src[np.arange(total) + offsets]

    def _distinct(self, states: np.ndarray) -> np.ndarray:
        """``states`` without repeats, in linear time (no sort: a scratch array records
        the last position of each state, NumPy keeping the last of repeated assignments,
        and a state is kept at that position)."""
        positions = np.arange(len(states))
        self._stamp[states] = positions
        return states[self._stamp[states] == positions]

    def ex(self, target: np.ndarray) -> np.ndarray:
        """Some firing leads into ``target`` (never at a dead marking)."""
        found = np.zeros(self.n, dtype=bool)
        found[self.firing_src[target[self.firing_dst]]] = True
        return found

    def eu(self, hold: np.ndarray, goal: np.ndarray, deadline: float | None = None
           ) -> np.ndarray:
        found = goal.copy()
        frontier = np.flatnonzero(found)
        while len(frontier):
            _on_time(deadline)
            preds = self.predecessors(frontier)
            preds = self._distinct(preds[hold[preds] & ~found[preds]])
            found[preds] = True
            frontier = preds
        return found

    def eg(self, hold: np.ndarray, deadline: float | None = None) -> np.ndarray:
        found = hold.copy()
        inside = np.bincount(self.src[found[self.dst]], minlength=self.n)
        leaving = np.flatnonzero(found & (inside == 0))
        while len(leaving):
            _on_time(deadline)
            found[leaving] = False
            preds = self.predecessors(leaving)
            preds = preds[found[preds]]
            np.subtract.at(inside, preds, 1)
            leaving = self._distinct(preds[inside[preds] == 0])
        return found


#: The edge arrays of the spaces checked lately (building them sorts every edge once).
_EDGES: weakref.WeakKeyDictionary[Any, _Edges] = weakref.WeakKeyDictionary()


def _edges_of(space: Any, budget: MemoryBudget) -> _Edges:
    found = _EDGES.get(space)
    if found is None:
        found = _EDGES[space] = _Edges(space, budget)
    return found


def ctl_mask(formula: Formula, space: Any, deadline: float | None = None,
             max_memory_bytes: int | None = None) -> np.ndarray:
    """Where a CTL state formula holds, one boolean per state of a complete space.

    Raises :class:`~tcpn.errors.InputError` for a formula outside CTL (a quantifier over
    anything but one temporal operator over state formulas), and
    :class:`BudgetReached` when a fixpoint's step starts after ``deadline`` (a
    :func:`time.perf_counter` reading) or the edge arrays would pass ``max_memory_bytes``
    of resident memory (None: :meth:`~tcpn.petrinets.memory.MemoryBudget.default`).
    """
    if not getattr(space, "complete", True):
        raise InputError("CTL needs the complete state space: " +
                         (getattr(space, "reason", "") or "budget reached"))
    return _Checker(space, deadline, MemoryBudget.of(max_memory_bytes)).mask(formula)


class _Checker:
    def __init__(self, space: Any, deadline: float | None, budget: MemoryBudget):
        self.space = space
        self.edges = _edges_of(space, budget)
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
            return ~self.exists(_negate_path(path))
        return self.exists(path)

    def exists(self, path: Formula) -> np.ndarray:
        """Where some path satisfies ``path`` (one temporal operator over state formulas,
        or a negated one)."""
        edges = self.edges
        if isinstance(path, Not):
            return self.exists(_negate_path(path.operand))
        if isinstance(path, X):
            return edges.ex(self.mask(path.operand))
        deadline = self.deadline
        if isinstance(path, F):
            return edges.eu(np.ones(edges.n, dtype=bool), self.mask(path.operand), deadline)
        if isinstance(path, G):
            return edges.eg(self.mask(path.operand), deadline)
        if isinstance(path, U):
            return edges.eu(self.mask(path.left), self.mask(path.right), deadline)
        if isinstance(path, W):
            left, right = self.mask(path.left), self.mask(path.right)
            return edges.eu(left, right, deadline) | edges.eg(left, deadline)
        if isinstance(path, R):
            # E(a R b) == E(b U (a & b)) | EG b
            left, right = self.mask(path.left), self.mask(path.right)
            return edges.eu(right, left & right, deadline) | edges.eg(right, deadline)
        raise InputError(f"not CTL: a path quantifier over {type(path).__name__}")


def _negate_path(path: Formula) -> Formula:
    """The path formula ``not path`` with the negation below one temporal operator."""
    if isinstance(path, Not):
        return path.operand
    if isinstance(path, X):
        return X(Not(path.operand))
    if isinstance(path, F):
        return G(Not(path.operand))
    if isinstance(path, G):
        return F(Not(path.operand))
    if isinstance(path, U):
        return R(Not(path.left), Not(path.right))
    if isinstance(path, R):
        return U(Not(path.left), Not(path.right))
    if isinstance(path, W):
        # not(a W b) == (not b) U (not a and not b)
        return U(Not(path.right), And((Not(path.left), Not(path.right))))
    raise InputError(f"not CTL: a path quantifier over {type(path).__name__}")
