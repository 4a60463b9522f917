"""CTL on a state space a budget stopped: what the states found prove, three-valued.

Every state found is reachable and keeps its marking; an *expanded* state has all its
successors among its edges; a *frontier* state (found, not expanded) has none known. Each
sub-formula gets two masks over the states found: where it surely holds (``yes``) and
where it surely fails (``no``), never both; what neither says is unknown. A state formula
without temporal operator is read on the marking (both masks exact). Then, with
``expanded`` and the edges known:

- ``EX a``: yes where some known successor is yes for ``a``; no on expanded states
  whose successors are all no (an expanded dead state: ``EX a`` is false there, the
  maximal-path reading of :mod:`~tcpn.petrinets.checking.ptcheck`);
- ``E[a U b]``: yes where a path of known edges through yes-``a`` states reaches a
  yes-``b`` state; no outside the states from which one could: those not no for ``b``,
  or not no for ``a`` and unexpanded or with a successor from which one could;
- ``EG a``: yes on the greatest set of yes-``a`` states each of which is an expanded dead
  state or has a known successor in the set; no outside the greatest set of not-no-``a``
  states each unexpanded, dead, or with a successor in the set;
- negation swaps the masks; ``A`` is ``not E not``; ``F``, ``W``, ``R`` are written with
  ``U`` and ``G`` as :mod:`~tcpn.petrinets.checking.ptcheck` writes them.

Each rule keeps both masks sound (``yes`` inside the truth on the whole state space, ``no``
outside it) by induction over the formula: known edges are real firings, and an expanded
state's edges are all of them. The partial Kripke structures of Bruns and Godefroid
(*Model checking partial state spaces with 3-valued temporal logics*, CAV 1999) read the
same way. The formula's answer is its value at the initial marking when a mask covers it.
"""

from __future__ import annotations

import numpy as np

from tcpn.petrinets.checking.ctl import negate_path
from tcpn.petrinets.checking.formulas import (
    TEMPORAL,
    A,
    And,
    E,
    F,
    Formula,
    G,
    Not,
    Or,
    R,
    U,
    W,
    X,
    walk,
)
from tcpn.petrinets.checking.ptcheck import graph_of, on_time, state_mask
from tcpn.petrinets.statespace import fixpoints
from tcpn.petrinets.statespace.memory import MemoryBudget
from tcpn.petrinets.statespace.ptspace import PTStateSpace

__all__ = ["PartialCTL", "partial_ctl"]

#: Where a formula surely holds, and where it surely fails.
Masks = tuple[np.ndarray, np.ndarray]


def partial_ctl(formula: Formula, space: PTStateSpace, deadline: float | None = None,
                max_memory_bytes: int | None = None) -> bool | None:
    """The value of the CTL ``formula`` at the initial marking when the states of the
    stopped search ``space`` decide it (see the module), else None. Raises
    :class:`~tcpn.petrinets.checking.ptcheck.BudgetReached` past ``deadline`` (read
    before each fixpoint) or when the edge arrays would pass ``max_memory_bytes``."""
    return PartialCTL(space, deadline, MemoryBudget.of(max_memory_bytes)).value(formula)


class PartialCTL:
    """The three-valued masks of formulas on one stopped search, their sub-formulas' kept
    (the formulas of an examination share atoms)."""

    def __init__(self, space: PTStateSpace, deadline: float | None, budget: MemoryBudget):
        self.space, self.deadline = space, deadline
        self.graph = graph_of(space, budget)
        n = len(space)
        self.expanded = np.arange(n) < space.n_expanded
        self.dead = self.graph.dead & self.expanded
        self.cache: dict[Formula, Masks] = {}

    def value(self, formula: Formula) -> bool | None:
        """``formula`` at the initial marking: True, False, or None when not decided."""
        yes, no = self.masks(formula)
        return True if yes[0] else False if no[0] else None

    def masks(self, formula: Formula) -> Masks:
        if formula not in self.cache:
            self.cache[formula] = self._masks(formula)
        return self.cache[formula]

    def _masks(self, formula: Formula) -> Masks:
        if isinstance(formula, Not):
            yes, no = self.masks(formula.operand)
            return no, yes
        if isinstance(formula, And | Or):
            parts = [self.masks(o) for o in formula.operands]
            every, some = np.logical_and.reduce, np.logical_or.reduce
            if isinstance(formula, And):
                return every([y for y, _ in parts]), some([n for _, n in parts])
            return some([y for y, _ in parts]), every([n for _, n in parts])
        if isinstance(formula, A):
            yes, no = self.exists(negate_path(formula.path))
            return no, yes
        if isinstance(formula, E):
            return self.exists(formula.path)
        if any(isinstance(n, TEMPORAL) for n in walk(formula)):
            raise ValueError(f"not CTL: {type(formula).__name__} outside a quantifier")
        on_time(self.deadline)
        holds = state_mask(formula, self.space, self.deadline)
        return holds, ~holds

    def exists(self, path: Formula) -> Masks:
        """Where some path surely / surely no path satisfies ``path`` (one temporal
        operator over state formulas, or a negated one)."""
        if isinstance(path, Not):
            return self.exists(negate_path(path.operand))
        if isinstance(path, X):
            yes, no = self.masks(path.operand)
            start, dst = self.graph.start, self.graph.dst
            return (fixpoints.successor_in(start, dst, yes),
                    self.expanded & ~fixpoints.successor_in(start, dst, ~no))
        if isinstance(path, F):
            return self.until(np.ones(len(self.expanded), dtype=bool),
                              np.zeros(len(self.expanded), dtype=bool),
                              *self.masks(path.operand))
        if isinstance(path, G):
            return self.globally(*self.masks(path.operand))
        if not isinstance(path, U | W | R):
            raise ValueError(f"not CTL: a path quantifier over {type(path).__name__}")
        (left_yes, left_no), (right_yes, right_no) = (self.masks(path.left),
                                                      self.masks(path.right))
        if isinstance(path, U):
            return self.until(left_yes, left_no, right_yes, right_no)
        if isinstance(path, W):  # E[a W b] = E[a U b] | EG a
            return _or(self.until(left_yes, left_no, right_yes, right_no),
                       self.globally(left_yes, left_no))
        # E[a R b] = E[b U (a & b)] | EG b
        return _or(self.until(right_yes, right_no, left_yes & right_yes, left_no | right_no),
                   self.globally(right_yes, right_no))

    def until(self, left_yes: np.ndarray, left_no: np.ndarray, right_yes: np.ndarray,
              right_no: np.ndarray) -> Masks:
        on_time(self.deadline)
        rstart, rsrc = self.graph.reversed_edges()
        yes = fixpoints.backward(rstart, rsrc, right_yes, left_yes)
        maybe = fixpoints.backward(rstart, rsrc, ~right_no | (~left_no & ~self.expanded),
                                   ~left_no)
        return yes, ~maybe

    def globally(self, hold_yes: np.ndarray, hold_no: np.ndarray) -> Masks:
        on_time(self.deadline)
        g = self.graph
        rstart, rsrc = g.reversed_edges()
        yes = fixpoints.globally(g.start, g.dst, rstart, rsrc, hold_yes, self.dead)
        maybe = fixpoints.globally(g.start, g.dst, rstart, rsrc, ~hold_no,
                                   self.dead | ~self.expanded)
        return yes, ~maybe


def _or(first: Masks, second: Masks) -> Masks:
    return first[0] | second[0], first[1] & second[1]
