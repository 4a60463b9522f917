"""Atomic propositions over an explored state space, evaluated for every state at once.

:func:`truth` gives one NumPy ``bool`` array over the states of a
:class:`~tcpn.petrinets.statespace.space.StateSpace` for a *propositional* formula: atoms
(:func:`~tcpn.petrinets.checking.formulas.tokens` comparisons,
:func:`~tcpn.petrinets.checking.formulas.fireable`,
:func:`~tcpn.petrinets.checking.formulas.clock`,
:class:`~tcpn.petrinets.checking.formulas.Deadlock`,
:class:`~tcpn.petrinets.checking.formulas.Predicate`) and their boolean combinations. The CTL and
LTL checkers call it for each atomic proposition.

Evaluation is vectorised over the packed markings: a place's token count is a table over
the place's interned contents indexed by the content numbers of all states; a
transition's fireability is computed once per distinct combination of the contents of the
places it reads, then spread to the states. Fireability follows the state space's own
semantics: a transition is *fireable* in a state when a firing of it leaves the state (in
timed and prioritised nets, only the bindings the simulator could pick next count); it is
computed from the marking, so it is exact at the frontier of a partial state space too.
``Deadlock`` holds where nothing is fireable.

>>> from tcpn.petrinets import explore
>>> from tcpn.petrinets.examples import dining_philosophers
>>> from tcpn.petrinets.checking.formulas import fireable, tokens
>>> space = explore(dining_philosophers(3))
>>> truth(space, tokens("eat0") >= 1).tolist()
[False, True, False, False]
>>> truth(space, fireable("put1", "put2") & ~fireable("take0")).tolist()
[False, False, True, True]
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.checking.formulas import (
    COMPARISONS,
    A,
    And,
    Bool,
    Clock,
    Compare,
    Const,
    Deadlock,
    E,
    Fireable,
    Formula,
    Not,
    Numeric,
    Or,
    Predicate,
    Sum,
    Tokens,
)
from tcpn.petrinets.statespace.graph import edge_sources
from tcpn.petrinets.statespace.store import timed_content, untimed_content

if TYPE_CHECKING:
    from tcpn.petrinets.statespace.space import StateSpace

__all__ = ["StateColumns", "columns", "edge_transitions", "numeric", "truth"]



def truth(space: StateSpace, formula: Formula) -> np.ndarray:
    """The states (a ``bool`` array, one entry per state) where a propositional formula holds.

    ``formula`` may not contain temporal operators or path quantifiers (the checkers
    evaluate those); unknown places and transitions, and ``clock()`` where the state space
    keeps no absolute time, are an :class:`InputError` naming them.

    >>> from tcpn.petrinets import explore
    >>> from tcpn.petrinets.examples import counter
    >>> from tcpn.petrinets.checking.formulas import Deadlock, tokens
    >>> space = explore(counter(3))
    >>> truth(space, Deadlock()).tolist(), truth(space, tokens("count").equals(1)).tolist()
    ([False, False, False, True], [True, True, True, True])
    """
    return columns(space).truth(formula)


def numeric(space: StateSpace, expression: Numeric) -> np.ndarray:
    """The value of a numeric expression (token counts, the clock, sums) in every state."""
    return columns(space).numeric(expression)


def edge_transitions(space: StateSpace) -> np.ndarray:
    """The transition (index in ``space.compiled.transitions``) of every edge, aligned with
    ``space.edge_dst``.

    >>> from tcpn.petrinets import explore
    >>> from tcpn.petrinets.examples import interleaving_grid
    >>> edge_transitions(explore(interleaving_grid(1))).tolist()
    [0, 1, 1, 0]
    """
    return columns(space).edge_transitions()


#: How many token-count and fireability columns one space keeps (each 1-8 bytes a state).
CACHED_COLUMNS = 64

_CACHE: weakref.WeakKeyDictionary[Any, StateColumns] = weakref.WeakKeyDictionary()


def columns(space: StateSpace) -> StateColumns:
    """The (cached) per-state columns of ``space``."""
    found = _CACHE.get(space)
    if found is None:
        found = _CACHE[space] = StateColumns(space)
    return found


class StateColumns:
    """Per-state arrays of one state space, computed on demand and kept."""

    def __init__(self, space: StateSpace):
        # a weak reference: the cache that keeps these columns is keyed weakly by the
        # space, and a strong one from the value would keep every space checked alive
        self._space = weakref.ref(space)
        self.gen = space.generator
        self.store = self.gen.store
        self.compiled = space.compiled
        self.n = space.n_states
        # columns are recomputed rather than all kept: a space of millions of states and
        # hundreds of places would not fit; these caches keep the last few
        self._counts: _Recent[tuple[int, Any]] = _Recent(CACHED_COLUMNS)
        self._fireable: _Recent[int] = _Recent(CACHED_COLUMNS)
        self._timed_fire: list[np.ndarray] | None = None
        self._deadlock: np.ndarray | None = None
        self._labels: np.ndarray | None = None
        self._clock: np.ndarray | None = None

    # -- raw fields -------------------------------------------------------------------------

    @property
    def space(self) -> StateSpace:
        """The space these columns are of (alive while anyone holds it)."""
        space = self._space()
        if space is None:
            raise ReferenceError("the state space of these columns was freed")
        return space
    def field(self, p: int) -> np.ndarray:
        """The content number of field ``p`` (a place, or the clock) in every state."""
        store, keys = self.store, self.space.keys
        shift, width = store.shifts[p], store.widths[p]
        if keys.dtype == np.uint64:
            out = ((keys >> np.uint64(shift)) & np.uint64((1 << width) - 1)).astype(np.int64)
        else:
            size = keys.dtype.itemsize
            raw = np.frombuffer(keys.tobytes(), dtype=np.uint8).reshape(len(keys), size)
            first, last = shift // 8, (shift + width - 1) // 8
            out = np.zeros(len(keys), dtype=np.uint64)
            for b in range(last, first - 1, -1):
                out = (out << np.uint64(8)) | raw[:, b].astype(np.uint64)
            out = ((out >> np.uint64(shift - 8 * first)) & np.uint64((1 << width) - 1))
            out = out.astype(np.int64)
        return out

    def _place(self, name: str) -> int:
        index = self.compiled.place_index.get(name)
        if index is None:
            raise InputError(f"no place named {name!r} in net {self.compiled.net.name} "
                             f"(places: {_some(self.compiled.place_names)})")
        return index

    def _transition(self, name: str) -> int:
        for ct in self.compiled.transitions:
            if ct.name == name:
                return ct.index
        names = [ct.name for ct in self.compiled.transitions]
        raise InputError(f"no transition named {name!r} in net {self.compiled.net.name} "
                         f"(transitions: {_some(names)})")

    # -- token counts -----------------------------------------------------------------------
    def tokens(self, name: str, value: Any = None) -> np.ndarray:
        """The number of tokens on place ``name`` (of colour ``value`` if given), per state."""
        p = self._place(name)
        found = self._counts.get((p, value))
        if found is not None:
            return found
        timed = self.store.timed[p]
        table = np.zeros(len(self.store.contents[p]), dtype=np.int64)
        for number, key in enumerate(self.store.contents[p]):
            if key is None:
                continue
            if timed:
                content = timed_content(key)
                table[number] = (sum(len(s) for s in content.values()) if value is None
                                 else len(content.get(value, ())))
            else:
                counts = untimed_content(key)
                table[number] = (sum(counts.values()) if value is None
                                 else counts.get(value, 0))
        out = table[self.field(p)]
        self._counts.put((p, value), out)
        return out

    def clock(self) -> np.ndarray:
        """The global clock of every state (absolute timed state spaces only)."""
        if self._clock is None:
            mode = self.space.clock_mode
            if mode == "untimed":
                raise InputError(f"clock() reads model time, but net {self.compiled.net.name} "
                                 "is untimed: its states have no clock")
            if mode != "absolute":
                raise InputError("clock() needs absolute time: explore the net with "
                                 "explore(..., clock='absolute') (relative time keeps no clock)")
            p = self.gen.clock_field
            table = np.array([0.0 if v is None else float(v)  # type: ignore[arg-type]
                              for v in self.store.contents[p]])
            self._clock = table[self.field(p)]
        return self._clock

    # -- fireability ------------------------------------------------------------------------
    def _untimed_enabled(self, rule: Any, states: np.ndarray | None = None) -> np.ndarray:
        """Bindings of ``rule``'s transition per state (or per state of ``states``),
        priorities aside, untimed nets."""
        store = self.store
        fields = [self.field(p) if states is None else self.field(p)[states] for p in rule.rw]
        size = self.n if states is None else len(states)
        if not rule.rw:
            codes = np.zeros(size, dtype=np.int64)
        elif sum(store.widths[p] for p in rule.rw) <= 62:
            codes = np.zeros(size, dtype=np.int64)
            for p, column in zip(rule.rw, fields, strict=True):
                codes = (codes << np.int64(store.widths[p])) | column
        else:
            stacked = np.stack(fields, axis=1)
            _, codes = np.unique(stacked, axis=0, return_inverse=True)
            codes = codes.reshape(-1)
        unique, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        template: list[dict[Any, Any]] = [{} for _ in self.compiled.place_names]
        counts = np.zeros(len(unique), dtype=np.int32)
        for u, state in enumerate(first.tolist()):
            marking = list(template)
            for p, column in zip(rule.rw, fields, strict=True):
                marking[p] = untimed_content(store.contents[p][int(column[state])])
            counts[u] = len(rule.ct.enumerate(marking))
        return counts[inverse.reshape(-1)]

    def _untimed_counts(self) -> list[tuple[int, np.ndarray]]:
        """``(transition, edges per state)`` in the explorer's order, priorities applied."""
        out = []
        blocked = np.zeros(self.n, dtype=bool)
        for group in self.gen.groups:
            any_here = np.zeros(self.n, dtype=bool)
            for rule in group:
                counts = np.where(blocked, 0, self._untimed_enabled(rule))
                any_here |= counts > 0
                out.append((rule.ct.index, counts))
            blocked |= any_here
        return out

    def _timed_fireable(self) -> list[np.ndarray]:
        """Timed nets: per state, the transition of each firing possible next."""
        if self._timed_fire is None:
            keys, store = self.space.keys, self.store
            self._timed_fire = [
                np.array([ct.index for ct, *_ in self.gen.successors(store.key_at(keys, s))],
                         dtype=np.int32) for s in range(self.n)]
        return self._timed_fire

    def fireable(self, name: str) -> np.ndarray:
        """Whether transition ``name`` can fire next, per state."""
        t = self._transition(name)
        found = self._fireable.get(t)
        if found is not None:
            return found
        kept = self.space.edge_labels
        if kept is not None and self.space.n_expanded == self.n:
            # every state expanded: it can fire t next exactly when one of its edges is t's
            out = np.zeros(self.n, dtype=bool)
            out[edge_sources(self.space.edge_start, np.flatnonzero(kept == t))] = True
        elif self.gen.timed_net:
            out = np.array([bool(np.any(labels == t)) for labels in self._timed_fireable()],
                           dtype=bool)
        elif len(self.gen.groups) == 1:
            rule = next(r for r in self.gen.groups[0] if r.ct.index == t)
            out = self._untimed_enabled(rule) > 0
        else:
            out = next(c for u, c in self._untimed_counts() if u == t) > 0
        self._fireable.put(t, out)
        return out

    def deadlock(self) -> np.ndarray:
        """States where no transition can fire."""
        if self._deadlock is None:
            if self.gen.timed_net:
                self._deadlock = np.array([len(x) == 0 for x in self._timed_fireable()],
                                          dtype=bool)
            else:
                # expanded states: no edge; the frontier's are computed from the markings
                out_degree = np.diff(self.space.edge_start.astype(np.int64))
                dead = out_degree == 0
                frontier = np.arange(self.space.n_expanded, self.n)
                if len(frontier):
                    live = np.zeros(len(frontier), dtype=bool)
                    for group in self.gen.groups:
                        for rule in group:
                            live |= self._untimed_enabled(rule, frontier) > 0
                    dead[frontier] = ~live
                self._deadlock = dead
        return self._deadlock

    def edge_transitions(self) -> np.ndarray:
        """The transition index of every stored edge (aligned with ``space.edge_dst``)."""
        if self._labels is not None:
            return self._labels
        space = self.space
        if space.edge_labels is not None:  # kept by the explorer
            self._labels = space.edge_labels
            return space.edge_labels
        labels = np.empty(space.n_edges, dtype=np.int32)
        if self.gen.timed_net:
            for s, found in enumerate(self._timed_fireable()[: space.n_expanded]):
                start = int(space.edge_start[s])
                labels[start:start + len(found)] = found
        else:
            offset = space.edge_start[:-1].astype(np.int64).copy()
            expanded = np.arange(self.n) < space.n_expanded
            for t, counts in self._untimed_counts():
                counts = np.where(expanded, counts, 0).astype(np.int64)
                where = np.flatnonzero(counts)
                if not len(where):
                    continue
                c = counts[where]
                base = np.repeat(offset[where], c)
                ramp = np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
                labels[base + ramp] = t
                offset[where] += c
            if not np.array_equal(offset[: space.n_expanded],
                                  space.edge_start[1: space.n_expanded + 1].astype(np.int64)):
                raise RuntimeError("edge labels do not match the stored edges "
                                   "(a transition is not deterministic?)")
        self._labels = labels
        return labels

    # -- formulas ---------------------------------------------------------------------------
    def numeric(self, expression: Numeric) -> np.ndarray:
        """The value of a numeric expression in every state."""
        if isinstance(expression, Const):
            return np.full(self.n, expression.value)
        if isinstance(expression, Tokens):
            total = np.zeros(self.n, dtype=np.int64)
            for name in expression.places:
                total = total + self.tokens(name, expression.value)
            return total
        if isinstance(expression, Clock):
            return self.clock()
        if isinstance(expression, Sum):
            total = np.zeros(self.n, dtype=np.int64)
            for term in expression.terms:
                total = total + self.numeric(term)
            return total
        raise InputError(f"unknown numeric expression {expression!r}")

    def truth(self, formula: Formula) -> np.ndarray:
        """Where a propositional formula holds (see :func:`truth`)."""
        if isinstance(formula, Bool):
            return np.full(self.n, formula.value, dtype=bool)
        if isinstance(formula, Compare):
            return np.asarray(COMPARISONS[formula.op](self.numeric(formula.left),
                                                   self.numeric(formula.right)), dtype=bool)
        if isinstance(formula, Fireable):
            out = np.zeros(self.n, dtype=bool)
            for name in formula.transitions:
                out = out | self.fireable(name)
            return out
        if isinstance(formula, Deadlock):
            return self.deadlock()
        if isinstance(formula, Predicate):
            space = self.space
            timed = space.clock_mode == "absolute"
            return np.array([bool(formula.function(space.marking(s),
                                                   space.clock(s) if timed else 0.0))
                             for s in range(self.n)], dtype=bool)
        if isinstance(formula, Not):
            return ~self.truth(formula.operand)
        if isinstance(formula, And):
            out = np.ones(self.n, dtype=bool)
            for operand in formula.operands:
                out = out & self.truth(operand)
            return out
        if isinstance(formula, Or):
            out = np.zeros(self.n, dtype=bool)
            for operand in formula.operands:
                out = out | self.truth(operand)
            return out
        if isinstance(formula, A | E):
            raise InputError(f"truth() evaluates atoms and booleans; {type(formula).__name__}"
                             "(...) needs a model checker (tcpn.petrinets.checking.check.check)")
        raise InputError(f"{type(formula).__name__} is a temporal operator: it needs a path "
                         "quantifier (A or E) above it")


K = TypeVar("K")


class _Recent(Generic[K]):
    """A dict keeping only the ``size`` most recently stored columns."""

    def __init__(self, size: int):
        self.size = size
        self.items: dict[K, np.ndarray] = {}

    def get(self, key: K) -> np.ndarray | None:
        return self.items.get(key)

    def put(self, key: K, value: np.ndarray) -> None:
        self.items[key] = value
        while len(self.items) > self.size:
            del self.items[next(iter(self.items))]


def _some(names: Any) -> str:
    """The first few names, sorted, for an error message."""
    ordered = sorted(names)
    return ", ".join(ordered[:8]) + (", ..." if len(ordered) > 8 else "")
