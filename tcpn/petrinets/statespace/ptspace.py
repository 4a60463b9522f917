"""Reachable markings of a place/transition net, explored with integer vectors and NumPy.

A P/T net (every place holds plain black tokens, every arc carries a constant weight, no
guard, no time; read, inhibitor and reset arcs allowed) needs none of the coloured engine's
bindings: a marking is a vector of token counts, a transition ``t`` is enabled where
``m >= pre[t]`` (and below its inhibitor thresholds), and firing adds ``post[t] - pre[t]``.
:func:`explore_pt` runs a breadth-first search that expands a batch of states at once
and recognises markings already seen by their bytes in a dictionary (the vectors shrink to
one byte per place while every count stays below 256, and widen when one does not).
Enabling is incremental: a state enables what its breadth-first parent enabled (the
parent's arc labels, kept anyway) except among the transitions reading a place the
parent's firing changed, which alone are tested again, all (state, transition) pairs of a
batch at once; where firings change places read by most transitions, testing each
candidate transition on the whole batch is cheaper and is done instead.

The result, :class:`PTStateSpace`, answers what :class:`~tcpn.petrinets.statespace.space.StateSpace`
answers (``len``, ``successors``, ``dead_markings``, ``path_to``, ``marking``...) and adds
the vectorised views model checkers want: the marking matrix (one row per state),
:meth:`PTStateSpace.tokens` and :meth:`PTStateSpace.enabled` over every state at once.

>>> from tcpn.petrinets.examples import dining_philosophers
>>> space = explore_pt(pt_net(dining_philosophers(3)))
>>> len(space), space.n_edges, space.complete
(4, 6, True)
"""

from __future__ import annotations

import sys
import time as wallclock
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csr_array

from tcpn.errors import InputError
from tcpn.petrinets.colours import UnitSet
from tcpn.petrinets.net import ArcKind, PetriNet, Token
from tcpn.petrinets.statespace.graph import edge_sources
from tcpn.petrinets.statespace.memory import MemoryBudget
from tcpn.petrinets.statespace.paths import Step

__all__ = ["PTNet", "PTStateSpace", "explore_pt", "is_pt_net", "pt_net"]

#: How many states one batch of the search expands at most.
BATCH_STATES = 4096
#: Bytes of successor rows (int64, one per edge, a column per place) a batch holds before
#: it interns them: 4,096 states of a 6,000-place net with 10 successors each would hold
#: 2 GB at once.
SUCCESSOR_BYTES = 16 << 20
_DTYPES = (np.uint8, np.uint16, np.uint32, np.int64)


@dataclass(frozen=True)
class PTNet:
    """A P/T net as sparse matrices (:class:`scipy.sparse.csr_array`, dense arrays are
    converted): ``pre``/``post``/``test`` weights and inhibitor thresholds (0 for none),
    ``reset`` places, one row per transition and one column per place. Sparse because a
    contest model with 10^5 transitions and places would need 80 GB per dense int64
    matrix, for a few arcs per transition.

    ``places``/``transitions`` are the names formulas use (the contest's PNML ids);
    ``net_places``/``net_transitions`` the names of the :class:`PetriNet` the matrices
    were read from, which evidence steps carry so that ``Simulator.fire`` replays them
    (empty: the same names).
    """

    places: tuple[str, ...]
    transitions: tuple[str, ...]
    pre: Any
    post: Any
    test: Any
    inhibit: Any
    reset: Any
    initial: np.ndarray
    net_places: tuple[str, ...] = ()
    net_transitions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        def sparse(matrix: Any, dtype: Any = np.int64) -> Any:
            found = csr_array(matrix, dtype=dtype)
            found.eliminate_zeros()
            found.sort_indices()
            return found

        for name in ("pre", "post", "test", "inhibit"):
            object.__setattr__(self, name, sparse(getattr(self, name)))
        object.__setattr__(self, "reset", sparse(self.reset, bool))
        # What enabling needs per transition: (places, least counts) and inhibitors; what
        # firing changes: (places, deltas) and the reset places with what they get.
        need, delta = sparse(self.pre.maximum(self.test)), sparse(self.post - self.pre)
        rules, changes = [], []
        for t in range(len(self.transitions)):
            cols, least = _row(need, t)
            inh, below = _row(self.inhibit, t)
            rules.append((cols, least, inh, below))
            resets = _row(self.reset, t)[0]
            posted = dict(zip(*_row(self.post, t), strict=True))
            changes.append((*_row(delta, t), resets,
                            np.array([posted.get(p, 0) for p in resets], dtype=np.int64)))
        object.__setattr__(self, "_rules", rules)
        object.__setattr__(self, "_changes", changes)
        # the same as whole matrices, for testing and firing many (state, transition)
        # pairs at once; the reset places' new counts aligned with the reset matrix
        object.__setattr__(self, "_need", need)
        object.__setattr__(self, "_delta", delta)
        object.__setattr__(self, "_posted", np.concatenate(
            [posted for *_, posted in changes] or [np.zeros(0, dtype=np.int64)]))
        # incremental enabling: firing t can change the enabledness of exactly the
        # transitions reading (input, read or inhibitor arc) a place t changes
        changed = csr_array(abs(delta).astype(bool).astype(np.int8)
                            + self.reset.astype(np.int8)).astype(bool).astype(np.int32)
        readers = csr_array(need.astype(bool).astype(np.int8)
                            + self.inhibit.astype(bool).astype(np.int8)).astype(bool)
        object.__setattr__(self, "_changed", changed)
        object.__setattr__(self, "_readers", csr_array(readers.T.astype(np.int32)))
        # per transition, at most how many transitions its firing makes to test again
        object.__setattr__(self, "_retests", changed @ np.diff(self._readers.indptr))  # type: ignore[attr-defined]
        # which places each transition needs marked, to skip at once the transitions a
        # batch of states cannot enable (a ring of n places would otherwise test n
        # transitions per state: O(states x transitions))
        needs = csr_array(need, dtype=np.int32)
        needs.data[:] = 1
        object.__setattr__(self, "_needed_by", needs.tocsc())  # per place, its transitions
        object.__setattr__(self, "_n_needs", np.diff(needs.indptr))
        object.__setattr__(self, "_need_nothing", np.flatnonzero(np.diff(needs.indptr) == 0))
        touched = csr_array((abs(need) + abs(delta) + abs(self.inhibit)).astype(bool)
                            .astype(np.int8) + self.reset.astype(np.int8))
        object.__setattr__(self, "_touches", [
            touched.indices[touched.indptr[t]:touched.indptr[t + 1]].astype(np.int64)
            for t in range(len(self.transitions))])

    def candidates(self, marked: np.ndarray) -> np.ndarray:
        """The transitions (ascending) whose every input and read place is in ``marked``
        (ascending place numbers): the only ones a state marking no other place may
        enable. The cost grows with the arcs of the marked places, not with the net."""
        by_place = self._needed_by  # type: ignore[attr-defined]
        starts, stops = by_place.indptr[marked], by_place.indptr[marked + 1]
        if len(marked):
            touching = np.concatenate([by_place.indices[a:b]
                                       for a, b in zip(starts, stops, strict=True)])
        else:
            touching = np.zeros(0, dtype=np.int64)
        found, hits = np.unique(touching, return_counts=True)
        whole = found[hits == self._n_needs[found]]  # type: ignore[attr-defined]
        return np.union1d(whole, self._need_nothing).astype(np.int64)  # type: ignore[attr-defined]

    def touched(self, transitions: np.ndarray) -> np.ndarray:
        """The places (ascending) that enabling or firing ``transitions`` reads or writes."""
        touches = self._touches  # type: ignore[attr-defined]
        if not len(transitions):
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate([touches[t] for t in transitions.tolist()]))

    @property
    def rules(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Per transition: the places enabling reads, their least counts, the inhibitor
        places and their thresholds (enabled only below them)."""
        return self._rules  # type: ignore[attr-defined]

    def enabled(self, markings: np.ndarray, t: int,
                columns: np.ndarray | None = None) -> np.ndarray:
        """Which rows of ``markings`` (states x places, or states x ``columns``: the
        ascending places the rows hold, every place ``t`` touches among them) enable
        transition ``t``."""
        cols, least, inh, below = self.rules[t]
        if columns is not None:
            cols, inh = np.searchsorted(columns, cols), np.searchsorted(columns, inh)
        ok = np.all(markings[:, cols] >= least, axis=1) if len(cols) else \
            np.ones(len(markings), dtype=bool)
        if len(inh):
            ok &= np.all(markings[:, inh] < below, axis=1)
        return ok

    def affected(self, fired: np.ndarray) -> Any:
        """Per entry of ``fired`` (transition numbers), a row of a CSR array (entries x
        transitions) marking the transitions whose enabledness firing it may change: those
        with an input, read or inhibitor arc on a place it changes. Every other transition
        is enabled after the firing exactly where it was before."""
        return self._changed[fired] @ self._readers  # type: ignore[attr-defined]

    def retests(self, fired: np.ndarray) -> np.ndarray:
        """Per entry of ``fired``, at most how many transitions :meth:`affected` marks
        (arcs from the places it changes to their readers, counted with repeats)."""
        return self._retests[fired]  # type: ignore[attr-defined]

    def enabled_pairs(self, markings: np.ndarray, rows: np.ndarray, transitions: np.ndarray,
                      columns: np.ndarray | None = None) -> np.ndarray:
        """Whether row ``rows[i]`` of ``markings`` enables ``transitions[i]``, for every
        ``i`` at once (``columns`` as for :meth:`enabled`, holding every place the
        transitions read)."""
        ok = np.ones(len(rows), dtype=bool)
        for matrix, low in ((self._need, True), (self.inhibit, False)):  # type: ignore[attr-defined]
            owner, at = _spans(matrix.indptr, transitions)
            places = matrix.indices[at]
            if columns is not None:
                places = np.searchsorted(columns, places)
            counts = markings[rows[owner], places]
            failed = counts < matrix.data[at] if low else counts >= matrix.data[at]
            ok[owner[failed]] = False
        return ok

    def fire_pairs(self, markings: np.ndarray, rows: np.ndarray, transitions: np.ndarray,
                   columns: np.ndarray | None = None) -> np.ndarray:
        """The markings (int64) after firing ``transitions[i]`` in row ``rows[i]`` of
        ``markings``, for every ``i`` at once (as :meth:`fire`)."""
        after = markings[rows].astype(np.int64, copy=False)  # the indexing copied
        delta, reset = self._delta, self.reset  # type: ignore[attr-defined]
        owner, at = _spans(delta.indptr, transitions)
        places = delta.indices[at]
        if columns is not None:
            places = np.searchsorted(columns, places)
        after[owner, places] += delta.data[at]
        owner, at = _spans(reset.indptr, transitions)
        if len(at):
            places = reset.indices[at]
            if columns is not None:
                places = np.searchsorted(columns, places)
            after[owner, places] = self._posted[at]  # type: ignore[attr-defined]
        return after

    def fire(self, markings: np.ndarray, t: int,
             columns: np.ndarray | None = None) -> np.ndarray:
        """The markings after firing ``t`` in each row (int64; enabledness not checked;
        ``columns`` as for :meth:`enabled`)."""
        cols, deltas, resets, posted = self._changes[t]  # type: ignore[attr-defined]
        if columns is not None:
            cols, resets = np.searchsorted(columns, cols), np.searchsorted(columns, resets)
        after = markings.astype(np.int64)
        after[:, cols] += deltas
        if len(resets):
            after[:, resets] = posted
        return after


def _row(matrix: Any, t: int) -> tuple[np.ndarray, np.ndarray]:
    """The columns and values of row ``t`` of a CSR matrix."""
    start, stop = matrix.indptr[t], matrix.indptr[t + 1]
    return matrix.indices[start:stop].astype(np.int64), matrix.data[start:stop]


def _spans(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries of ``rows`` of a CSR matrix with row pointers ``indptr``, one after
    the other: for each, the position in ``rows`` it belongs to and its position in the
    matrix's ``indices``/``data``."""
    starts = indptr[rows].astype(np.int64)
    lengths = indptr[rows + 1].astype(np.int64) - starts
    owner = np.repeat(np.arange(len(rows)), lengths)
    ends = np.cumsum(lengths)
    at = np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(starts - ends + lengths,
                                                                 lengths)
    return owner, at


def is_pt_net(net: PetriNet) -> bool:
    """Whether :func:`pt_net` can read ``net`` (black tokens, constant weights, untimed,
    no guard, one priority)."""
    try:
        pt_net(net)
    except InputError:
        return False
    return True


def pt_net(net: PetriNet, place_names: Sequence[str] | None = None,
           transition_names: Sequence[str] | None = None) -> PTNet:
    """The matrices of a P/T net; ``place_names``/``transition_names`` rename the net's
    places and transitions in order (the contest names them by their PNML ids).

    Raises :class:`~tcpn.errors.InputError` naming the element that makes ``net`` more
    than a P/T net.
    """
    places = list(net.places)
    transitions = list(net.transitions)
    for name, place in net.places.items():
        if not isinstance(place.colour, UnitSet) or place.colour.is_timed:
            raise InputError(f"place {name}: colour {place.colour.name} is not plain black "
                             "tokens; a P/T exploration needs untimed unit places")
    priorities = {t.priority for t in net.transitions.values()}
    for name, transition in net.transitions.items():
        if transition.guard is not None or transition.delay not in (None, 0) or \
                transition.action is not None or len(priorities) > 1:
            raise InputError(f"transition {name}: a guard, delay, code action or priority "
                             "is beyond a P/T net")
    n_t, n_p = len(transitions), len(places)
    p_index = {p: i for i, p in enumerate(places)}
    t_index = {t: i for i, t in enumerate(transitions)}
    entries: dict[ArcKind, dict[tuple[int, int], int]] = {kind: {} for kind in ArcKind}
    for arc in net.arcs:
        if not isinstance(arc.count, int) or arc.when is not None or arc.delay is not None \
                or arc.multiset \
                or arc.inscription not in (None, "()"):
            raise InputError(f"{arc.where}: a P/T arc has a constant weight and no condition")
        cell, found = (t_index[arc.transition], p_index[arc.place]), entries[arc.kind]
        if arc.kind is ArcKind.RESET:
            found[cell] = 1
        elif arc.kind is ArcKind.INHIBITOR:
            found[cell] = min(found.get(cell, arc.count), arc.count)
        else:
            found[cell] = found.get(cell, 0) + arc.count
    matrices = {kind: _sparse(found, (n_t, n_p)) for kind, found in entries.items()}
    initial = np.array([len(list(net.places[p].initial)) for p in places], dtype=np.int64)
    return PTNet(tuple(place_names or places), tuple(transition_names or transitions),
                 matrices[ArcKind.INPUT], matrices[ArcKind.OUTPUT], matrices[ArcKind.READ],
                 matrices[ArcKind.INHIBITOR], matrices[ArcKind.RESET], initial,
                 tuple(places), tuple(transitions))


def _sparse(entries: dict[tuple[int, int], int], shape: tuple[int, int]) -> Any:
    """A CSR matrix of ``shape`` holding ``entries`` ((row, column) -> value)."""
    from scipy.sparse import csr_array

    rows = np.fromiter((r for r, _ in entries), dtype=np.int64, count=len(entries))
    cols = np.fromiter((c for _, c in entries), dtype=np.int64, count=len(entries))
    values = np.fromiter(entries.values(), dtype=np.int64, count=len(entries))
    return csr_array((values, (rows, cols)), shape=shape)


def _dtype_for(bound: int) -> Any:
    for dtype in _DTYPES:
        if bound <= np.iinfo(dtype).max:
            return dtype
    raise InputError(f"a place holds {bound} tokens, more than 64-bit counts hold")


#: :meth:`PTStateSpace.enabled` reads the arcs' labels unless the states have more than
#: this many arcs each per transition looked for: then testing those transitions on the
#: markings (a few columns each) is cheaper than a pass over every arc.
LABEL_PASSES = 4
#: rows of dense markings read at a time (token sums, the copy by place)
BLOCK_ROWS = 1 << 16
#: dense markings are also kept by place when that copy takes at most this fraction (its
#: inverse) of their bytes
PLACE_MAJOR_SHARE = 2


class PTStateSpace:
    """The reachability graph of a P/T net: markings as rows of :attr:`markings` (a NumPy
    matrix, or a SciPy CSR matrix for a net of more than :data:`WIDE_PLACES` places), edges
    in compressed rows (:attr:`indptr`, :attr:`targets`, :attr:`labels` = transition
    index)."""

    def __init__(self, net: PTNet, markings: Any, indptr: np.ndarray,
                 targets: np.ndarray, labels: np.ndarray, parents: np.ndarray,
                 parent_labels: np.ndarray, complete: bool, seconds: float, reason: str,
                 n_expanded: int | None = None):
        self.net = net
        #: states 0 .. n_expanded - 1 had their successors computed (all, when complete)
        self.n_expanded = int(markings.shape[0]) if n_expanded is None else n_expanded
        self.markings = markings
        self.indptr, self.targets, self.labels = indptr, targets, labels
        self.parents, self.parent_labels = parents, parent_labels
        self.complete, self.seconds, self.reason = complete, seconds, reason
        #: what the exploration's stores held per state at their largest (the marking
        #: store with its spare capacity, the dictionary of markings, the edges)
        self.peak_bytes_per_state = 0.0
        self._place_index = {p: i for i, p in enumerate(net.places)}
        self._transition_index = {t: i for i, t in enumerate(net.transitions)}
        self._by_place: Any = None  # see _place_major()

    def __len__(self) -> int:
        return int(self.markings.shape[0])

    def __repr__(self) -> str:
        return (f"<PTStateSpace {len(self)} states, {self.n_edges} edges"
                f"{'' if self.complete else ', incomplete'}>")

    @property
    def n_states(self) -> int:
        """Number of states (reachable markings) found."""
        return len(self)

    @property
    def n_edges(self) -> int:
        """Number of arcs (firings) between them."""
        return len(self.targets)

    @property
    def bytes_per_state(self) -> float:
        """Bytes the result holds per state: markings, edges, the breadth-first tree."""
        arrays = (self.indptr, self.targets, self.labels, self.parents, self.parent_labels)
        marks = self.markings
        held = marks.data.nbytes + marks.indices.nbytes + marks.indptr.nbytes \
            if isinstance(marks, csr_array) else marks.nbytes
        return (held + sum(a.nbytes for a in arrays)) / max(len(self), 1)

    @property
    def states_per_s(self) -> float:
        """Exploration speed."""
        return len(self) / self.seconds if self.seconds > 0 else float("inf")

    def place_index(self, place: str) -> int:
        """The column of a place; :class:`~tcpn.errors.InputError` if there is none."""
        if place not in self._place_index:
            raise InputError(f"unknown place {place!r}")
        return self._place_index[place]

    def transition_index(self, transition: str) -> int:
        """The number of a transition; :class:`~tcpn.errors.InputError` if there is none."""
        if transition not in self._transition_index:
            raise InputError(f"unknown transition {transition!r}")
        return self._transition_index[transition]

    def tokens(self, places: Sequence[str]) -> np.ndarray:
        """The summed token counts of ``places`` in every state (int64).

        Read from the markings by place (:meth:`_place_major`) when that copy is small,
        else a block of rows at a time in the stored width: never a states x places int64
        copy (a million states over a hundred places would be 0.8 GB)."""
        cols = np.array([self.place_index(p) for p in places], dtype=np.int64)
        by_place = self._place_major()
        if by_place is not None:
            return np.asarray(by_place[:, cols].sum(axis=1, dtype=np.int64)).ravel()
        total = np.empty(len(self), dtype=np.int64)
        for start in range(0, len(self), BLOCK_ROWS):
            block = self.markings[start:start + BLOCK_ROWS]
            np.take(block, cols, axis=1).sum(axis=1, dtype=np.int64,
                                             out=total[start:start + len(block)])
        return total

    def columns(self, places: np.ndarray, start: int = 0, stop: int | None = None
                ) -> np.ndarray:
        """The counts of ``places`` (column numbers) in the states ``start:stop`` (from
        ``start`` on by default), dense (states x places)."""
        rows = slice(start, len(self) if stop is None else stop)
        by_place = self._place_major()
        if by_place is not None:
            chosen = by_place[:, places]
            whole = rows.start == 0 and rows.stop == len(self)
            return np.asarray((chosen if whole else chosen[rows]).toarray(), dtype=np.int64)
        block = self.markings[rows]
        if isinstance(block, csr_array):
            return np.asarray(block[:, places].toarray(), dtype=np.int64)
        # ``take`` along the rows copies a C-ordered matrix's columns several times faster
        # than fancy indexing does
        return np.take(block, places, axis=1).astype(np.int64, copy=False)

    def _place_major(self) -> Any:
        """The markings as a sparse matrix by place (CSC), made at the first reading, or
        ``None`` where dense rows are read instead.

        A formula's atoms read a few places of every state, many times: by place, an atom
        costs the states marking its places; in dense rows, a strided pass over every
        state. A dense store gets the copy only when it takes at most
        1/:data:`PLACE_MAJOR_SHARE` of the rows' bytes (sparsely marked nets, as most
        1-safe ones are), built a block of rows at a time."""
        if self._by_place is None:
            marks = self.markings
            if isinstance(marks, csr_array):
                self._by_place = marks.tocsc()
            elif np.count_nonzero(marks) * (4 + marks.itemsize) * PLACE_MAJOR_SHARE \
                    <= marks.nbytes:
                from scipy.sparse import vstack

                self._by_place = vstack([csr_array(marks[start:start + BLOCK_ROWS])
                                         for start in range(0, len(self), BLOCK_ROWS)],
                                        format="csc")
            else:
                self._by_place = False
        return self._by_place if self._by_place is not False else None

    def row(self, state: int) -> tuple[np.ndarray, np.ndarray]:
        """The places a state marks (ascending column numbers) and their counts."""
        if isinstance(self.markings, csr_array):
            start, stop = self.markings.indptr[state], self.markings.indptr[state + 1]
            return (self.markings.indices[start:stop].astype(np.int64),
                    self.markings.data[start:stop].astype(np.int64))
        full = self.markings[state]
        marked = np.flatnonzero(full)
        return marked, full[marked].astype(np.int64)

    def token_statistics(self) -> tuple[int, int, bool]:
        """The most tokens on one place in one state, the most in one state, and whether
        some place holds the same count in every state."""
        marks = self.markings
        if not len(self) or not marks.shape[1]:
            return 0, 0, False
        if isinstance(marks, csr_array):
            by_place = marks.tocsc()
            held = np.diff(by_place.indptr)  # states marking each place
            lowest = np.zeros(marks.shape[1], dtype=np.int64)
            full = held == len(self)  # a place marked in every state: its least count
            highest = np.zeros(marks.shape[1], dtype=np.int64)
            for p in np.flatnonzero(held):
                values = by_place.data[by_place.indptr[p]:by_place.indptr[p + 1]]
                highest[p] = values.max()
                lowest[p] = values.min() if full[p] else 0
            per_state = np.asarray(marks.sum(axis=1)).ravel()
            return int(highest.max()), int(per_state.max()), bool((lowest == highest).any())
        return (int(marks.max()), int(marks.sum(axis=1, dtype=np.int64).max()),
                bool((marks.min(axis=0) == marks.max(axis=0)).any()))

    def enabled(self, transitions: Sequence[str]) -> np.ndarray:
        """Whether any of ``transitions`` is enabled, in every state.

        An expanded state enables exactly the transitions its arcs carry: with many
        transitions to look for, one pass over the arcs' labels answers for all of them
        (instead of one pass over the markings per transition); the states not expanded
        (a budget's frontier) are tested on their markings."""
        found = np.zeros(len(self), dtype=bool)
        wanted = sorted({self.transition_index(name) for name in transitions})
        tested = 0
        if len(wanted) * len(self) * LABEL_PASSES >= self.n_edges:
            is_wanted = np.zeros(len(self.net.transitions), dtype=bool)
            is_wanted[wanted] = True
            hits = np.flatnonzero(is_wanted[self.labels])
            found[edge_sources(self.indptr, hits)] = True
            tested = self.n_expanded
        for t in wanted if tested < len(self) else ():
            places = self.net.touched(np.array([t]))
            found[tested:] |= self.net.enabled(self.columns(places, tested), t, places)
        return found

    def successors(self, state: int) -> list[int]:
        """The targets of the state's arcs (with repeats for parallel arcs)."""
        return self.targets[self.indptr[state]:self.indptr[state + 1]].tolist()

    def out_degree(self) -> np.ndarray:
        """Number of arcs leaving each state."""
        return np.diff(self.indptr)

    def dead_markings(self) -> list[int]:
        """Expanded states without successors (at a budget's frontier a state not expanded
        is not known to be dead)."""
        return np.flatnonzero(self.out_degree()[:self.n_expanded] == 0).tolist()

    def marking(self, state: int) -> dict[str, list[Token]]:
        """The marking of a state as :meth:`StateSpace.marking` gives it."""
        counts = dict(zip(*self.row(state), strict=True))
        return {p: [Token((), 0.0)] * int(counts.get(i, 0))
                for i, p in enumerate(self.net.places)}

    def counts(self, state: int) -> dict[str, int]:
        """The non-zero token counts of a state."""
        return {self.net.places[int(i)]: int(n) for i, n in zip(*self.row(state), strict=True)}

    def path_to(self, state: int) -> list[tuple[str, dict[str, Any]]]:
        """A shortest firing sequence from the initial marking, as ``(transition, {})``
        with the net's transition names (:meth:`Simulator.fire
        <tcpn.petrinets.engine.simulator.Simulator.fire>` replays it)."""
        steps: list[tuple[str, dict[str, Any]]] = []
        names = self.net.net_transitions or self.net.transitions
        while state > 0:
            steps.append((names[int(self.parent_labels[state])], {}))
            state = int(self.parents[state])
        return steps[::-1]

    def path_steps(self, edges: Sequence[int]) -> list[Step]:
        """The steps of a path given by edge indices (positions in :attr:`targets`): the
        net's transition name, the empty binding of a P/T transition and the marking
        after, its non-empty places holding black tokens ``()``, in the net's names, as
        :meth:`Simulator.fire <tcpn.petrinets.engine.simulator.Simulator.fire>` replays them.

        >>> from tcpn.petrinets.examples import dining_philosophers
        >>> space = explore_pt(pt_net(dining_philosophers(3)))
        >>> space.path_steps([0])[0].transition, space.path_steps([0])[0].marking["eat0"]
        ('take0', [()])
        """
        transitions = self.net.net_transitions or self.net.transitions
        places = self.net.net_places or self.net.places
        steps = []
        for edge in edges:
            marked, counts = self.row(int(self.targets[edge]))
            steps.append(Step(transitions[int(self.labels[edge])], {},
                              {places[int(i)]: [()] * int(n)
                               for i, n in zip(marked, counts, strict=True)}))
        return steps

    def adjacency(self) -> tuple[np.ndarray, np.ndarray]:
        """``(indptr, targets)``: state ``s``'s arcs go to ``targets[indptr[s]:indptr[s + 1]]``."""
        return self.indptr, self.targets

    def matrix(self) -> Any:
        """The adjacency matrix as a SciPy CSR array (entry = number of arcs)."""
        from scipy.sparse import csr_array
        n = len(self)
        return csr_array((np.ones(len(self.targets), dtype=np.int32), self.targets,
                          self.indptr), shape=(n, n))


class _DenseMarkings:
    """The markings found so far as rows of one matrix (a column per place), known by
    their bytes; the counts shrink to the narrowest integer that holds them. For nets of
    up to :data:`WIDE_PLACES` places."""

    def __init__(self, initial: np.ndarray, number: Any):
        self.dtype = _dtype_for(int(initial.max(initial=0)))
        self.capacity = 1024
        self.store = np.zeros((self.capacity, len(initial)), dtype=self.dtype)
        self.store[0] = initial
        self.index: dict[Any, int] = {self.store[0].tobytes(): 0}
        self.number = number

    def __len__(self) -> int:
        return len(self.index)

    @property
    def nbytes(self) -> int:
        return int(self.store.nbytes) + sys.getsizeof(self.index) + len(self.index) * (
            sys.getsizeof(next(iter(self.index))) + 28)

    def growth_bytes(self, more: int) -> int:
        """Bytes the store would allocate to take ``more`` states."""
        return int(self.store.nbytes) if len(self.index) + more > self.capacity else 0

    def finish_bytes(self) -> int:
        """Bytes :meth:`finish` allocates (the markings' copy, the store still held)."""
        return len(self.index) * self.store.shape[1] * self.store.itemsize

    def marked(self, start: int, stop: int) -> np.ndarray:
        """The places (ascending) one of the states ``start``..``stop-1`` marks."""
        return np.flatnonzero(self.store[start:stop].any(axis=0))

    def rows(self, start: int, stop: int, columns: np.ndarray | None) -> np.ndarray:
        """The markings of states ``start``..``stop-1`` over every place."""
        return self.store[start:stop]

    def intern(self, successors: np.ndarray, columns: np.ndarray | None) -> np.ndarray:
        """The state numbers of ``successors`` (int64 rows over every place)."""
        top = int(successors.max())
        if top > np.iinfo(self.dtype).max:
            self.dtype = _dtype_for(top)
            self.store = self.store.astype(self.dtype)
            self.index = {self.store[i].tobytes(): i for i in range(len(self.index))}
        successors = np.ascontiguousarray(successors.astype(self.dtype))
        width = successors.shape[1] * successors.itemsize
        keys: list[Any] = successors.view(np.dtype((np.void, width))).ravel().tolist() \
            if width else [b""] * len(successors)
        before = len(self.index)
        setdefault, index = self.index.setdefault, self.index
        targets: np.ndarray = np.array([setdefault(k, len(index)) for k in keys],
                                       dtype=self.number)
        fresh = np.flatnonzero(targets >= before)
        if len(fresh):
            new_ids, first = np.unique(targets[fresh], return_index=True)
            while len(self.index) > self.capacity:
                self.capacity *= 2
                grown = np.zeros((self.capacity, self.store.shape[1]), dtype=self.dtype)
                grown[:before] = self.store[:before]
                self.store = grown
            self.store[new_ids] = successors[fresh[first]]
        return targets

    def finish(self) -> np.ndarray:
        """The markings matrix (states x places), the index released."""
        n = len(self.index)
        self.index = {}
        return self.store[:n].copy()


class _SparseMarkings:
    """The markings found so far by their marked places only: per state the ascending
    place numbers (int32) and their counts (int64), its key those bytes. For nets wider
    than :data:`WIDE_PLACES` places, where a row per state over every place would take
    O(states x places) (10^5 states of a 65,000-place contest model: 6.5 GB)."""

    def __init__(self, initial: np.ndarray, number: Any):
        marked = np.flatnonzero(initial)
        self.places: list[np.ndarray] = [marked.astype(np.int32)]
        self.counts: list[np.ndarray] = [initial[marked].astype(np.int64)]
        self.index: dict[bytes, int] = {self._key(self.places[0], self.counts[0]): 0}
        self.number = number
        self.width = len(initial)
        self._bytes = 0

    @staticmethod
    def _key(places: np.ndarray, counts: np.ndarray) -> bytes:
        return places.tobytes() + counts.tobytes()

    def __len__(self) -> int:
        return len(self.index)

    @property
    def nbytes(self) -> int:
        return self._bytes * 2 + len(self.index) * 200  # arrays, keys, dict and objects

    def growth_bytes(self, more: int) -> int:
        return 0

    def marked(self, start: int, stop: int) -> np.ndarray:
        """The places (ascending) one of the states ``start``..``stop-1`` marks."""
        return np.unique(np.concatenate(self.places[start:stop])).astype(np.int64)

    def rows(self, start: int, stop: int, columns: np.ndarray | None) -> np.ndarray:
        """The markings of states ``start``..``stop-1`` over ``columns`` (ascending, every
        place the states mark among them)."""
        assert columns is not None
        out = np.zeros((stop - start, len(columns)), dtype=np.int64)
        for row, (places, counts) in enumerate(zip(self.places[start:stop],
                                                   self.counts[start:stop], strict=True)):
            out[row, np.searchsorted(columns, places)] = counts
        return out

    def intern(self, successors: np.ndarray, columns: np.ndarray | None) -> np.ndarray:
        """The state numbers of ``successors`` (int64 rows over ``columns``)."""
        assert columns is not None
        rows, cols = np.nonzero(successors)
        places = columns[cols].astype(np.int32)
        counts = successors[rows, cols].astype(np.int64)
        bounds = np.searchsorted(rows, np.arange(len(successors) + 1))
        targets = np.empty(len(successors), dtype=self.number)
        index = self.index
        for j in range(len(successors)):
            start, stop = bounds[j], bounds[j + 1]
            key = self._key(places[start:stop], counts[start:stop])
            found = index.get(key)
            if found is None:
                found = index[key] = len(index)
                self.places.append(places[start:stop].copy())
                self.counts.append(counts[start:stop].copy())
                self._bytes += 12 * int(stop - start) + 2 * 112
            targets[j] = found
        return targets

    def finish_bytes(self) -> int:
        """Bytes :meth:`finish` allocates (the places and counts joined, their rows)."""
        return self._bytes + 8 * len(self.places)

    def finish(self) -> Any:
        """The markings as a sparse matrix (states x places), the index released."""
        self.index = {}
        lengths = np.fromiter((len(p) for p in self.places), dtype=np.int64,
                              count=len(self.places))
        indptr = np.zeros(len(self.places) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        places = np.concatenate(self.places) if self.places else np.zeros(0, np.int32)
        counts = np.concatenate(self.counts) if self.counts else np.zeros(0, np.int64)
        self.places, self.counts = [], []
        return csr_array((counts, places, indptr), shape=(len(indptr) - 1, self.width))


#: What testing enabledness costs, to choose per batch between testing (state,
#: transition) pairs (seconds per pair) and testing every candidate transition on the whole
#: batch (seconds per transition, plus per row and transition); measured on contest models.
PAIR_TEST_S = 2e-7
TRANSITION_TEST_S = 1e-5
ROW_TEST_S = 2e-9
#: Seconds between two readings of the process's memory during a search.
MEMORY_CHECK_S = 0.05
#: Nets with more places than this keep their markings sparse (:class:`_SparseMarkings`).
WIDE_PLACES = 2048
#: How many states one batch expands at most in a net of more than WIDE_PLACES places.
WIDE_BATCH_STATES = 256


def explore_pt(net: PTNet, max_states: int | None = None,
               time_limit_s: float | None = None,
               max_memory_bytes: int | None = None) -> PTStateSpace:
    """Breadth-first reachability graph of ``net`` (see the module docstring).

    With ``max_states`` or ``time_limit_s`` the search stops when either is reached and
    returns what it found with ``complete`` False and ``reason`` naming the budget; so it
    does when the process's resident memory passes ``max_memory_bytes`` (None: half of
    what the process may use, :meth:`~tcpn.petrinets.statespace.memory.MemoryBudget.default`), read
    between batches.
    """
    start = wallclock.perf_counter()
    memory = MemoryBudget.of(max_memory_bytes)
    # state numbers in 4 bytes when the budget keeps them there
    number = np.int32 if max_states is not None and max_states < 2**31 - 2**24 else np.int64
    wide = len(net.places) > WIDE_PLACES
    states: _DenseMarkings | _SparseMarkings = (_SparseMarkings if wide else _DenseMarkings)(
        net.initial, number)
    batch_states = WIDE_BATCH_STATES if wide else BATCH_STATES
    parents, parent_labels = _Growing(number), _Growing(np.int32)
    parents.extend(np.zeros(1, dtype=number))
    parent_labels.extend(np.zeros(1, dtype=np.int32))
    # the edges of the expanded states, by source: state s's transitions (ascending) are
    # labels[starts[s]:starts[s + 1]], which are also the transitions s enables
    starts, labels = _Growing(np.int64), _Growing(np.int32)
    starts.extend(np.zeros(1, dtype=np.int64))
    edge_dst: list[np.ndarray] = []
    expanded, reason, peak, checked, n_edges = 0, "", 0, -MEMORY_CHECK_S, 0

    def intern(successors: np.ndarray, parent_states: np.ndarray, transitions: np.ndarray,
               columns: np.ndarray | None) -> np.ndarray:
        """The state numbers of ``successors``, the new ones recorded with their parents
        and the transitions that reached them."""
        before = len(states)
        targets = states.intern(successors, columns)
        fresh = np.flatnonzero(targets >= before)
        if len(fresh):
            _, first = np.unique(targets[fresh], return_index=True)
            parents.extend(parent_states[fresh[first]].astype(number))
            parent_labels.extend(transitions[fresh[first]])
        return targets

    while expanded < len(states):
        if max_states is not None and len(states) > max_states:
            reason = f"state budget reached: more than {max_states} states"
            break
        if time_limit_s is not None and wallclock.perf_counter() - start > time_limit_s:
            reason = f"time budget reached: {time_limit_s:g} s"
            break
        stop = min(len(states), expanded + batch_states)
        # the store doubles when the batch's successors may not fit: that too in the budget
        # (read at most every MEMORY_CHECK_S: a batch of one state takes microseconds), and
        # what making the result will allocate once the search stops (the copies below):
        # counted only as the search went, or the larger of the two only, a contest
        # model's search stopped at its 6 GB budget and passed it by 250-310 MB making
        # them (FamilyReunion-COL-L00010M0001C001P001G001, its store just doubled)
        growth = states.growth_bytes((stop - expanded) * len(net.transitions))
        if growth or wallclock.perf_counter() - checked >= MEMORY_CHECK_S:
            checked = wallclock.perf_counter()
            result = states.finish_bytes() + n_edges * (np.dtype(number).itemsize + 8) + \
                len(states) * (np.dtype(number).itemsize + 4)
            if memory.exceeded(growth + result):
                reason = memory.reason()
                break
        peak = max(peak, states.nbytes)
        marked = states.marked(expanded, stop)
        candidates = net.candidates(marked)
        # a wide net's batch is held over the places it marks or its candidates touch
        columns = np.union1d(marked, net.touched(candidates)) if wide else None
        batch = states.rows(expanded, stop, columns)
        first_state, expanded = expanded, stop
        rows_on, t_on = _enabled_in_batch(net, batch, first_state, candidates, columns,
                                          parents.view(), parent_labels.view(),
                                          starts.view(), labels.view())
        sources: list[np.ndarray] = []
        fired: list[np.ndarray] = []
        found: list[np.ndarray] = []
        # successor rows in slices of at most SUCCESSOR_BYTES: one transition enabled in a
        # whole batch of a wide net would otherwise allocate batch x places at once
        step = max(1, SUCCESSOR_BYTES // max(1, 8 * batch.shape[1]))
        for low in range(0, len(rows_on), step):
            rows_of, t_of = rows_on[low:low + step], t_on[low:low + step].astype(np.int32)
            sources.append(rows_of)
            fired.append(t_of)
            found.append(intern(net.fire_pairs(batch, rows_of, t_of, columns),
                                rows_of + first_state, t_of, columns))
        if not found:
            starts.extend(np.full(stop - first_state, starts.view()[-1], dtype=np.int64))
            continue
        src = np.concatenate(sources)
        order = np.argsort(src, kind="stable")
        starts.extend(starts.view()[-1]
                      + np.cumsum(np.bincount(src, minlength=stop - first_state)))
        edge_dst.append(np.concatenate(found)[order])
        n_edges += len(order)
        labels.extend(np.concatenate(fired)[order])
    n = len(states)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[:expanded + 1] = starts.view()
    indptr[expanded + 1:] = indptr[expanded]
    targets_all = np.concatenate(edge_dst) if edge_dst else np.zeros(0, dtype=number)
    labels_all = labels.view().copy()
    peak = max(peak, states.nbytes) + 2 * (targets_all.nbytes + labels_all.nbytes)
    space = PTStateSpace(net, states.finish(), indptr, targets_all, labels_all,
                         parents.view().copy(), parent_labels.view().copy(), not reason,
                         wallclock.perf_counter() - start, reason, n_expanded=expanded)
    space.peak_bytes_per_state = peak / n
    return space


def _enabled_in_batch(net: PTNet, batch: np.ndarray, first_state: int,
                      candidates: np.ndarray, columns: np.ndarray | None,
                      parents: np.ndarray, parent_labels: np.ndarray, starts: np.ndarray,
                      labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (row, transition) pairs of ``batch`` (states ``first_state``.. in order) that
    are enabled, sorted by transition then row.

    Incremental: a state other than the initial one enables what its breadth-first parent
    enabled (the parent's edge labels, ``labels[starts[p]:starts[p + 1]]``), except
    that the transitions reading a place the parent's firing changed
    (:meth:`PTNet.affected`) are tested again; those a batch cannot enable (not among
    ``candidates``) need no test. The cost per state follows the arcs the firing touched,
    not the net's size, and nothing is held beyond the edges already kept.
    """
    n_rows, n_transitions = len(batch), len(net.transitions)
    states = np.arange(first_state, first_state + n_rows)
    fired = parent_labels[states].astype(np.int64)
    if first_state == 0 or int(net.retests(fired).sum()) * PAIR_TEST_S > len(candidates) * (
            TRANSITION_TEST_S + n_rows * ROW_TEST_S):
        # the initial state has no parent; and where firings change places read by most
        # transitions (a shared resource), testing each candidate on the whole batch at
        # once is cheaper than testing the many (state, transition) pairs one by one
        enabled = [np.flatnonzero(net.enabled(batch, t, columns)) for t in candidates.tolist()]
        rows = np.concatenate(enabled) if enabled else np.zeros(0, dtype=np.int64)
        transitions = np.repeat(candidates.astype(np.int64), [len(e) for e in enabled])
        return rows, transitions
    affected = net.affected(fired)
    retest_rows = np.repeat(np.arange(n_rows), np.diff(affected.indptr))
    retest = affected.indices.astype(np.int64)
    kept_rows, at = _spans(starts, parents[states].astype(np.int64))
    kept = labels[at].astype(np.int64)
    still = ~np.isin(kept_rows * n_transitions + kept,
                     retest_rows * n_transitions + retest)
    kept_rows, kept = kept_rows[still], kept[still]
    possible = np.zeros(n_transitions, dtype=bool)
    possible[candidates] = True
    possible = possible[retest]
    retest_rows, retest = retest_rows[possible], retest[possible]
    ok = net.enabled_pairs(batch, retest_rows, retest, columns)
    rows = np.concatenate([kept_rows, retest_rows[ok]])
    transitions = np.concatenate([kept, retest[ok]])
    order = np.lexsort((rows, transitions))
    return rows[order], transitions[order]


class _Growing:
    """A one-dimensional array appended to in pieces, its capacity doubled when full (a
    list of pieces would need joining at every read)."""

    def __init__(self, dtype: Any):
        self.data = np.zeros(1024, dtype=dtype)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        """Append ``values``."""
        need = self.size + len(values)
        if need > len(self.data):
            grown = np.zeros(max(need, 2 * len(self.data)), dtype=self.data.dtype)
            grown[:self.size] = self.data[:self.size]
            self.data = grown
        self.data[self.size:need] = values
        self.size = need

    def view(self) -> np.ndarray:
        """The values so far (a view: valid until the next :meth:`extend`)."""
        return self.data[:self.size]
