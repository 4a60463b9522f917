"""Random walks on a P/T net: witnesses for ``EF p`` and counter-examples for ``AG p``
when the state space is too large to explore (the contest tools' RANDOM_WALK).

A walk fires, from the initial marking, one enabled transition after another chosen at
random (uniformly among the enabled ones), testing the goal state formulas in every
marking it passes. A marking where ``p`` holds proves ``EF p`` TRUE; one where ``p``
fails proves ``AG p`` FALSE; the transitions fired from the initial marking are the
witness, and :func:`replay` checks it firing one transition at a time by the net's own
rules. A walk proves nothing in the other direction: not meeting ``p`` says nothing of
``EF p`` being false (or of ``AG p`` being true).

Many walkers run at once as rows of one markings matrix (walkers x places): the enabling
test is one comparison per input, read and inhibitor arc of the net and walker, the firing
one scatter of the chosen transitions' rows (:meth:`PTNet.fire_pairs
<tcpn.petrinets.statespace.ptspace.PTNet.fire_pairs>`). A walker restarts from the initial
marking at a dead marking and after :data:`MAX_LENGTH` firings (an unbounded net would
otherwise drift further away). The goals are tested on the markings of
:data:`BATCH_STEPS` steps at once (a walker at a dead marking waits for the batch's end).
The walkers' choices come from one seeded generator: the same seed and the same number
of steps give the same answers and witnesses.

>>> from tcpn.petrinets.examples import dining_philosophers
>>> from tcpn.petrinets.statespace.ptspace import pt_net
>>> from tcpn.petrinets.checking.formulas import Deadlock
>>> net = pt_net(dining_philosophers(3))
>>> found = random_walks(net, [Deadlock()], max_steps=200)
>>> found[0] is None  # the philosophers never deadlock: the walks find no witness
True
"""

from __future__ import annotations

import time as wallclock
from collections.abc import Callable, Sequence

import numpy as np

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
    Sum,
    Tokens,
    places_of,
    walk,
)
from tcpn.petrinets.statespace.ptspace import PTNet

__all__ = ["MAX_LENGTH", "WALKERS", "WALK_UNITS", "StateFormulas", "Walks", "enabling_of",
           "goal_of", "random_walks", "replay", "step_walkers", "walk_steps"]

#: Walkers run at once (rows of the markings matrix).
WALKERS = 32
#: Firings after which a walker restarts from the initial marking.
MAX_LENGTH = 20_000
#: Steps whose markings are gathered before the goals are tested on all of them at once
#: (a goal's test is a walk over its formula in Python: once per batch, not per step) ...
BATCH_STEPS = 32
#: ... and at most this many counts (markings x places or transitions) gathered.
BATCH_CELLS = 1 << 22
#: The walks' budget, a count of work rather than seconds, so that the same net, formulas
#: and seed give the same answers on any machine under any load: steps, each weighted
#: by ``1 + width / WIDTH_PER_STEP`` (``width``: the net's places or transitions, the
#: larger). A step costs about 0.12 ms plus 0.5 us per unit of width (32 walkers,
#: measured on 6 contest nets of 31-1,440 places, 2 cores under load), so the budget is
#: about 5 s on a quiet machine whatever the net's size.
WALK_UNITS = 40_000
WIDTH_PER_STEP = 256



def goal_of(formula: Formula) -> tuple[Formula, bool] | None:
    """What a walk looks for to decide ``formula``, and the answer finding it gives:
    ``(p, True)`` for ``EF p``, ``(not p, False)`` for ``AG p`` (``p`` free of path
    quantifiers, over token counts, fireability and deadlock); None for any other formula
    (a walk decides nothing else)."""
    for quantifier, operator, answer in ((E, F, True), (A, G, False)):
        if isinstance(formula, quantifier) and isinstance(formula.path, operator):
            inner = formula.path.operand
            if StateFormulas.evaluable(inner):
                return (inner if answer else Not(inner)), answer
    return None


def _walkable(formula: Formula) -> bool:
    """Whether every numeric expression is over uncoloured tokens and constants."""
    def numeric_ok(expression: Numeric) -> bool:
        if isinstance(expression, Const):
            return True
        if isinstance(expression, Tokens):
            return expression.value in (None, ())
        if isinstance(expression, Sum):
            return all(numeric_ok(t) for t in expression.terms)
        return False

    return all(numeric_ok(n.left) and numeric_ok(n.right) for n in walk(formula)
               if isinstance(n, Compare))


class _Enabling:
    """Which transitions each row of a markings matrix enables, all at once."""

    def __init__(self, net: PTNet):
        need = net.pre.maximum(net.test).tocsr()
        need.sum_duplicates()
        need.eliminate_zeros()
        self.n = len(net.transitions)
        self.need = self._arcs(need)
        self.inhibit = self._arcs(net.inhibit)

    @staticmethod
    def _arcs(matrix: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(places, weights, starts of the non-empty rows, their transitions)."""
        indptr = np.asarray(matrix.indptr, dtype=np.int64)  # type: ignore[attr-defined]
        rows = np.flatnonzero(np.diff(indptr))
        return (np.asarray(matrix.indices, dtype=np.int64),  # type: ignore[attr-defined]
                np.asarray(matrix.data, dtype=np.int64),  # type: ignore[attr-defined]
                indptr[rows], rows)

    def __call__(self, markings: np.ndarray) -> np.ndarray:
        """Walkers x transitions: whether each row enables each transition."""
        enabled = np.ones((len(markings), self.n), dtype=bool)
        for (places, weights, starts, rows), low in ((self.need, True),
                                                     (self.inhibit, False)):
            if not len(rows):
                continue
            counts = markings[:, places]
            failed = counts < weights if low else counts >= weights
            enabled[:, rows] &= ~np.logical_or.reduceat(failed, starts, axis=1)
        return enabled


def _holds(formula: Formula, markings: np.ndarray, enabled: np.ndarray,
           place: dict[str, int], transition: dict[str, int]) -> np.ndarray:
    """Where a quantifier-free state formula holds, one boolean per walker."""
    if isinstance(formula, Bool):
        return np.full(len(markings), formula.value)
    if isinstance(formula, Not):
        return ~_holds(formula.operand, markings, enabled, place, transition)
    if isinstance(formula, And | Or):
        reduce = np.logical_and if isinstance(formula, And) else np.logical_or
        return reduce.reduce([_holds(o, markings, enabled, place, transition)
                              for o in formula.operands])
    if isinstance(formula, Fireable):
        return np.asarray(enabled[:, [transition[t] for t in formula.transitions]].any(axis=1))
    if isinstance(formula, Deadlock):
        return np.asarray(~enabled.any(axis=1))
    assert isinstance(formula, Compare)
    return np.asarray(COMPARISONS[formula.op](_value(formula.left, markings, place),
                                           _value(formula.right, markings, place)))


def _value(expression: Numeric, markings: np.ndarray, place: dict[str, int]) -> np.ndarray:
    if isinstance(expression, Const):
        return np.full(len(markings), expression.value)
    if isinstance(expression, Sum):
        return np.sum([_value(t, markings, place) for t in expression.terms], axis=0)
    assert isinstance(expression, Tokens)
    return markings[:, [place[p] for p in expression.places]].sum(axis=1)


class StateFormulas:
    """Quantifier-free state formulas (over token counts, fireability and deadlock, see
    :func:`goal_of`) evaluated on rows of markings of ``net``, many formulas and rows at
    once: the enabling of every transition computed once per block of rows."""

    def __init__(self, net: PTNet):
        self.net = net
        self.enabling = _Enabling(net)
        self.place = {p: i for i, p in enumerate(net.places)}
        self.transition = {t: i for i, t in enumerate(net.transitions)}

    @staticmethod
    def evaluable(formula: Formula) -> bool:
        """Whether :meth:`holds` evaluates ``formula``."""
        return all(isinstance(n, Bool | Compare | Fireable | Deadlock | Not | And | Or)
                   for n in walk(formula)) and _walkable(formula)

    def initially(self, formula: Formula) -> bool | None:
        """Whether ``formula`` holds in the net's initial marking (None: not a formula
        :meth:`holds` evaluates)."""
        if not self.evaluable(formula):
            return None
        start = np.asarray(self.net.initial, dtype=np.int64)[None, :]
        return bool(self.holds([formula], start)[0][0])

    def holds(self, formulas: Sequence[Formula], markings: np.ndarray) -> list[np.ndarray]:
        """Per formula, where it holds: one boolean per row of ``markings`` (rows x
        places, int64)."""
        needs = any(isinstance(n, Fireable | Deadlock) for f in formulas for n in walk(f))
        enabled = self.enabling(markings) if needs else np.zeros((len(markings), 0), bool)
        return [_holds(f, markings, enabled, self.place, self.transition) for f in formulas]

    def reads(self, formulas: Sequence[Formula]) -> np.ndarray:
        """The places (ascending) ``formulas`` read: their token counts' and those their
        fireability atoms' transitions need (every place with a deadlock atom)."""
        nodes = [n for f in formulas for n in walk(f)]
        if any(isinstance(n, Deadlock) for n in nodes):
            return np.arange(len(self.net.places))
        transitions = np.array(sorted({self.transition[t] for n in nodes
                                       if isinstance(n, Fireable) for t in n.transitions}),
                               dtype=np.int64)
        counted = {self.place[p] for f in formulas for p in places_of(f)}
        return np.union1d(np.array(sorted(counted), dtype=np.int64),
                          self.net.touched(transitions))

    def holds_on(self, formulas: Sequence[Formula], block: np.ndarray,
                 columns: np.ndarray) -> list[np.ndarray]:
        """:meth:`holds` on ``block``, the rows' counts of the places ``columns`` only
        (:meth:`reads` of ``formulas``): a wide net's rows are read in the few columns the
        formulas need, and only their fireability atoms' transitions are tested."""
        if len(columns) == len(self.net.places):
            return self.holds(formulas, block)
        place = {self.net.places[c]: i for i, c in enumerate(columns.tolist())}
        names = sorted({t for f in formulas for n in walk(f) if isinstance(n, Fireable)
                        for t in n.transitions})
        enabled = np.zeros((len(block), len(names)), dtype=bool)
        for i, name in enumerate(names):
            enabled[:, i] = self.net.enabled(block, self.transition[name], columns)
        return [_holds(f, block, enabled, place, {t: i for i, t in enumerate(names)})
                for f in formulas]


def enabling_of(net: PTNet) -> Callable[[np.ndarray], np.ndarray]:
    """Which transitions each row of a markings matrix enables (walkers x transitions),
    every row at once: the walks' enabling test."""
    return _Enabling(net)


def step_walkers(net: PTNet, markings: np.ndarray, enabled: np.ndarray,
                 rng: np.random.Generator, trace: np.ndarray, length: np.ndarray,
                 max_length: int) -> np.ndarray:
    """One step of every walker, in place: each fires one of the transitions it enables,
    uniformly (the largest random score of an enabled transition), and writes it on its
    trace; a walker with none enabled or at ``max_length`` stands. Returns which moved."""
    everyone = np.arange(len(markings))
    scores = np.where(enabled, rng.random(enabled.shape), -1.0)
    chosen = scores.argmax(axis=1)
    alive = enabled[everyone, chosen] & (length < max_length)
    markings[alive] = net.fire_pairs(markings, everyone[alive], chosen[alive])
    trace[everyone[alive], length[alive]] = chosen[alive]
    length[alive] += 1
    return alive


def random_walks(net: PTNet, goals: Sequence[Formula], seed: int = 0,
                 stop: Callable[[], bool] = lambda: False, max_steps: int | None = None,
                 walkers: int = WALKERS, max_length: int = MAX_LENGTH
                 ) -> list[tuple[str, ...] | None]:
    """For each goal (a quantifier-free state formula, see :func:`goal_of`), the
    transitions fired from the initial marking to a marking where it holds, or None when
    no walk met one before ``stop()`` said so (asked every step) or ``max_steps`` steps
    (each step fires one transition in every walker). Seeded by ``seed``."""
    found: list[tuple[str, ...] | None] = [None] * len(goals)
    pending = list(range(len(goals)))
    enabling = _Enabling(net)
    place = {p: i for i, p in enumerate(net.places)}
    transition = {t: i for i, t in enumerate(net.transitions)}
    rng = np.random.default_rng(seed)
    initial = np.asarray(net.initial, dtype=np.int64)
    markings = np.tile(initial, (walkers, 1))
    trace = np.zeros((walkers, max_length), dtype=np.int64)
    length = np.zeros(walkers, dtype=np.int64)
    width = walkers * max(len(net.places), len(net.transitions), 1)
    batch = max(1, min(BATCH_STEPS, BATCH_CELLS // width))
    step = 0
    while pending and not stop() and (max_steps is None or step < max_steps):
        seen, seen_enabled, seen_length = [], [], []
        for _ in range(batch if max_steps is None else min(batch, max_steps - step)):
            step += 1
            enabled = enabling(markings)
            seen.append(markings.copy())
            seen_enabled.append(enabled)
            seen_length.append(length.copy())
            # a walker dead or at its length waits for the batch's end to restart: the
            # trace of every marking in the batch stays whole until the goals are read
            alive = step_walkers(net, markings, enabled, rng, trace, length, max_length)
        stacked, stacked_enabled = np.concatenate(seen), np.concatenate(seen_enabled)
        lengths = np.concatenate(seen_length)
        for g in list(pending):
            hit = np.flatnonzero(_holds(goals[g], stacked, stacked_enabled, place,
                                        transition))
            if len(hit):  # the earliest step's: rows are in step order
                w, at = int(hit[0]) % walkers, int(lengths[hit[0]])
                found[g] = tuple(net.transitions[t] for t in trace[w, :at])
                pending.remove(g)
        restart = ~alive
        markings[restart] = initial
        length[restart] = 0
    return found


def replay(net: PTNet, path: Sequence[str], start: np.ndarray | None = None) -> np.ndarray:
    """The marking reached by firing ``path`` from ``start`` (by default the initial
    marking), one transition at a time by the net's own enabling rule
    (:class:`ValueError` naming the step where a transition is not enabled): the check
    of a walk's witness."""
    index = {t: i for i, t in enumerate(net.transitions)}
    marking = np.asarray(net.initial if start is None else start, dtype=np.int64)[None, :]
    for number, name in enumerate(path):
        if not net.enabled(marking, index[name])[0]:
            raise ValueError(f"step {number} of the walk: {name} is not enabled")
        marking = net.fire(marking, index[name])
    return marking[0]


def walk_steps(net: PTNet, units: int | None = None) -> int:
    """The steps the walks take on ``net`` within ``units`` of work (by default
    :data:`WALK_UNITS`): fewer on a wider net, whose steps cost more.

    >>> from tcpn.petrinets.examples import dining_philosophers
    >>> from tcpn.petrinets.statespace.ptspace import pt_net
    >>> walk_steps(pt_net(dining_philosophers(3)))
    38641
    """
    width = max(len(net.places), len(net.transitions), 1)
    budget = WALK_UNITS if units is None else units
    return max(1, int(budget / (1 + width / WIDTH_PER_STEP)))


class Walks:
    """The walks' answers to a set of formulas, walked once for all of them at the first
    question (one walk serves every formula of an examination): ``formulas`` by
    identifier, those ``wanted`` (asked at the first question: the ones nothing else
    decided) walked on ``net`` for :func:`walk_steps` steps (the same answers on any
    machine), cut short only if ``seconds`` pass from the first question (a safety
    bound: the examination's time left); each witness is checked by :func:`replay`
    before it answers."""

    def __init__(self, net: PTNet, formulas: dict[str, Formula], seconds: float,
                 seed: int = 0, wanted: Callable[[Formula], bool] = lambda formula: True):
        self.net, self.seconds, self.seed, self.wanted = net, seconds, seed, wanted
        self.formulas = formulas
        self.goals = {ident: goal for ident, f in formulas.items()
                      if (goal := goal_of(f)) is not None}
        self.answers: dict[str, tuple[bool, tuple[str, ...]]] | None = None

    def answer(self, ident: str) -> tuple[bool, tuple[str, ...]] | None:
        """``(answer, witness)`` for formula ``ident``, or None when no walk decided it."""
        if ident not in self.goals:
            return None
        if self.answers is None:
            idents = [i for i in self.goals if self.wanted(self.formulas[i])]
            deadline = wallclock.perf_counter() + self.seconds
            paths = random_walks(self.net, [self.goals[i][0] for i in idents], self.seed,
                                 lambda: wallclock.perf_counter() > deadline,
                                 max_steps=walk_steps(self.net))
            self.answers = {}
            for ident_, path in zip(idents, paths, strict=True):
                if path is not None and _fires(self.net, path):
                    self.answers[ident_] = (self.goals[ident_][1], path)
        return self.answers.get(ident)


def _fires(net: PTNet, path: Sequence[str]) -> bool:
    """Whether the net fires ``path`` from its initial marking (a witness it does not
    fire would be a fault of the walks' vectorised enabling: never an answer)."""
    try:
        replay(net, path)
    except ValueError:
        return False
    return True
