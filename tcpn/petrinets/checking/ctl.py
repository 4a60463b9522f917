"""CTL model checking by global fixpoints over an explored state space, with evidence.

:func:`satisfying` computes the set of states (a NumPy ``bool`` array) where a CTL formula
holds, bottom-up, with the classical algorithms on the state space's sparse adjacency
(the graph kernel, :class:`~tcpn.petrinets.statespace.graph.StateGraph`): ``EX`` gathers
predecessors, ``EU`` is a backward breadth-first search (one pass, linear in the edges),
``EG`` the strongly connected components of the sub-graph where the operand holds. The
other operators are their duals. :func:`evidence` gives the path that shows a verdict at
the initial state: a witness for ``E``, a counterexample for ``A``, a lasso (stem and
cycle) when the path is infinite.

**Dead markings** (the Model Checking Contest's convention, settled against its oracle
answers: on the CTL formulas of the small P/T instances with dead markings, this reading
disagrees with none, while "AX false at a dead marking" and "a dead marking loops"
disagree with 5-8 % of them). Paths are *maximal*: infinite, or finite and ending
in a dead marking. So ``EG p`` holds at a dead marking where ``p`` holds (the one-state
path), ``AF p`` and ``A[p U q]`` there only where their goal holds. ``X`` reads the
successors: ``EX p`` (some successor satisfies ``p``) is false at a dead marking and
``AX p`` (every successor does) is true there, so ``AX p = not EX not p`` everywhere.
``next_at_deadlock="stutter"`` reads a dead marking as looping on itself instead (``EX p``
and ``AX p`` are then ``p`` there); the two conventions differ for ``X`` only.

**Fairness** (:class:`~tcpn.petrinets.checking.fairness.Fairness`): path quantifiers range over the
fair maximal paths only (fair CTL); see :mod:`tcpn.petrinets.checking.fairness`.

>>> from tcpn.petrinets import explore
>>> from tcpn.petrinets.examples import counter
>>> from tcpn.petrinets.checking.formulas import AF, EG, EX, tokens, Deadlock
>>> space = explore(counter(3))
>>> satisfying(space, AF(Deadlock())).tolist()
[True, True, True, True]
>>> satisfying(space, EX(tokens("count") >= 0)).tolist()
[True, True, True, False]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.checking.atoms import columns
from tcpn.petrinets.checking.formulas import (
    QUANTIFIERS,
    TEMPORAL,
    TIME_BOUNDED,
    A,
    And,
    E,
    F,
    Formula,
    FWithin,
    G,
    GWithin,
    Not,
    Or,
    R,
    U,
    W,
    X,
    is_ctl,
)
from tcpn.petrinets.checking.verdicts import Evidence
from tcpn.petrinets.statespace.graph import require_complete, state_graph
from tcpn.petrinets.statespace.paths import Step

if TYPE_CHECKING:
    from tcpn.petrinets.checking.fairness import Fairness
    from tcpn.petrinets.statespace.space import StateSpace

__all__ = ["GLOBAL_CTL", "NextAtDeadlock", "evidence", "negate_path", "path_steps",
           "satisfying"]

#: Who needs a whole state space in :func:`~tcpn.petrinets.statespace.graph.require_complete`'s
#: message, for every global algorithm on CTL's kernel (CTL, fairness, the standard report).
GLOBAL_CTL = "global CTL checking needs"

#: ``"successors"``: EX is false and AX true at a dead marking (the contest's reading);
#: ``"stutter"``: a dead marking loops on itself.
NextAtDeadlock = Literal["successors", "stutter"]


class _Checker:
    """Bottom-up labelling of one formula's sub-formulas, memoised."""

    def __init__(self, space: StateSpace, fairness: Fairness | None,
                 next_at_deadlock: NextAtDeadlock):
        self.space = space
        self.g = state_graph(space)
        self.cols = columns(space)
        self.fairness = fairness if fairness is not None and fairness.transitions else None
        self.stutter = next_at_deadlock == "stutter"
        self.memo: dict[Formula, np.ndarray] = {}
        self._fair: np.ndarray | None = None

    def sat(self, f: Formula) -> np.ndarray:
        found = self.memo.get(f)
        if found is None:
            found = self.memo[f] = self._sat(f)
        return found

    def fair(self) -> np.ndarray:
        """States from which some fair maximal path starts (all states without fairness)."""
        if self._fair is None:
            self._fair = self.eg(np.ones(self.g.n, dtype=bool))
        return self._fair

    def eg(self, p: np.ndarray) -> np.ndarray:
        """``EG p``: a (fair) maximal path on which ``p`` holds throughout."""
        g = self.g
        if self.fairness is None:
            return g.globally(p)
        from tcpn.petrinets.checking.fairness import fair_states

        return g.backward(p & (g.dead | fair_states(self.space, p, self.fairness)), p)

    def _sat(self, f: Formula) -> np.ndarray:
        g = self.g
        if isinstance(f, Not):
            return ~self.sat(f.operand)
        if isinstance(f, And):
            out = np.ones(g.n, dtype=bool)
            for operand in f.operands:
                out &= self.sat(operand)
            return out
        if isinstance(f, Or):
            out = np.zeros(g.n, dtype=bool)
            for operand in f.operands:
                out |= self.sat(operand)
            return out
        if isinstance(f, E):
            return self._exists(f.path)
        if isinstance(f, A):
            return ~self._exists(negate_path(f.path))
        if isinstance(f, TEMPORAL):
            raise InputError(f"{type(f).__name__}(...) needs a path quantifier (A or E) "
                             "directly above it in CTL")
        return self.cols.truth(f)

    def _exists(self, path: Formula) -> np.ndarray:
        """``E path`` for a CTL path formula (one temporal operator over state formulas)."""
        g = self.g
        fair = self.fair() if self.fairness is not None else None
        if isinstance(path, X):
            p = self.sat(path.operand)
            if fair is not None:
                p = p & fair
            out = g.pre_exists(p)
            return out | (g.dead & p) if self.stutter else out
        if isinstance(path, F):
            q = self.sat(path.operand)
            return g.backward(q if fair is None else q & fair, np.ones(g.n, dtype=bool))
        if isinstance(path, U):
            q = self.sat(path.right)
            return g.backward(q if fair is None else q & fair, self.sat(path.left))
        if isinstance(path, G):
            return self.eg(self.sat(path.operand))
        if isinstance(path, W):  # E[p W q] = E[p U q] | EG p
            p, q = self.sat(path.left), self.sat(path.right)
            return g.backward(q if fair is None else q & fair, p) | self.eg(p)
        if isinstance(path, R):  # E[p R q] = E[q U (p & q)] | EG q
            p, q = self.sat(path.left), self.sat(path.right)
            pq = p & q
            return g.backward(pq if fair is None else pq & fair, q) | self.eg(q)
        if isinstance(path, TIME_BOUNDED):
            return self._exists_within(path)
        if isinstance(path, Not) and isinstance(path.operand, TEMPORAL):
            return self._exists(negate_path(path.operand))
        raise InputError(f"not a CTL path formula: {path!r} (nested temporal operators are "
                         "LTL or CTL*)")


    def _exists_within(self, path: FWithin | GWithin) -> np.ndarray:
        """``E F<=T p``: the earliest arrival at ``p`` takes at most ``T``; ``E G<=T p``:
        the latest first arrival at ``not p`` takes more than ``T``, or never comes
        (:mod:`~tcpn.petrinets.checking.durations`)."""
        from tcpn.petrinets.checking.durations import earliest_arrival, latest_arrival, within

        if self.fairness is not None:
            raise InputError("time-bounded operators range over all maximal paths; they are "
                             "not checked under fairness")
        p = self.sat(path.operand)
        if isinstance(path, FWithin):
            return within(earliest_arrival(self.space, p).times, path.bound_s)
        return ~within(latest_arrival(self.space, ~p).times, path.bound_s)


def negate_path(path: Formula) -> Formula:
    """A path formula equivalent to ``not path`` (one temporal operator at the top)."""
    if isinstance(path, X):
        return X(Not(path.operand))
    if isinstance(path, F):
        return G(Not(path.operand))
    if isinstance(path, G):
        return F(Not(path.operand))
    if isinstance(path, U):  # not (p U q) = (not q) W (not p and not q)
        return W(Not(path.right), And((Not(path.left), Not(path.right))))
    if isinstance(path, W):  # not (p W q) = (not q) U (not p and not q)
        return U(Not(path.right), And((Not(path.left), Not(path.right))))
    if isinstance(path, R):  # not (p R q) = (not p) U (not q)
        return U(Not(path.left), Not(path.right))
    if isinstance(path, FWithin):
        return GWithin(Not(path.operand), path.bound_s)
    if isinstance(path, GWithin):
        return FWithin(Not(path.operand), path.bound_s)
    if isinstance(path, Not) and isinstance(path.operand, TEMPORAL):
        return path.operand
    raise InputError(f"not a CTL path formula: {path!r}")


def _check_ctl(formula: Formula, space: StateSpace, fairness: Fairness | None) -> None:
    from tcpn.petrinets.checking.durations import check_time_bounds

    if not is_ctl(formula):
        raise InputError(f"not a CTL formula: {formula!r} (every temporal operator must "
                         "stand directly under A or E)")
    check_time_bounds(formula, space.net, fairness)


def satisfying(space: StateSpace, formula: Formula, *, fairness: Fairness | None = None,
               next_at_deadlock: NextAtDeadlock = "successors") -> np.ndarray:
    """The states where a CTL formula holds (``bool`` array); the space must be complete.

    >>> from tcpn.petrinets import explore
    >>> from tcpn.petrinets.examples import dining_philosophers
    >>> from tcpn.petrinets.checking.formulas import AG, EF, fireable
    >>> space = explore(dining_philosophers(5))
    >>> bool(satisfying(space, AG(EF(fireable("take0"))))[0])
    True
    """
    _check_ctl(formula, space, fairness)
    require_complete(space, GLOBAL_CTL)
    return _Checker(space, fairness, next_at_deadlock).sat(formula)


def evidence(space: StateSpace, formula: Formula, *, fairness: Fairness | None = None,
             next_at_deadlock: NextAtDeadlock = "successors", state: int = 0) -> Evidence | None:
    """The path from ``state`` that shows the truth value of ``formula`` there.

    A witness when a path-quantified formula ``E ...`` holds, a counterexample when
    ``A ...`` fails (pushed through negations and through the operand of ``and``/``or``
    that decides), a lasso for ``G``; ``None`` when no single path shows it (an ``A ...``
    that holds is shown by the states visited, not by a path).
    """
    _check_ctl(formula, space, fairness)
    require_complete(space, GLOBAL_CTL)
    checker = _Checker(space, fairness, next_at_deadlock)
    found = _evidence(checker, formula, state, bool(checker.sat(formula)[state]))
    if found is None:
        return None
    stem, cycle = found
    steps = path_steps(space, stem)
    return Evidence(steps, path_steps(space, cycle, steps[-1].clock if steps else None))


def _evidence(c: _Checker, f: Formula, state: int,
              value: bool) -> tuple[list[int], list[int]] | None:
    """``(stem edges, cycle edges)`` showing that ``f`` has ``value`` at ``state``."""
    if isinstance(f, Not):
        return _evidence(c, f.operand, state, not value)
    if isinstance(f, And | Or):
        deciding = (isinstance(f, Or)) == value  # or-true and and-false: one operand decides
        if not deciding:
            return None
        for operand in f.operands:
            if bool(c.sat(operand)[state]) == value:
                return _evidence(c, operand, state, value)
        return None
    if isinstance(f, E) and value:
        return _witness(c, f.path, state)
    if isinstance(f, A) and not value:
        return _witness(c, negate_path(f.path), state)
    return None


def _witness(c: _Checker, path: Formula, state: int) -> tuple[list[int], list[int]] | None:
    """A (fair) path from ``state`` satisfying the CTL path formula ``path``."""
    g = c.g
    ones = np.ones(g.n, dtype=bool)
    fair = c.fair() if c.fairness is not None else ones
    if isinstance(path, Not):
        path = negate_path(path.operand)
    if isinstance(path, X):
        p = c.sat(path.operand) & fair
        if g.dead[state] and c.stutter and p[state]:
            return [], []
        first, last = int(g.start[state]), int(g.start[state + 1])
        hits = np.flatnonzero(p[g.dst[first:last]])
        return ([first + int(hits[0])], []) if len(hits) else None
    if isinstance(path, F):
        return _until_path(c, ones, c.sat(path.operand) & fair, state)
    if isinstance(path, U):
        return _until_path(c, c.sat(path.left), c.sat(path.right) & fair, state)
    if isinstance(path, G):
        return _globally_path(c, c.sat(path.operand), state)
    if isinstance(path, TIME_BOUNDED):
        return _within_path(c, path, state)
    if isinstance(path, W | R):
        p, q = c.sat(path.left), c.sat(path.right)
        if isinstance(path, R):
            p, q = q, p & q
        if g.backward(q & fair, p)[state]:
            return _until_path(c, p, q & fair, state)
        return _globally_path(c, p, state)
    return None


def _within_path(c: _Checker, path: FWithin | GWithin,
                 state: int) -> tuple[list[int], list[int]] | None:
    """For ``F<=T p`` the quickest path to ``p``; for ``G<=T p`` the path that meets
    ``not p`` last (after ``T``), or a maximal path that never meets it."""
    from tcpn.petrinets.checking.durations import (
        avoiding_run,
        earliest_arrival,
        latest_arrival,
    )

    p = c.sat(path.operand)
    if isinstance(path, FWithin):
        return earliest_arrival(c.space, p).path(c.g, state), []
    arrival = latest_arrival(c.space, ~p)
    if arrival.times[state] == np.inf:
        return avoiding_run(c.space, ~p, state)
    return arrival.path(c.g, state), []


def _until_path(c: _Checker, p: np.ndarray, q: np.ndarray,
                state: int) -> tuple[list[int], list[int]] | None:
    """A path through ``p`` to ``q``, continued by a fair path when fairness is assumed."""
    stem = c.g.forward_path(p, q, state)
    if stem is None:
        return None
    if c.fairness is None:
        return stem, []
    end = int(c.g.dst[stem[-1]]) if stem else state
    tail = _globally_path(c, np.ones(c.g.n, dtype=bool), end)
    return (stem, []) if tail is None else (stem + tail[0], tail[1])


def _globally_path(c: _Checker, p: np.ndarray,
                   state: int) -> tuple[list[int], list[int]] | None:
    """A (fair) maximal path from ``state`` with ``p`` throughout: a lasso, or a finite path
    ending in a dead marking."""
    g = c.g
    if c.fairness is None:
        return g.maximal_path(p, state)
    from tcpn.petrinets.checking.fairness import fair_cycle, fair_states

    in_cycle = fair_states(c.space, p, c.fairness)
    stem = g.forward_path(p, p & (g.dead | in_cycle), state)
    if stem is None:
        return None
    end = int(g.dst[stem[-1]]) if stem else state
    if g.dead[end] and not in_cycle[end]:
        return stem, []
    return stem, fair_cycle(c.space, p, c.fairness, end)


def path_steps(space: StateSpace, edges: list[int], start_clock: float | None = None
               ) -> list[Step]:
    """The steps of a path given by edge indices: transition, binding, the marking after
    (non-empty places; token values, or tokens with timestamps on timed places) and the
    clock after: the state's in absolute time; in relative time the waits summed from
    ``start_clock`` (default 0: the path starts at the initial marking)."""
    g = state_graph(space)
    steps = []
    clock = start_clock or 0.0
    for e in edges:
        source = int(g.src[e])
        edge = space.edges(source)[e - int(g.start[source])]
        marking = _marking(space, edge.target)
        clock += edge.elapsed
        at = space.clock(edge.target) if space.clock_mode == "absolute" else \
            clock if space.clock_mode == "relative" else None
        steps.append(Step(edge.transition, edge.binding, marking, at))
    return steps


def _marking(space: StateSpace, state: int) -> dict[str, list[Any]]:
    """The non-empty places of ``state``: token values, with timestamps on timed places."""
    timed = dict(zip(space.compiled.place_names, space.compiled.timed, strict=True))
    return {place: list(tokens) if timed[place] else [t.value for t in tokens]
            for place, tokens in space.marking(state).items() if tokens}


def is_quantified(formula: Formula) -> bool:
    """Whether the formula holds a path quantifier (it needs a checker, not just atoms)."""
    return isinstance(formula, QUANTIFIERS) or any(is_quantified(c) for c in formula.children())

